package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/outfile"
	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/sysfs"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/workload/tpcc"
	"github.com/numalab/numalab/internal/workload/transtats"
)

const evalHelp = `Usage:
  numalab eval [--budget 5m] [--dir DIR] [--store FILE] [--out FILE.html] [--force]

The main job: everything numalab knows how to measure on the embedded
engines, within a wall-clock budget, ending in one report. In order:

  1. the topology (numalab topo);
  2. a quick memory probe (numalab probe mem --quick; the full probe from a
     15m budget on);
  3. tpcc-ro on SQLite (numalab run oltp), streams from 1 to 2x the
     logical CPUs of each placement, SMT on and off where the machine has
     SMT, and where it has more than one NUMA node, data on the first node
     with streams on it (local) and on the node farthest from it by the
     firmware's distances (remote);
  4. transtats P1 and P2 on DuckDB (numalab run report), DOP from 1 to the
     logical CPUs;
  5. the model, calibrated to the OLTP run, and the report: an HTML file
     (--out) and a summary of the findings on stdout. --out is checked
     before anything runs: it replaces an existing file only if numalab
     wrote it (or with --force), and never the store or a database.

--budget sets the data sizes and the cell durations: a larger budget means
more warehouses and rows and longer cells. Every OLTP cell is repeated 3
times where the budget leaves 3 s a cell (else fewer), so that findings
rest on medians over repeats. On a machine of one NUMA node the OLTP step
adds one cell a repeat with a memory-bandwidth neighbour (run oltp
--neighbour): the model, calibrated on the other cells, predicts it from
the latency the neighbour imposed, and eval prints that held-out error
with the model's residuals; on several nodes the held-out cells are the
remote-data ones, predicted from the local ones alone. Each
step is stored as its own run (see 'numalab runs'), with the command line
that runs it again. Everything eval writes goes in --dir (default
numalab-eval, created if missing): the store (numalab.db, unless --store
says otherwise), the databases, kept and reused by the next eval, and the
report (numalab-report.html, unless --out says otherwise). Ctrl-C stops
the current step, keeps what was measured and still writes the report
from it.

Examples:
  numalab eval                      # about 5 minutes
  numalab eval --budget 30m --out big.html
  numalab report --store numalab-eval/numalab.db   # the report again
`

func cmdEval(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "eval", evalHelp)
	// Below the least budget the plan says why (after the preflight).
	budget := rangedDuration(fs, "budget", 5*time.Minute, time.Second, sweep.EvalMaxBudget, "wall-clock budget, 2m to 168h; sets data sizes and cell durations")
	dir := fs.String("dir", "numalab-eval", "`directory` for everything eval writes: store, databases (kept and reused) and report")
	storePath := fs.String("store", "", "results `store` (default numalab.db in --dir)")
	out := fs.String("out", "", "`file` the HTML report is written to (default numalab-report.html in --dir)")
	force := fs.Bool("force", false, "let --out replace a file numalab did not write (never a database or the store)")
	done, bad, err := parseChecked(e, fs, args)
	if done {
		return err
	}
	if err := errors.Join(bad...); err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return badFlag("dir", *dir, fmt.Sprintf("cannot be made a directory: %v", err))
	}
	if *storePath == "" {
		*storePath = filepath.Join(*dir, "numalab.db")
	}
	if *out == "" {
		*out = filepath.Join(*dir, "numalab-report.html")
	}
	outOpt := outfile.Options{Flag: "out", Force: *force, Keep: []string{*storePath}}
	if err := outfile.Check(*out, outfile.HTMLReport, outOpt); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	start := time.Now()
	t, err := topo.FromSysfs("/")
	if err != nil {
		return fmt.Errorf("reading this machine's topology: %w", err)
	}
	preflight.WriteWarnings(e.stdout, preflight.Read(sysfs.New("/"), t))
	plan, err := sweep.PlanEval(*budget, t)
	if err != nil {
		return err
	}
	oltp, rep := evalConfigs(plan, *dir)
	fmt.Fprintf(e.stdout, "numalab eval: %s, budget %v\n", topo.Shape(t), *budget)
	nb := ""
	if plan.Neighbour {
		nb = " (and a cell with a memory-bandwidth neighbour)"
	}
	fmt.Fprintf(e.stdout, "plan: tpcc-ro W=%d, streams %s (at most %d per logical CPU of each placement), placements %q, %v+%v per cell x%d repeats%s; transtats %d rows on DuckDB, DOP %s, %v+%v per cell\n\n",
		plan.Warehouses, intsArg(plan.Streams), plan.StreamsPerCPU, plan.Placements, plan.OLTPWarmup, plan.OLTPCell, plan.Repeat, nb,
		plan.Rows, intsArg(plan.DOPs), plan.QueryWarm, plan.QueryCell)

	// Each step is a numalab command run in-process on a typed
	// configuration; eval notes the run it stored.
	ids := map[string]int64{}
	sub := *e
	sub.stored = func(kind string, id int64) { ids[kind] = id }
	probe := []string{"probe", "mem", "--store", *storePath}
	if plan.ProbeQuick {
		probe = append(probe, "--quick")
	}
	steps := []struct {
		title string
		run   func() error
	}{
		{"memory probe", func() error { return cmdProbeMem(ctx, sub.withArgs(probe), probe[2:]) }},
		{"tpcc-ro on SQLite", func() error { return runOLTPConfig(ctx, &sub, oltp, *storePath, false) }},
		{"transtats on DuckDB", func() error { return runReportConfig(ctx, &sub, rep, "", *storePath, false) }},
	}
	var stepErrs []error
	for i, s := range steps {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(e.stdout, "== %d/%d %s (%v elapsed)\n", i+1, len(steps), s.title, time.Since(start).Round(time.Second))
		if err := s.run(); err != nil {
			fmt.Fprintf(e.stderr, "numalab eval: %s: %v\n", s.title, err)
			stepErrs = append(stepErrs, fmt.Errorf("%s: %w", s.title, err))
		}
		fmt.Fprintln(e.stdout)
		if i == 0 {
			oltp, rep = replanEval(e, plan, *budget, time.Since(start), t, *dir, oltp, rep)
		}
	}

	r, err := evalReport(*storePath, ids)
	if err != nil {
		return errors.Join(append(stepErrs, err)...)
	}
	if err := outfile.Write(*out, outfile.HTMLReport, outOpt, func(w io.Writer) error { return report.WriteHTML(w, r) }); err != nil {
		return errors.Join(append(stepErrs, fmt.Errorf("eval: %w", err))...)
	}
	fmt.Fprintf(e.stdout, "== findings (%v in all)\n", time.Since(start).Round(time.Second))
	if err := report.WriteFindings(e.stdout, r, 10); err != nil {
		return err
	}
	if md := r.Model; md != nil {
		fmt.Fprintln(e.stdout, "\n== model fit (residuals and held-out prediction)")
		for _, c := range md.Checks() {
			fmt.Fprintln(e.stdout, "  "+c)
		}
		if md.HeldOut == nil {
			fmt.Fprintln(e.stdout, "  no held-out prediction: the OLTP run has neither remote-data nor neighbour cells (numalab run oltp --neighbour)")
		}
	}
	fmt.Fprintf(e.stdout, "\nreport: %s\n", *out)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.Join(stepErrs...)
}

