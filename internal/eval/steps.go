package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/numalab/numalab/internal/evalplan"
	"github.com/numalab/numalab/internal/hugepages"
	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/runconfig"
	"github.com/numalab/numalab/internal/sentinel"
	"github.com/numalab/numalab/internal/workload/null"
	"github.com/numalab/numalab/internal/workload/pages"
	"github.com/numalab/numalab/internal/workload/tpcc"
	"github.com/numalab/numalab/internal/workload/tpch"
	"github.com/numalab/numalab/internal/workload/transtats"
)

// Configs is the configuration of each of eval's steps after the probe.
type Configs struct {
	// Plan is what they were made from: whether they have the server
	// engine's steps (Server.On: NullMy, OLTPMy), and which budgets have
	// room for those they have not.
	evalplan.Plan
	NullSQLite, NullPG, NullMy null.RunConfig
	OLTP, OLTPMy               tpcc.RunConfig
	Report                     transtats.RunConfig
	SMTDOP                     []transtats.RunConfig // smt=on, smt=off; none without SMT
	TPCH                       tpch.RunConfig
	Pages                      pages.RunConfig // without its probe run
	PagesServer                pages.RunConfig // the server engine's (Plan.ServerPages), likewise
}

// NewConfigs are eval's steps for plan, their databases in dir.
func NewConfigs(plan evalplan.Plan, dir string) Configs {
	c := Configs{Plan: plan}
	c.NullSQLite = null.DefaultRunConfig()
	c.NullSQLite.Engine, c.NullSQLite.Transports = "sqlite", nil
	c.NullPG = null.DefaultRunConfig()
	c.NullPG.Transports = plan.NullTransports
	c.NullMy = null.DefaultRunConfig()
	c.NullMy.Engine, c.NullMy.Transports = plan.Server.Engine, plan.NullTransports
	for _, n := range []*null.RunConfig{&c.NullSQLite, &c.NullPG, &c.NullMy} {
		n.Streams, n.Warmup, n.Duration, n.Repeat = []int{1}, plan.NullWarm, plan.NullCell, plan.NullRepeat
	}
	c.OLTPMy = tpcc.DefaultRunConfig()
	c.OLTPMy.Engine, c.OLTPMy.Warehouses, c.OLTPMy.Streams, c.OLTPMy.Repeat = plan.Server.Engine, 1, plan.Server.Streams, 1
	c.OLTPMy.Warmup, c.OLTPMy.Duration = plan.Server.Warm, plan.Server.Cell
	c.OLTP = tpcc.DefaultRunConfig()
	c.OLTP.DB = filepath.Join(dir, tpcc.DefaultPath("sqlite", plan.Warehouses))
	c.OLTP.Warehouses, c.OLTP.Streams, c.OLTP.Placements = plan.Warehouses, plan.Streams, plan.Placements
	c.OLTP.StreamsPerCPU, c.OLTP.Repeat, c.OLTP.Neighbour, c.OLTP.NeighbourPairs = plan.StreamsPerCPU, plan.Repeat,
		plan.Neighbour, plan.NeighbourPairs
	c.OLTP.Warmup, c.OLTP.Duration = plan.OLTPWarmup, plan.OLTPCell
	c.Report = transtats.RunConfig{
		Common: runconfig.Common{Engine: "duckdb", DB: filepath.Join(dir, transtats.DefaultPath("duckdb", plan.Rows)),
			Warmup: plan.QueryWarm, Duration: plan.QueryCell, Seed: 1, Repeat: plan.QueryRepeat},
		Rows: plan.Rows, Rate: transtats.DefaultRate, Streams: []int{1}, DOP: plan.DOPs,
		Queries: []string{transtats.P1, transtats.P2}, DataNode: -1}
	c.SMTDOP = transtats.SMTDOPConfigs(c.Report, plan.SMTDOP)
	c.Pages = pages.RunConfig{DB: c.OLTP.DB, CPU: -1, Pairs: plan.PagePairs, Cell: plan.PageCell,
		Repeats: max(plan.PagePairs/2, 1), Tolerance: SentinelTolerance}
	c.PagesServer = c.Pages
	c.PagesServer.Engine, c.PagesServer.DB = plan.ServerPages, ""
	c.TPCH = tpch.RunConfig{
		Common: runconfig.Common{Engine: "duckdb", DB: filepath.Join(dir, fmt.Sprintf("tpch-%g.duckdb", plan.TPCHSF)),
			Seed: 1, Repeat: plan.TPCHRepeat, Warmup: plan.TPCHWarm, Duration: plan.TPCHCell}, SF: plan.TPCHSF,
		DOP: plan.DOPs, Queries: plan.TPCHQueries, DataNode: -1}
	return c
}

