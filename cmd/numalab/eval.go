package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/outfile"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/sysfs"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/workload/null"
	"github.com/numalab/numalab/internal/workload/tpcc"
	"github.com/numalab/numalab/internal/workload/tpch"
	"github.com/numalab/numalab/internal/workload/transtats"
)

func cmdEval(ctx context.Context, e *env, args []string) error {
	fs := cliflag.New(e.stderr, "eval", helpText("eval"))
	// Below the least budget the plan says why (after the preflight).
	budget := cliflag.RangedDuration(fs, "budget", 5*time.Minute, time.Second, sweep.EvalMaxBudget, "wall-clock budget, 2m to 168h; sets data sizes and cell durations")
	dir := fs.String("dir", "numalab-eval", "`directory` for everything eval writes: store, databases (kept and reused) and report")
	storePath := fs.String("store", "", "results `store` (default numalab.db in --dir)")
	out := fs.String("out", "", "`file` the HTML report is written to (default numalab-report.html in --dir)")
	force := fs.Bool("force", false, "let --out replace a file numalab did not write (never a database or the store)")
	done, bad, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return err
	}
	if err := errors.Join(bad...); err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return cliflag.Bad("dir", *dir, fmt.Sprintf("cannot be made a directory: %v", err))
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
	cfg := evalConfigs(plan, *dir)
	fmt.Fprintf(e.stdout, "numalab eval: %s, budget %v\n", topo.Shape(t), *budget)
	writeEvalPlan(e.stdout, plan)

	// Each step is a numalab command run in-process on a typed
	// configuration; eval notes the run it stored.
	probe := []string{"probe", "mem", "--store", *storePath}
	if plan.ProbeQuick {
		probe = append(probe, "--quick")
	}
	steps := []*evalStep{
		{title: "memory probe", run: func(sub *env) error { return cmdProbeMem(ctx, sub.withArgs(probe), probe[2:]) }},
		{title: "null transaction on SQLite", run: func(sub *env) error { return runNullConfig(ctx, sub, cfg.nullSQLite, *storePath, false) }},
		{title: "null transaction on PostgreSQL", run: func(sub *env) error { return runNullConfig(ctx, sub, cfg.nullPG, *storePath, false) }},
		{title: "tpcc-ro on SQLite", run: func(sub *env) error { return runOLTPConfig(ctx, sub, cfg.oltp, *storePath, false) }},
		{title: "transtats on DuckDB", run: func(sub *env) error { return runReportConfig(ctx, sub, cfg.rep, "", *storePath, false) }},
		{title: "TPC-H-derived on DuckDB", run: func(sub *env) error {
			if len(cfg.tpch.Queries) == 0 {
				return errNoRoom
			}
			return runTPCHConfig(ctx, sub, cfg.tpch, "", *storePath, defaultCostThreshold(cfg.tpch.Engine), false)
		}},
	}
	var stepErrs []error
	for i, s := range steps {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(e.stdout, "== %d/%d %s (%v elapsed)\n", i+1, len(steps), s.title, time.Since(start).Round(time.Second))
		sub := *e
		sub.stored = func(kind string, id int64) { s.kind, s.id = kind, id }
		s.err = s.run(&sub)
		switch {
		case skipped(s.err):
			// Not a failure of eval: this machine has no PostgreSQL, or
			// the budget no room for the step.
			fmt.Fprintf(e.stdout, "skipped: %v\n", s.err)
		case s.err != nil:
			fmt.Fprintf(e.stderr, "numalab eval: %s: %v\n", s.title, s.err)
			stepErrs = append(stepErrs, fmt.Errorf("%s: %w", s.title, s.err))
		}
		fmt.Fprintln(e.stdout)
		if i == 0 {
			cfg = replanEval(e, plan, *budget, time.Since(start), t, *dir, cfg)
		}
	}

	r, runs, err := evalReport(*storePath, steps)
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
	fmt.Fprintln(e.stdout, "\n== runs (numalab runs show ID: each with the command that runs it again)")
	writeEvalRuns(e.stdout, steps, runs, r)
	fmt.Fprintf(e.stdout, "\nreport: %s\n", *out)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.Join(stepErrs...)
}

// errNoRoom skips a step the budget had no room for (sweep.EvalPlan's
// shrink).
var errNoRoom = errors.New("the budget has no room for this step on this machine (try --budget 5m)")

// skipped says whether a step's error means it was left out, not failed.
func skipped(err error) bool {
	return errors.Is(err, pgserver.ErrNoBinaries) || errors.Is(err, errNoRoom)
}

