package eval

// The SMT × DOP step: transtats' comparison (transtats.SMTDOPs) sized
// from P1's time in the transtats step, its winner said from its runs.

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/evalplan"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/workload/transtats"
)

// writeSMTDOPPlan is the plan's line for the step.
func writeSMTDOPPlan(w io.Writer, p evalplan.Plan) {
	switch {
	case p.SMTNoRoom:
		fmt.Fprintf(w, "      SMT x DOP: left out, the budget has no room for it on this machine%s\n",
			roomAt(p.SMTDOPBudget, p.RoomSearched))
		return
	case len(p.SMTDOP) == 0:
		fmt.Fprintln(w,
			"      SMT x DOP: left out, this machine has no SMT (one thread per core): DOP = physical cores = logical CPUs")
		return
	}
	fmt.Fprintf(w, "      SMT x DOP on DuckDB: transtats P1 at DOP %s (1, the physical cores, the logical CPUs) "+
		"placed %s, %v+%v per cell x%d repeats%s\n",
		cliflag.FormatInts(p.SMTDOP), strings.Join(transtats.SMTPlacements, " and "), p.QueryWarm, p.QueryCell,
		p.QueryRepeat, repeatNote(p.QueryRepeat))
}

// smtDOPSteps are the step's runs, one step a placement (none without
// SMT), taking their configurations from cfg when they run (a replan
// changes them), the first after size, when not nil, has sized them;
// after the last, w is told which placement and DOP won, when the cells
// tell, from the runs stored in storePath.
func smtDOPSteps(w io.Writer, storePath string, cfg *Configs, size func() error,
	run func(context.Context, Stored, transtats.RunConfig) error) []*step {
	var steps []*step
	var unsized error // why the first step could not be sized
	for i, sel := range transtats.SMTPlacements {
		// A machine with SMT has the steps, left out (saying why) when
		// the plan has no room for them.
		if i >= len(cfg.SMTDOP) && !cfg.Plan.SMTNoRoom {
			break
		}
		steps = append(steps, &step{title: "SMT x DOP on DuckDB, " + sel, run: func(ctx context.Context, s Stored) error {
			if i >= len(cfg.SMTDOP) {
				return noRoom(cfg.SMTDOPBudget, cfg.RoomSearched)
			}
			switch {
			case i == 0 && size != nil:
				unsized = size()
				if unsized != nil {
					return unsized
				}
			case unsized != nil:
				// The first placement could not be sized: the step
				// cannot tell with one placement alone.
				return fmt.Errorf("left out with smt=on: %w", unsized)
			}
			c := cfg.SMTDOP[i]
			db, note, done, err := engine.UnheldDuckDB(c.DB)
			if err != nil {
				return err
			}
			defer done()
			if note != "" {
				fmt.Fprintln(w, note)
			}
			c.DB = db
			if err := run(ctx, s, c); err != nil || i < len(transtats.SMTPlacements)-1 {
				return err
			}
			return writeSMTDOPWinner(w, storePath, steps)
		}})
	}
	return steps
}

// sizeSMTDOP sizes the SMT × DOP step's cells from P1's time at DOP 1 in
// the transtats step's run id (in the store at storePath): windows long
// enough for report.MinQueries queries at DOP 1, the slowest, and as
// many of the plan's repeats as left holds. Where it cannot, it says why
// the step cannot tell (wrapping evalplan.ErrNoRoom: the step is left out).
func sizeSMTDOP(w io.Writer, storePath string, id int64, cfg *Configs, left time.Duration) error {
	if len(cfg.SMTDOP) == 0 {
		return nil
	}
	if id == 0 {
		return fmt.Errorf(
			"%w: the transtats step stored no run whose P1 time could size this step's windows, so it cannot tell",
			evalplan.ErrNoRoom)
	}
	run, err := storedRun(storePath, id)
	if err != nil {
		return err
	}
	t1, err := transtats.P1Time(run)
	if err != nil {
		return err
	}
	if t1 == 0 {
		return fmt.Errorf("%w: the transtats step (run %d) finished no P1 query at DOP 1 "+
			"whose time could size this step's windows, so it cannot tell", evalplan.ErrNoRoom, id)
	}
	c := cfg.SMTDOP[0]
	window := max(c.Duration, (time.Duration(report.MinQueries) * t1 * 11 / 10).Truncate(100*time.Millisecond))
	cells := time.Duration(len(cfg.SMTDOP) * len(c.DOP))
	perRepeat := cells * (c.Warmup + window + evalplan.CellSetup)
	r := min(c.Repeat, int(left/perRepeat))
	if r < 1 {
		return fmt.Errorf("%w: P1 took %v a query at DOP 1 in the transtats step (run %d), "+
			"so a cell needs a %v window for %d queries, and the %d cells of both placements %v; "+
			"%v of the budget is left, so it cannot tell whether SMT helps parallel query here",
			evalplan.ErrNoRoom, evalplan.Round(t1), id, evalplan.Round(window), report.MinQueries,
			cells, evalplan.Round(perRepeat), evalplan.Round(max(left, 0)))
	}
	for i := range cfg.SMTDOP {
		cfg.SMTDOP[i].Duration, cfg.SMTDOP[i].Repeat = window, r
	}
	if window != c.Duration || r != c.Repeat {
		fmt.Fprintf(w, "sized from P1's %v a query at DOP 1 (run %d): %v windows (%d queries at DOP 1) x%d repeats%s\n",
			evalplan.Round(t1), id, evalplan.Round(window), report.MinQueries, r, repeatNote(r))
	}
	return nil
}

// storedRun is run id of the store at storePath.
func storedRun(storePath string, id int64) (*result.Run, error) {
	st, err := store.OpenToRead(storePath)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.Get(id)
}

// writeSMTDOPWinner says, from the step's stored runs, the queries per
// hour of each placement and DOP and which was best, when the cells tell
// (report.PlacedDOP: the report says the same).
func writeSMTDOPWinner(w io.Writer, storePath string, steps []*step) error {
	var runs []*result.Run
	for _, s := range steps {
		if s.id != 0 {
			r, err := storedRun(storePath, s.id)
			if err != nil {
				return err
			}
			runs = append(runs, r)
		}
	}
	pd, err := report.BuildPlacedDOP(runs)
	if err != nil || len(pd.Points) == 0 {
		return err
	}
	fmt.Fprintln(w, "SMT x DOP, "+pd.Text())
	return nil
}
