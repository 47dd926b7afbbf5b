package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/outfile"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/topo"
)

const evalHelp = `Usage:
  numalab eval [--budget 5m] [--store FILE] [--out FILE.html] [--force] [--dir DIR]

The main job: everything numalab knows how to measure on the embedded
engines, within a wall-clock budget, ending in one report. In order:

  1. the topology (numalab topo);
  2. a quick memory probe (numalab probe mem --quick; the full probe from a
     15m budget on);
  3. tpcc-ro on SQLite (numalab run oltp), streams from 1 to 2x the
     logical CPUs, SMT on and off where the machine has SMT, local and
     remote data where it has more than one NUMA node;
  4. transtats P1 and P2 on DuckDB (numalab run report), DOP from 1 to the
     logical CPUs;
  5. the model, calibrated to the OLTP run, and the report: an HTML file
     (--out) and a summary of the findings on stdout. --out is checked
     before anything runs: it replaces an existing file only if numalab
     wrote it (or with --force), and never the store or a database.

--budget sets the data sizes and the cell durations: a larger budget means
more warehouses and rows, longer cells and, from 15m, repeated cells. Each
step is stored as its own run (see 'numalab runs'); the databases are kept
in --dir and reused by the next eval. Ctrl-C stops the current step, keeps
what was measured and still writes the report from it.

Examples:
  numalab eval                      # about 5 minutes
  numalab eval --budget 30m --out big.html
  numalab report                    # the report again, from the store
`

// evalPlan is what a budget buys on a machine: a pure function of both.
type evalPlan struct {
	ProbeQuick bool
	Warehouses int
	Streams    []int
	Placements []string
	OLTPWarmup time.Duration
	OLTPCell   time.Duration
	Repeat     int
	Rows       int64
	DOPs       []int
	QueryWarm  time.Duration
	QueryCell  time.Duration
}

// Estimated fixed costs on a 2-vCPU guest, from measured runs: the quick
// probe, loading one warehouse, loading a million transtats rows on DuckDB
// (the 1.44M-row dimension included), and per-cell setup.
const (
	evalProbeQuick = 15 * time.Second
	evalProbeFull  = 90 * time.Second
	evalLoadWH     = 4 * time.Second
	evalLoadMRows  = 8 * time.Second
	evalCellSetup  = 500 * time.Millisecond
	evalMinBudget  = 2 * time.Minute
)

func planEval(budget time.Duration, t *result.Topology) (evalPlan, error) {
	if budget < evalMinBudget {
		return evalPlan{}, badFlag("budget", budget.String(), fmt.Sprintf("is too short: eval needs at least %v (try --budget 5m)", evalMinBudget))
	}
	n := len(t.CPUs)
	p := evalPlan{ProbeQuick: budget < 15*time.Minute, Warehouses: 1, Repeat: 1, Rows: 1_000_000}
	switch {
	case budget >= time.Hour:
		p.Warehouses, p.Rows, p.Repeat = 8, 20_000_000, 3
	case budget >= 15*time.Minute:
		p.Warehouses, p.Rows, p.Repeat = 2, 5_000_000, 3
	}
	for s := 1; s <= 2*n; s *= 2 {
		p.Streams = append(p.Streams, s)
	}
	for d := 1; d <= n; d *= 2 {
		p.DOPs = append(p.DOPs, d)
	}
	if p.DOPs[len(p.DOPs)-1] != n {
		p.DOPs = append(p.DOPs, n)
	}
	smt := []string{""}
	if t.ThreadsPerCore() > 1 {
		smt = []string{"smt=on", "smt=off"}
	}
	data := []string{""}
	if len(t.Nodes) > 1 {
		// Data on the first node; streams on it (local) and on the next (remote).
		a, b := t.Nodes[0].ID, t.Nodes[1].ID
		data = []string{fmt.Sprintf("node=%d,data=node%d", a, a), fmt.Sprintf("node=%d,data=node%d", b, a)}
	}
	for _, d := range data {
		for _, s := range smt {
			p.Placements = append(p.Placements, strings.Trim(d+","+s, ","))
		}
	}

	// Split what is left after the fixed costs: 55% OLTP, 45% reporting.
	left := budget*85/100 - evalProbeQuick - time.Duration(p.Warehouses)*evalLoadWH - time.Duration(p.Rows/1_000_000)*evalLoadMRows
	if !p.ProbeQuick {
		left -= evalProbeFull - evalProbeQuick
	}
	oltpCells := len(p.Streams) * len(p.Placements) * p.Repeat
	queryCells := 2 * len(p.DOPs)
	perOLTP := left*55/100/time.Duration(oltpCells) - evalCellSetup
	perQuery := left*45/100/time.Duration(queryCells) - evalCellSetup
	if perOLTP < 3*time.Second || perQuery < 3*time.Second {
		return evalPlan{}, badFlag("budget", budget.String(), fmt.Sprintf("leaves %v per OLTP cell and %v per query cell on this machine (%d and %d cells): give a larger budget",
			perOLTP.Round(time.Second), perQuery.Round(time.Second), oltpCells, queryCells))
	}
	p.OLTPWarmup = min(max(perOLTP/6, time.Second), 10*time.Second).Round(time.Second)
	p.OLTPCell = min(perOLTP-p.OLTPWarmup, 2*time.Minute).Round(time.Second)
	p.QueryWarm = min(max(perQuery/6, time.Second), 10*time.Second).Round(time.Second)
	p.QueryCell = min(perQuery-p.QueryWarm, 2*time.Minute).Round(time.Second)
	return p, nil
}