// replan fits the steps after the probe into what is left of the budget
// when the probe took more than the plan allowed (a loaded machine
// stretches its timed windows): the plan is made again for the budget
// less the overrun, and w is told so. A budget too small to plan again
// keeps the first plan.
func replan(w io.Writer, plan evalplan.Plan, budget, took time.Duration, t *result.Topology, dir string,
	cfg Configs) Configs {
	over := took - plan.ProbeTime()
	if over < 5*time.Second {
		return cfg
	}
	re, err := evalplan.NewPlan(budget-over, t)
	if err != nil {
		fmt.Fprintf(w, "the probe took %v, %v more than planned; the budget left is too small to plan again: "+
			"the steps that no longer fit will be left out\n\n",
			took.Round(time.Second), over.Round(time.Second))
		return cfg
	}
	re.ProbeQuick = plan.ProbeQuick
	// The budgets that have room for a step left out were found for the
	// budget less the overrun: the user's are that much more.
	for _, b := range []*time.Duration{&re.Server.Budget, &re.SMTDOPBudget, &re.TPCHBudget, &re.RoomSearched} {
		if *b > 0 {
			*b = (*b + over + time.Minute - 1).Truncate(time.Minute)
		}
	}
	fmt.Fprintf(w, "the probe took %v, %v more than planned: now\n", took.Round(time.Second), over.Round(time.Second))
	writePlan(w, re)
	return NewConfigs(re, dir)
}

// pageStepTitle is the page-size step's heading.
const pageStepTitle = "page-size points for the model"

// pagesConfig is the page-size step's configuration c when it starts:
// at the clock of the memory probe's run probeID, and off-speed cells
// repeated only while they end before until, the budget's end (the plan
// leaves them out of the step's time: they would cost the 5-minute plan
// an OLTP repeat; the load curve, last, takes what is left).
func pagesConfig(c pages.RunConfig, probeID int64, until time.Time) pages.RunConfig {
	c.ProbeRun, c.RepeatWithin = probeID, max(time.Until(until).Truncate(time.Second), 0)
	if c.RepeatWithin == 0 {
		c.Repeats = 0
	}
	return c
}

// noRoom is evalplan.ErrNoRoom for a step left out for budget, saying which
// budget has room for it (b, or none up to searched).
func noRoom(b, searched time.Duration) error {
	return fmt.Errorf("%w%s", evalplan.ErrNoRoom, roomAt(b, searched))
}

// skipped says whether a step's error means it was left out, not failed.
func skipped(err error) bool {
	return errors.Is(err, pgserver.ErrNoBinaries) || errors.Is(err, mariaserver.ErrNoBinaries) ||
		errors.Is(err, evalplan.ErrNoRoom) || errors.Is(err, hugepages.ErrCannot)
}

// mariaDBStep runs a MariaDB step when the plan has it; else it is left
// out, for want of a server (evalplan.HaveMariaDB's error) or of budget.
func mariaDBStep(cfg *Configs, run func() error) error {
	if cfg.Server.On {
		return run()
	}
	if err := evalplan.HaveMariaDB(); err != nil {
		return err
	}
	return noRoom(cfg.Server.Budget, cfg.RoomSearched)
}

// step is one step of eval and the run it stored.
type step struct {
	title string
	// run runs the step until ctx is done (its share of the budget);
	// stored hears of every run it stores.
	run func(ctx context.Context, stored Stored) error
	// est is the step's time as planned; nil for a step that has none
	// of its own.
	est func() time.Duration
	// essential: the model rests on the step, which runs even when the
	// pace so far says it will not fit, cut at its share of the budget
	// (share): the steps after it that the model rests on keep theirs.
	essential bool
	id        int64 // of the run it stored; 0 none
	err       error
}

// errBudgetEnd is what a step cut at the budget's end, and a step the
// budget's end came before, say; errShareEnd what a step cut at its
// share of the budget says.
var (
	errBudgetEnd = errors.New("the budget's end came")
	errShareEnd  = errors.New("its share of the budget ended")
)

