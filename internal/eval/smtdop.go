package eval

// The SMT × DOP step: where the machine has SMT, transtats' P1 on DuckDB
// at DOP 1, the physical cores and the logical CPUs, once with the query's
// workers on every logical CPU (smt=on) and once on one thread per core
// (smt=off, where DOP = logical CPUs is oversubscribed): the classic
// question whether DOP 2N on N cores with SMT beats DOP N without it.
// Without SMT DOP = cores = CPUs and there is nothing to compare.

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/workload/transtats"
)

// smtPlacements are the SMT × DOP step's placements, one run each.
var smtPlacements = []string{"smt=on", "smt=off"}

// smtDOPs are the SMT × DOP step's DOPs on t: 1, the physical cores and
// the logical CPUs; nil where t has no SMT.
func smtDOPs(t *result.Topology) ([]int, error) {
	if t.ThreadsPerCore() <= 1 {
		return nil, nil
	}
	on, err := place.Resolve(t, "smt=on")
	if err != nil {
		return nil, fmt.Errorf("planning eval's SMT x DOP step: %w", err)
	}
	if on.Cores == len(on.CPUs) {
		return nil, nil
	}
	// One core of two threads would give DOP 1 twice.
	return slices.Compact([]int{1, on.Cores, len(on.CPUs)}), nil
}

// smtDOPCells is how many cells the SMT × DOP step runs.
func (p Plan) smtDOPCells() int {
	return len(smtPlacements) * len(p.SMTDOP) * p.QueryRepeat
}

// smtDOPConfigs are the SMT × DOP step's runs: the transtats step's
// configuration (its database, cell lengths and repeats), P1 alone at
// the plan's SMT DOPs, on each of smtPlacements; none without SMT.
func smtDOPConfigs(p Plan, report transtats.RunConfig) []transtats.RunConfig {
	if len(p.SMTDOP) == 0 {
		return nil
	}
	var out []transtats.RunConfig
	for _, sel := range smtPlacements {
		c := report
		c.Queries, c.DOP, c.Placement = []string{transtats.P1}, p.SMTDOP, sel
		out = append(out, c)
	}
	return out
}

// writeSMTDOPPlan is the plan's line for the step.
func writeSMTDOPPlan(w io.Writer, p Plan) {
	switch {
	case p.SMTNoRoom:
		fmt.Fprintf(w, "      SMT x DOP: left out, the budget has no room for it on this machine%s\n", roomAt(p.SMTDOPBudget, p.RoomSearched))
		return
	case len(p.SMTDOP) == 0:
		fmt.Fprintln(w, "      SMT x DOP: left out, this machine has no SMT (one thread per core): DOP = physical cores = logical CPUs")
		return
	}
	fmt.Fprintf(w, "      SMT x DOP on DuckDB: transtats P1 at DOP %s (1, the physical cores, the logical CPUs) placed %s, %v+%v per cell x%d repeats%s\n",
		cliflag.FormatInts(p.SMTDOP), strings.Join(smtPlacements, " and "), p.QueryWarm, p.QueryCell, p.QueryRepeat, repeatNote(p.QueryRepeat))
}

// smtDOPSteps are the step's runs, one step a placement, taking their
// configurations from cfg when they run (a replan changes them); after
// the last, w is told which placement and DOP won, from the runs stored
// in storePath.
func smtDOPSteps(w io.Writer, storePath string, cfg *Configs, run func(Stored, transtats.RunConfig) error) []*step {
	var steps []*step
	for i, sel := range smtPlacements {
		if i >= len(cfg.SMTDOP) {
			break
		}
		steps = append(steps, &step{title: "SMT x DOP on DuckDB, " + sel, run: func(s Stored) error {
			if i >= len(cfg.SMTDOP) {
				return noRoom(cfg.SMTDOPBudget, cfg.RoomSearched)
			}
			if err := run(s, cfg.SMTDOP[i]); err != nil || i < len(smtPlacements)-1 {
				return err
			}
			return writeSMTDOPWinner(w, storePath, steps)
		}})
	}
	return steps
}

// smtDOPPoint is one placement and DOP of the step, over its repeats.
type smtDOPPoint struct {
	Placement string
	DOP       int
	QPH       float64 // median queries per hour
	Repeats   int
	Oversub   bool
}

// smtDOPPoints are the step's cells, grouped by placement and DOP in the
// order run, with their median queries per hour.
func smtDOPPoints(runs []*result.Run) ([]smtDOPPoint, error) {
	var out []smtDOPPoint
	for _, r := range runs {
		cells, err := result.KindQueryCell.All(r)
		if err != nil {
			return nil, err
		}
		var cfg transtats.RunConfig
		if err := json.Unmarshal(r.Config, &cfg); err != nil {
			return nil, fmt.Errorf("reading run %d's configuration: %w", r.ID, err)
		}
		byDOP := map[int][]result.QueryCell{}
		var dops []int
		for _, c := range cells {
			if c.Cell == nil {
				continue
			}
			if _, ok := byDOP[c.Cell.DOP]; !ok {
				dops = append(dops, c.Cell.DOP)
			}
			byDOP[c.Cell.DOP] = append(byDOP[c.Cell.DOP], c)
		}
		for _, d := range dops {
			g := byDOP[d]
			p := smtDOPPoint{Placement: cfg.Placement, DOP: d, Repeats: len(g),
				QPH: stats.MedianOf(g, func(c result.QueryCell) float64 { return c.QueriesPerHour })}
			p.Oversub = g[0].Workers != nil && g[0].Workers.Oversubscribed
			out = append(out, p)
		}
	}
	return out, nil
}

// writeSMTDOPWinner says, from the step's stored runs, the queries per
// hour of each placement and DOP and which was best.
func writeSMTDOPWinner(w io.Writer, storePath string, steps []*step) error {
	st, err := store.Open(storePath)
	if err != nil {
		return err
	}
	defer st.Close()
	var runs []*result.Run
	for _, s := range steps {
		if s.id == 0 {
			continue
		}
		r, err := st.Get(s.id)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	pts, err := smtDOPPoints(runs)
	if err != nil || len(pts) == 0 {
		return err
	}
	fmt.Fprintln(w, smtDOPText(pts))
	return nil
}

// smtDOPText is the step's comparison in one line: "SMT x DOP, P1
// queries/h (median of 4): smt=on DOP 1 100, ...; best smt=on DOP 8".
func smtDOPText(pts []smtDOPPoint) string {
	best := slices.MaxFunc(pts, func(a, b smtDOPPoint) int {
		switch {
		case a.QPH < b.QPH:
			return -1
		case a.QPH > b.QPH:
			return 1
		}
		return 0
	})
	var parts []string
	for _, p := range pts {
		s := fmt.Sprintf("%s DOP %d %.0f", p.Placement, p.DOP, p.QPH)
		if p.Oversub {
			s += " (oversubscribed)"
		}
		parts = append(parts, s)
	}
	return fmt.Sprintf("SMT x DOP, P1 queries/h (median of %d): %s; best %s DOP %d", pts[0].Repeats, strings.Join(parts, ", "), best.Placement, best.DOP)
}