func intsArg(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func cmdEval(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "eval", evalHelp)
	budget := fs.Duration("budget", 5*time.Minute, "wall-clock budget; sets data sizes and cell durations")
	storePath := storeFlag(fs)
	out := fs.String("out", "numalab-report.html", "`file` the HTML report is written to")
	force := fs.Bool("force", false, "let --out replace a file numalab did not write (never a database or the store)")
	dir := fs.String("dir", ".", "`directory` for the databases eval loads (kept and reused)")
	if done, err := parseNoArgs(e, fs, args); done {
		return err
	}
	if st, err := os.Stat(*dir); err != nil || !st.IsDir() {
		return badFlag("dir", *dir, "is not a directory")
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
	plan, err := planEval(*budget, t)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "numalab eval: %s, budget %v\n", topo.Shape(t), *budget)
	fmt.Fprintf(e.stdout, "plan: tpcc-ro W=%d, streams %s, placements %q, %v+%v per cell x%d; transtats %d rows on DuckDB, DOP %s, %v+%v per cell\n\n",
		plan.Warehouses, intsArg(plan.Streams), plan.Placements, plan.OLTPWarmup, plan.OLTPCell, plan.Repeat,
		plan.Rows, intsArg(plan.DOPs), plan.QueryWarm, plan.QueryCell)

	// Each step is a numalab command run in-process; eval notes the run it stored.
	ids := map[string]int64{}
	sub := *e
	sub.stored = func(kind string, id int64) { ids[kind] = id }
	probe := []string{"--store", *storePath}
	if plan.ProbeQuick {
		probe = append(probe, "--quick")
	}
	oltp := []string{"--store", *storePath, "--db", fmt.Sprintf("%s/numalab-tpcc-w%d.db", *dir, plan.Warehouses),
		"--warehouses", strconv.Itoa(plan.Warehouses), "--streams", intsArg(plan.Streams),
		"--placement", strings.Join(plan.Placements, ";"), "--warmup", plan.OLTPWarmup.String(),
		"--duration", plan.OLTPCell.String(), "--repeat", strconv.Itoa(plan.Repeat)}
	rep := []string{"--store", *storePath, "--engine", "duckdb", "--db", fmt.Sprintf("%s/numalab-transtats-%d.duckdb", *dir, plan.Rows),
		"--rows", strconv.FormatInt(plan.Rows, 10), "--streams", "1", "--dop", intsArg(plan.DOPs), "--query", "P1,P2",
		"--warmup", plan.QueryWarm.String(), "--duration", plan.QueryCell.String()}
	steps := []struct {
		title string
		cmd   []string // the equivalent command line, for the run record
		run   func(context.Context, *env, []string) error
		args  []string
	}{
		{"memory probe", []string{"probe", "mem"}, cmdProbeMem, probe},
		{"tpcc-ro on SQLite", []string{"run", "oltp"}, runOLTP, oltp},
		{"transtats on DuckDB", []string{"run", "report"}, runReport, rep},
	}
	var stepErrs []error
	for i, s := range steps {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(e.stdout, "== %d/%d %s (%v elapsed)\n", i+1, len(steps), s.title, time.Since(start).Round(time.Second))
		sub.args = append(s.cmd, s.args...)
		if err := s.run(ctx, &sub, s.args); err != nil {
			fmt.Fprintf(e.stderr, "numalab eval: %s: %v\n", s.title, err)
			stepErrs = append(stepErrs, fmt.Errorf("%s: %w", s.title, err))
		}
		fmt.Fprintln(e.stdout)
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
	fmt.Fprintf(e.stdout, "\nreport: %s\n", *out)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.Join(stepErrs...)
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