// runSteps runs steps in order until ctx is done, each under a heading
// with the time since start, and calls afterFirst once the first (the
// memory probe) is done (the first does not count in the pace: afterFirst
// plans again for its overrun). Before each step it sets the step's
// planned time, at the pace the steps so far ran, against what is left
// until ctx's deadline less what the essential steps after it are
// planned to take at that pace, and leaves out one that would not fit
// (unless essential). Each step runs until its share of what is left
// (share), and is cut there: an essential step at its part of what is
// left in proportion to its plan beside the essential steps after it,
// any other at what they leave. A step left out (skipped) is said on
// stdout, a failure on stderr; the failures come back joined. When ctx's
// deadline passes during a step, the step is cut there (what it
// measured is stored) and the steps after it are left out; when ctx is
// cancelled, none runs.
func runSteps(ctx context.Context, stdout, stderr io.Writer, start time.Time, steps []*step, afterFirst func()) error {
	var errs []error
	var p evalplan.Pace
	deadline, bounded := ctx.Deadline()
	for i, s := range steps {
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			break
		}
		fmt.Fprintf(stdout, "== %d/%d %s (%v elapsed)\n", i+1, len(steps), s.title, time.Since(start).Round(time.Second))
		var planned, reserve time.Duration
		if s.est != nil {
			planned = s.est()
		}
		for _, later := range steps[i+1:] {
			if later.essential && later.est != nil {
				reserve += later.est()
			}
		}
		t0 := time.Now()
		var until time.Duration // the step's share, when bounded
		if bounded {
			until = evalplan.Share(planned, reserve, time.Until(deadline), s.essential, p.Factor())
		}
		switch {
		case ctx.Err() != nil:
			s.err = fmt.Errorf("%w: %w before this step", evalplan.ErrNoRoom, errBudgetEnd)
		case bounded && s.est != nil && !s.essential:
			s.err = p.Fits(planned, until, reserve)
		}
		if s.err == nil {
			s.err = runStep(ctx, s, bounded, until, reserve)
			// A step left out at once (no server binaries) tells
			// nothing of the pace, nor does the first (the memory
			// probe), whose overrun afterFirst takes out of the plan.
			if i > 0 && s.est != nil && !skipped(s.err) {
				p.Add(planned, time.Since(t0))
			}
		}
		switch {
		case skipped(s.err):
			// Not a failure of eval: this machine has no PostgreSQL or
			// MariaDB, or the budget no room for the step. A run the
			// step stored before it stopped is named.
			stored := ""
			if s.id != 0 {
				stored = fmt.Sprintf(" (its run %d is stored)", s.id)
			}
			fmt.Fprintf(stdout, "skipped: %v%s\n", s.err, stored)
		case s.err != nil:
			fmt.Fprintf(stderr, "numalab eval: %s: %v\n", s.title, s.err)
			errs = append(errs, fmt.Errorf("%s: %w", s.title, s.err))
		}
		fmt.Fprintln(stdout)
		if i == 0 {
			afterFirst()
		}
	}
	return errors.Join(errs...)
}

// runStep runs s, when bounded for its share until, and says why when a
// deadline cut it: the budget's end (ctx's), or its share, which kept
// reserve for the essential steps after it.
func runStep(ctx context.Context, s *step, bounded bool, until, reserve time.Duration) error {
	sctx, stop := ctx, func() {}
	if bounded {
		// A share that reaches ctx's deadline is ctx's deadline: a cut
		// there is the budget's end.
		sctx, stop = context.WithDeadline(ctx, time.Now().Add(until))
	}
	defer stop()
	err := s.run(sctx, func(_ string, id int64) { s.id = id })
	var cut error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		// A step cut at the deadline may say so or return as a Ctrl-C'd
		// command does, with what it measured stored.
		cut = fmt.Errorf("%w: %w during this step, which was cut there (what it measured is stored)",
			evalplan.ErrNoRoom, errBudgetEnd)
	case errors.Is(sctx.Err(), context.DeadlineExceeded):
		cut = fmt.Errorf("%w: %w (%v, keeping %v for the steps after it that the model rests on) during this step, "+
			"which was cut there (what it measured is stored)",
			evalplan.ErrNoRoom, errShareEnd, evalplan.Round(until), evalplan.Round(reserve))
	default:
		return err
	}
	if err != nil {
		cut = fmt.Errorf("%w: %w", cut, err)
	}
	return cut
}

// SentinelTolerance is how far off its median the speed sentinel may read
// before the step next to it is said to have run off the machine's usual
// speed: a tenth and a half, well inside the ±30% phases this guest shows.
const SentinelTolerance = 0.15

// watch times the speed sentinel, with the memory reference mem where
// there is one, at the start and around every step: the samples "before
// S" and "after S" bracket step S. Eval's summary shows the series and
// its verdict.
func watch(steps []*step, mem *sentinel.Memory) *sentinel.Series {
	s := &sentinel.Series{}
	s.UseMemory(mem)
	s.Take("start")
	for _, st := range steps {
		run, title := st.run, st.title
		st.run = func(ctx context.Context, stored Stored) error {
			s.Take("before " + title)
			defer s.Take("after " + title)
			return run(ctx, stored)
		}
	}
	return s
}