// replanEval fits the steps after the probe into what is left of the
// budget when the probe took more than the plan allowed (a loaded machine
// stretches its timed windows): the plan is made again for the budget
// less the overrun, and eval says so. A budget too small to plan again
// keeps the first plan.
func replanEval(e *env, plan sweep.EvalPlan, budget, took time.Duration, t *result.Topology, dir string,
	oltp tpcc.RunConfig, rep transtats.RunConfig) (tpcc.RunConfig, transtats.RunConfig) {
	over := took - plan.ProbeTime()
	if over < 5*time.Second {
		return oltp, rep
	}
	re, err := sweep.PlanEval(budget-over, t)
	if err != nil {
		fmt.Fprintf(e.stdout, "the probe took %v, %v more than planned; the budget left is too small to plan again, so eval may overrun it\n\n",
			took.Round(time.Second), over.Round(time.Second))
		return oltp, rep
	}
	re.ProbeQuick = plan.ProbeQuick
	fmt.Fprintf(e.stdout, "the probe took %v, %v more than planned: tpcc-ro now %v+%v per cell x%d repeats, transtats %v+%v per cell\n\n",
		took.Round(time.Second), over.Round(time.Second), re.OLTPWarmup, re.OLTPCell, re.Repeat, re.QueryWarm, re.QueryCell)
	return evalConfigs(re, dir)
}

// evalConfigs are eval's OLTP and reporting steps, their databases in dir.
func evalConfigs(plan sweep.EvalPlan, dir string) (tpcc.RunConfig, transtats.RunConfig) {
	oltp := tpcc.DefaultRunConfig()
	oltp.DB = filepath.Join(dir, tpcc.DefaultPath("sqlite", plan.Warehouses))
	oltp.Warehouses, oltp.Streams, oltp.Placements = plan.Warehouses, plan.Streams, plan.Placements
	oltp.StreamsPerCPU, oltp.Repeat, oltp.Neighbour = plan.StreamsPerCPU, plan.Repeat, plan.Neighbour
	oltp.Warmup, oltp.Duration = plan.OLTPWarmup, plan.OLTPCell
	rep := transtats.RunConfig{Engine: "duckdb", DB: filepath.Join(dir, transtats.DefaultPath(transtats.DuckDB, plan.Rows)),
		Rows: plan.Rows, Rate: transtats.DefaultRate, Streams: []int{1}, DOP: plan.DOPs, Queries: []string{transtats.P1, transtats.P2},
		Warmup: plan.QueryWarm, Duration: plan.QueryCell, Seed: 1}
	return oltp, rep
}

func intsArg(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// evalReport builds the report from the runs eval stored.
func evalReport(storePath string, ids map[string]int64) (*report.Report, error) {
	if len(ids) == 0 {
		return nil, errors.New("no step stored a run: nothing to report")
	}
	st, err := store.Open(storePath)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var runs []*result.Run
	for _, kind := range []string{result.RunProbeMem, result.RunOLTP, result.RunQueries} {
		if id, ok := ids[kind]; ok {
			r, err := st.Get(id)
			if err != nil {
				return nil, err
			}
			runs = append(runs, r)
		}
	}
	return report.Build(runs)
}
