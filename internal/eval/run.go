package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/evalplan"
	"github.com/numalab/numalab/internal/outfile"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sentinel"
	"github.com/numalab/numalab/internal/setting"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/workload/null"
	"github.com/numalab/numalab/internal/workload/pages"
	"github.com/numalab/numalab/internal/workload/tpcc"
	"github.com/numalab/numalab/internal/workload/tpch"
	"github.com/numalab/numalab/internal/workload/transtats"
)

// Options are what one eval is told: its budget, the machine, where it
// writes, and when it started.
type Options struct {
	Budget  time.Duration
	Machine *result.Topology
	Dir     string // the steps' databases, and by default the store and the report
	Store   string // the results store the steps write to ("": numalab.db in Dir)
	Out     string // the HTML report ("": numalab-report.html in Dir)
	Force   bool   // let Out replace a file numalab did not write
	// Engine is the engine whose fit the model and the decision rest on
	// ("": the tpcc-ro step's, SQLite).
	Engine string
	Start  time.Time
}

// Prepare makes Dir, gives the store and the report left empty their
// places in it, and refuses, before anything runs, a report path that Run
// could not write (outfile.Check).
func (o *Options) Prepare() error {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return setting.Errorf("dir", "%q cannot be made a directory: %v", o.Dir, err)
	}
	if o.Store == "" {
		o.Store = filepath.Join(o.Dir, "numalab.db")
	}
	if o.Out == "" {
		o.Out = filepath.Join(o.Dir, "numalab-report.html")
	}
	if err := outfile.Check(o.Out, outfile.HTMLReport, o.outOptions()); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return nil
}

// outOptions are how the report is written: never over the store.
func (o Options) outOptions() outfile.Options {
	return outfile.Options{Flag: "out", Force: o.Force, Keep: []string{o.Store}}
}

// Stored hears of a run a step stored.
type Stored func(kind string, id int64)

// Commands are the numalab commands eval's steps run in-process, each on
// a typed configuration and until ctx is done (the budget's end); each
// tells stored of the run it stores.
type Commands struct {
	ProbeMem func(ctx context.Context, stored Stored, quick bool) error
	Null     func(ctx context.Context, stored Stored, c null.RunConfig) error
	OLTP     func(ctx context.Context, stored Stored, c tpcc.RunConfig) error
	Report   func(ctx context.Context, stored Stored, c transtats.RunConfig) error
	TPCH     func(ctx context.Context, stored Stored, c tpch.RunConfig) error
	Curve    func(ctx context.Context, stored Stored, c tpcc.RunConfig) error  // run oltp --curve
	Pages    func(ctx context.Context, stored Stored, c pages.RunConfig) error // run pages
}