// evalStep is one step of eval and the run it stored.
type evalStep struct {
	title string
	run   func(sub *env) error
	kind  string // of the run it stored; "" none
	id    int64
	err   error
}

// writeEvalPlan says what the budget bought.
func writeEvalPlan(w io.Writer, plan sweep.EvalPlan) {
	nb := ""
	if plan.Neighbour {
		nb = " (and a cell with a memory-bandwidth neighbour)"
	}
	var qs []string
	for _, q := range plan.TPCHQueries {
		qs = append(qs, tpch.QueryName(q))
	}
	fmt.Fprintf(w, "plan: null transaction on SQLite and PostgreSQL (%s, every client/backend pairing), %v+%v per cell x%d repeats%s\n",
		strings.Join(plan.NullTransports, " and "), plan.NullWarm, plan.NullCell, plan.NullRepeat, repeatNote(plan.NullRepeat))
	fmt.Fprintf(w, "      tpcc-ro W=%d, streams %s (at most %d per logical CPU of each placement), placements %q, %v+%v per cell x%d repeats%s%s\n",
		plan.Warehouses, cliflag.FormatInts(plan.Streams), plan.StreamsPerCPU, plan.Placements, plan.OLTPWarmup, plan.OLTPCell, plan.Repeat, nb, repeatNote(plan.Repeat))
	fmt.Fprintf(w, "      transtats %d rows on DuckDB, DOP %s, %v+%v per cell x%d repeats%s\n",
		plan.Rows, cliflag.FormatInts(plan.DOPs), plan.QueryWarm, plan.QueryCell, plan.QueryRepeat, repeatNote(plan.QueryRepeat))
	if len(qs) == 0 {
		fmt.Fprintf(w, "      TPC-H-derived: left out, the budget has no room for it on this machine (try --budget 5m)\n\n")
		return
	}
	fmt.Fprintf(w, "      TPC-H-derived SF %g on DuckDB, %s at DOP %s, %v+%v per cell x%d repeats\n\n",
		plan.TPCHSF, strings.Join(qs, ","), cliflag.FormatInts(plan.DOPs), plan.TPCHWarm, plan.TPCHCell, plan.TPCHRepeat)
}

// repeatNote says, when the budget allowed fewer than sweep.EvalRepeat
// repeats of a step's cells, why its findings cannot tell: the U test's
// smallest p with n a side is 2/C(2n, n) (1.00 at 1, 0.33 at 2, 0.10 at
// 3), above 0.05.
func repeatNote(n int) string {
	if n >= sweep.EvalRepeat {
		return ""
	}
	c := 1.0 // C(2n, n)
	for i := 1; i <= n; i++ {
		c = c * float64(n+i) / float64(i)
	}
	return fmt.Sprintf(" (the budget allows no more: with %d a side a U test's smallest p is %.2f, so the findings comparing these cells cannot tell; %d a side need a larger --budget)",
		n, min(2/c, 1), sweep.EvalRepeat)
}

// replanEval fits the steps after the probe into what is left of the
// budget when the probe took more than the plan allowed (a loaded machine
// stretches its timed windows): the plan is made again for the budget
// less the overrun, and eval says so. A budget too small to plan again
// keeps the first plan.
func replanEval(e *env, plan sweep.EvalPlan, budget, took time.Duration, t *result.Topology, dir string, cfg evalConfig) evalConfig {
	over := took - plan.ProbeTime()
	if over < 5*time.Second {
		return cfg
	}
	re, err := sweep.PlanEval(budget-over, t)
	if err != nil {
		fmt.Fprintf(e.stdout, "the probe took %v, %v more than planned; the budget left is too small to plan again, so eval may overrun it\n\n",
			took.Round(time.Second), over.Round(time.Second))
		return cfg
	}
	re.ProbeQuick = plan.ProbeQuick
	fmt.Fprintf(e.stdout, "the probe took %v, %v more than planned: now\n", took.Round(time.Second), over.Round(time.Second))
	writeEvalPlan(e.stdout, re)
	return evalConfigs(re, dir)
}

// evalConfig is the configuration of each of eval's steps after the
// probe.
type evalConfig struct {
	nullSQLite, nullPG null.RunConfig
	oltp               tpcc.RunConfig
	rep                transtats.RunConfig
	tpch               tpch.RunConfig
}

