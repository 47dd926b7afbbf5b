package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/planest"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/workload/transtats"
)

// reportFlags parses run report's command line into a checked
// configuration, and the DSN with its password that the run connects with.
func reportFlags(e *env, args []string) (cfg transtats.RunConfig, dsn, storePath string, asJSON, done bool, err error) {
	cfg = transtats.DefaultRunConfig()
	fs := cliflag.New(e.stderr, "run report", helpText("run-report"))
	cfg.Settings().Define(fs)
	sp := cliflag.Store(fs)
	js := fs.Bool("json", false, "print the run as JSON on stdout at the end (the table goes to stderr)")
	done, errs, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return cfg, "", "", false, true, err
	}
	errs = append(errs, cfg.Settings().Apply(fs, true)...)
	if err := errors.Join(append(errs, cfg.CheckFlags(fs)...)...); err != nil {
		return cfg, "", "", false, true, err
	}
	if dsn, err = cfg.Resolve(); err != nil {
		return cfg, "", "", false, true, err
	}
	return cfg, dsn, *sp, *js, false, nil
}

// reportArgv is the one command line that gives cfg, every setting
// spelled out (the password of a DSN is hidden).
func reportArgv(cfg transtats.RunConfig) []string {
	return cfg.Settings().Argv("run", "report")
}

// reportOutput is what --json prints.
type reportOutput struct {
	Load     *result.BulkLoad      `json:"load,omitempty"`
	Engine   *engine.Info          `json:"engine,omitempty"`
	Cells    []*result.QueryCell   `json:"cells"`
	Findings []*result.PlanFinding `json:"findings"`
	// Estimates set the optimizer's estimated speedup beside the measured
	// one (PostgreSQL; NoEstimate says why not on another engine).
	Estimates  []planest.Row `json:"estimates"`
	NoEstimate string        `json:"no_estimate,omitempty"`
}

func runReport(ctx context.Context, e *env, args []string) error {
	cfg, dsn, storePath, asJSON, done, err := reportFlags(e, args)
	if done || err != nil {
		return err
	}
	if len(cfg.Monitor) > 0 {
		return runReportMonitor(ctx, e, cfg, dsn, storePath, asJSON)
	}
	return runReportConfig(ctx, e, cfg, dsn, storePath, asJSON)
}

// runReportMonitor runs --monitor (runMonitor) on the first query, stream
// count and DOP of cfg.
func runReportMonitor(ctx context.Context, e *env, cfg transtats.RunConfig, dsn, storePath string, asJSON bool) error {
	fs, err := monitorFacilities(ctx, cfg.MonitorRequest(), dsn, cfg.ConnectTimeout)
	if err != nil {
		return err
	}
	spec := cfg.Spec()
	spec.Streams, spec.DOPs, spec.Types, spec.Repeat = cfg.Streams[:1], cfg.DOP[:1], cfg.Queries[:1], 1
	_, one, prog, err := startSweep(e, sweepOut{asJSON: asJSON}, monitor.WriteRow, spec)
	if err != nil {
		return err
	}
	defer prog.Done()
	if err := checkHog(cfg.Hog, one); err != nil {
		return err
	}
	w := transtats.NewSweep(cfg, dsn, one[0].DataNode)
	return runMonitor(ctx, e, monitorJob[result.QueryCell]{fs: fs, dsn: cfg.DSN != "", kind: monitor.ReportRunKind, argv: reportArgv(cfg), config: cfg,
		one: one[0], repeat: cfg.Repeat, window: cfg.Duration, load: cfg.MonitorLoad, pacing: cfg.Pacing, seed: int64(cfg.Seed), plan: cfg.Plan,
		inner:    monitor.Inner[result.QueryCell]{Sweep: w, Session: w.Session, Kind: result.KindQueryCell, Cell: func(q *result.QueryCell) *result.Cell { return q.Cell }},
		settings: w.ServerSettings}, prog, storePath, asJSON)
}

// runReportConfig runs a checked configuration: plan, store, sweep, render.
func runReportConfig(ctx context.Context, e *env, cfg transtats.RunConfig, dsn, storePath string, asJSON bool) error {
	_, cells, prog, err := startSweep(e, sweepOut{asJSON: asJSON}, transtats.WriteRow, cfg.Spec())
	if err != nil {
		return err
	}
	defer prog.Done()
	if err := checkHog(cfg.Hog, cells); err != nil {
		return err
	}
	rec, err := startRun(ctx, e.withArgs(reportArgv(cfg)), storePath, pacedKind(result.RunQueries, cfg.Pacing), cfg)
	if err != nil {
		return err
	}
	w := transtats.NewSweep(cfg, dsn, cells[0].DataNode) // one data node for a server (OneDataNode)
	transtats.WriteHeader(prog.table)
	measured, err := sweep.Run(ctx, cfg.Plan(cells), w, rec, prog)
	out := reportOutput{Cells: measured, Findings: w.Findings(), Load: w.Load(), Engine: w.Info(),
		Estimates: transtats.Estimates(measured), NoEstimate: transtats.NoEstimate(cfg.Engine, cfg.DOP)}
	if out.Cells == nil {
		out.Cells = []*result.QueryCell{}
	}
	if out.Findings == nil {
		out.Findings = []*result.PlanFinding{}
	}
	if out.Estimates == nil {
		out.Estimates = []planest.Row{}
	}
	if !asJSON {
		planest.WriteTable(prog.table, out.Estimates)
		if out.NoEstimate != "" {
			fmt.Fprintf(prog.table, "\n%s\n", out.NoEstimate)
		}
	}
	return finishRun(e, rec, err, transtats.Headline(cfg, measured), asJSON, out)
}

// checkHog refuses a --hog of more CPUs than a cell's placement has
// (run report, run tpch): the busy threads would double up on CPUs, and
// the run would be labelled with more busy CPUs than there were.
func checkHog(n int, cells []sweep.Cell) error {
	if n == 0 {
		return nil
	}
	for _, c := range cells {
		if _, err := place.HogCPUs(c.Place.Streams, n); err != nil {
			where := cmp.Or(c.Placement, "(all CPUs)")
			return cliflag.Bad("hog", strconv.Itoa(n), fmt.Sprintf("is more than placement %s has: %v (give --hog up to its CPUs)", where, err))
		}
	}
	return nil
}