// Run plans eval for the budget on the machine and says what the plan
// bought; runs its steps (the memory probe, the null transaction on
// SQLite, PostgreSQL and MariaDB, tpcc-ro on SQLite and briefly on
// MariaDB, the page-size points, transtats, SMT x DOP and TPC-H-derived
// queries on DuckDB, and a load curve of tpcc-ro on SQLite when the
// budget has room left), planning the rest again when the probe overran
// (replan); then writes the HTML report of the runs they stored, and the
// summary on stdout. A step's failure does not stop the next, and is said
// on stderr and in the summary; Run fails only when the report could not
// be written (with the steps' failures joined), or when ctx was
// cancelled. The steps end by the budget plus evalplan.Overrun
// (evalplan.StepsDeadline).
func Run(ctx context.Context, stdout, stderr io.Writer, o Options, cmds Commands) error {
	plan, err := evalplan.NewPlan(o.Budget, o.Machine)
	if err != nil {
		return err
	}
	cfg := NewConfigs(plan, o.Dir)
	deadline := evalplan.StepsDeadline(o.Start, o.Budget)
	fmt.Fprintf(stdout, "numalab eval: %s, budget %v (its steps end by %v, the report after)\n",
		topo.Shape(o.Machine), o.Budget, deadline.Sub(o.Start).Round(time.Second))
	writePlan(stdout, plan)
	// The speed sentinel's memory reference; the core one alone where it
	// cannot be mapped.
	mem, err := sentinel.MemoryFor(o.Machine)
	if err != nil {
		fmt.Fprintf(stdout, "speed sentinel: the core reference alone: %v\n", err)
	} else {
		defer mem.Free()
	}
	// The steps stop at the budget's end (plus Overrun); the report is
	// written after, under ctx alone.
	stepCtx, stop := context.WithDeadline(ctx, deadline)
	defer stop()
	// The probe rests the page-size points' clock: it is essential, and
	// cut at its share of the budget like the steps the model rests on.
	probe := &step{title: "memory probe",
		run: func(ctx context.Context, s Stored) error { return cmds.ProbeMem(ctx, s, plan.ProbeQuick) },
		est: plan.ProbeTime, essential: true}
	queries := &step{title: "transtats on DuckDB",
		run: func(ctx context.Context, s Stored) error { return cmds.Report(ctx, s, cfg.Report) }}
	// est is a step's time as planned, read when it starts (a replan
	// changes cfg).
	est := func(f func(p evalplan.Plan) time.Duration) func() time.Duration {
		return func() time.Duration { return f(cfg.Plan) }
	}
	steps := []*step{
		probe,
		{title: "null transaction on SQLite",
			run: func(ctx context.Context, s Stored) error { return cmds.Null(ctx, s, cfg.NullSQLite) },
			est: est(evalplan.Plan.NullSQLiteTime)},
		{title: "null transaction on PostgreSQL",
			run: func(ctx context.Context, s Stored) error { return cmds.Null(ctx, s, cfg.NullPG) },
			est: est(func(p evalplan.Plan) time.Duration { return p.NullPGTime(o.Machine) })},
		{title: "null transaction on MariaDB", run: func(ctx context.Context, s Stored) error {
			return mariaDBStep(&cfg, func() error { return cmds.Null(ctx, s, cfg.NullMy) })
		}, est: est(func(p evalplan.Plan) time.Duration { return p.NullMyTime(o.Machine) })},
		{title: "tpcc-ro on SQLite",
			run: func(ctx context.Context, s Stored) error { return cmds.OLTP(ctx, s, cfg.OLTP) }, essential: true,
			est: est(func(p evalplan.Plan) time.Duration { return p.OLTPTime(o.Machine) })},
		{title: "tpcc-ro on MariaDB", run: func(ctx context.Context, s Stored) error {
			return mariaDBStep(&cfg, func() error { return cmds.OLTP(ctx, s, cfg.OLTPMy) })
		}, est: est(evalplan.Plan.MyOLTPTime)},
		{title: pageStepTitle, run: func(ctx context.Context, s Stored) error {
			if probe.id == 0 {
				return fmt.Errorf("no memory probe run: the page-size points need its clock: %w", evalplan.ErrNoRoom)
			}
			return cmds.Pages(ctx, s, pagesConfig(cfg.Pages, probe.id, o.Start.Add(o.Budget)))
		}, essential: true, est: est(evalplan.Plan.PageTime)},
		{title: pageStepTitle + " on the server", run: func(ctx context.Context, s Stored) error {
			if probe.id == 0 {
				return fmt.Errorf("no memory probe run: the page-size points need its clock: %w", evalplan.ErrNoRoom)
			}
			return cmds.Pages(ctx, s, pagesConfig(cfg.PagesServer, probe.id, o.Start.Add(o.Budget)))
		}, est: est(evalplan.Plan.ServerPageTime)},
		queries,
		{title: "TPC-H-derived on DuckDB", run: func(ctx context.Context, s Stored) error {
			if len(cfg.TPCH.Queries) == 0 {
				return noRoom(cfg.TPCHBudget, cfg.RoomSearched)
			}
			return cmds.TPCH(ctx, s, cfg.TPCH)
		}, est: est(evalplan.Plan.TPCHStepTime)},
		curveStep(&cfg, func(ctx context.Context, s Stored, c tpcc.RunConfig) error { return cmds.Curve(ctx, s, c) }),
	}
	queries.est = est(evalplan.Plan.QueryTime)
	sizeSMT := func() error { return sizeSMTDOP(stdout, o.Store, queries.id, &cfg, time.Until(deadline)) }
	steps = slices.Insert(steps, len(steps)-1, smtDOPSteps(stdout, o.Store, &cfg, sizeSMT,
		func(ctx context.Context, s Stored, c transtats.RunConfig) error {
			return cmds.Report(ctx, s, c)
		})...) // before the curve
	sent := watch(steps, mem)
	stepErr := runSteps(stepCtx, stdout, stderr, o.Start, steps, func() {
		cfg = replan(stdout, plan, o.Budget, time.Since(o.Start), o.Machine, o.Dir, cfg)
	})

	r, runs, err := buildReport(o.Store, o.Engine, steps)
	if err != nil {
		return errors.Join(stepErr, err)
	}
	if err := outfile.Write(o.Out, outfile.HTMLReport, o.outOptions(),
		func(w io.Writer) error { return report.WriteHTML(w, r) }); err != nil {
		return errors.Join(stepErr, fmt.Errorf("eval: %w", err))
	}
	sent.Take("end")
	// The model rests on the tpcc-ro step where no page-size fit is.
	if err := report.WriteSummary(stdout, r, stepRuns(steps, runs), sent, SentinelTolerance, "tpcc-ro on SQLite",
		time.Since(o.Start)); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	if err := calib.WriteEngineCosts(stdout, r.Engines); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nreport: %s\n", o.Out)
	// The report is written: a step's failure is in it and in the
	// summary, and is not eval's; stopping it (Ctrl-C) is.
	return ctx.Err()
}