// evalConfigs are eval's steps, their databases in dir.
func evalConfigs(plan sweep.EvalPlan, dir string) evalConfig {
	var c evalConfig
	c.nullSQLite = null.DefaultRunConfig()
	c.nullSQLite.Engine, c.nullSQLite.Transports = "sqlite", nil
	c.nullPG = null.DefaultRunConfig()
	c.nullPG.Transports = plan.NullTransports
	for _, n := range []*null.RunConfig{&c.nullSQLite, &c.nullPG} {
		n.Streams, n.Warmup, n.Duration, n.Repeat = []int{1}, plan.NullWarm, plan.NullCell, plan.NullRepeat
	}
	c.oltp = tpcc.DefaultRunConfig()
	c.oltp.DB = filepath.Join(dir, tpcc.DefaultPath("sqlite", plan.Warehouses))
	c.oltp.Warehouses, c.oltp.Streams, c.oltp.Placements = plan.Warehouses, plan.Streams, plan.Placements
	c.oltp.StreamsPerCPU, c.oltp.Repeat, c.oltp.Neighbour = plan.StreamsPerCPU, plan.Repeat, plan.Neighbour
	c.oltp.Warmup, c.oltp.Duration = plan.OLTPWarmup, plan.OLTPCell
	c.rep = transtats.RunConfig{Engine: "duckdb", DB: filepath.Join(dir, transtats.DefaultPath(transtats.DuckDB, plan.Rows)),
		Rows: plan.Rows, Rate: transtats.DefaultRate, Streams: []int{1}, DOP: plan.DOPs, Queries: []string{transtats.P1, transtats.P2},
		Warmup: plan.QueryWarm, Duration: plan.QueryCell, Seed: 1, Repeat: plan.QueryRepeat}
	c.tpch = tpch.RunConfig{Engine: "duckdb", DB: filepath.Join(dir, fmt.Sprintf("tpch-%g.duckdb", plan.TPCHSF)), SF: plan.TPCHSF, Seed: 1,
		DOP: plan.DOPs, Queries: plan.TPCHQueries, Repeats: plan.TPCHRepeat, Warmup: plan.TPCHWarm, Duration: plan.TPCHCell, DataNode: -1}
	return c
}

// evalReport builds the report from the runs eval stored (both null
// runs: the report shows one per engine), and returns them by id. A
// PostgreSQL step skipped for want of binaries stored a failed run with
// nothing in it: it is left out.
func evalReport(storePath string, steps []*evalStep) (*report.Report, map[int64]*result.Run, error) {
	st, err := store.Open(storePath)
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	all := map[int64]*result.Run{}
	var runs []*result.Run
	for _, s := range steps {
		if s.id == 0 {
			continue
		}
		r, err := st.Get(s.id)
		if err != nil {
			return nil, nil, err
		}
		all[s.id] = r
		if !errors.Is(s.err, pgserver.ErrNoBinaries) {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return nil, nil, errors.New("no step stored a run: nothing to report")
	}
	r, err := report.Build(runs)
	return r, all, err
}

// writeEvalRuns lists each step's run with its headline, the TPC-H
// step's speedups, and the steps that stored none.
func writeEvalRuns(w io.Writer, steps []*evalStep, runs map[int64]*result.Run, r *report.Report) {
	for _, s := range steps {
		run := runs[s.id]
		switch {
		case skipped(s.err):
			fmt.Fprintf(w, "  %s: skipped: %v\n", s.title, s.err)
		case run == nil:
			fmt.Fprintf(w, "  %s: no run stored\n", s.title)
		default:
			fmt.Fprintf(w, "  %s: run %d (%s): %s\n", s.title, run.ID, run.Status, run.Headline)
		}
		if r.TPCH == nil || s.id != r.TPCH.Run {
			continue
		}
		for _, q := range r.TPCH.Analysis.Queries {
			if len(q.Points) == 0 {
				continue
			}
			var sp []string
			for _, p := range q.Points {
				sp = append(sp, fmt.Sprintf("DOP %d %.2fx", p.DOP, p.Speedup))
			}
			fmt.Fprintf(w, "    %s: %.4f s at DOP %d; speedup %s (median of %d); best DOP %d\n",
				tpch.QueryName(q.Query), q.Points[0].Seconds, q.Points[0].DOP, strings.Join(sp, ", "), q.Points[0].Repeats, q.BestDOP)
		}
		fmt.Fprintf(w, "    plan changes between DOPs: %d\n", len(r.TPCH.Analysis.Changes))
	}
}
