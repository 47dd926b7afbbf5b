package transtats

import (
	"cmp"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/estimate"
	"slices"

	"github.com/numalab/numalab/internal/planest"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// Estimates set the optimizer's estimated speedup (the plan's cost at the
// lowest DOP over its cost at each higher DOP, same query and streams)
// beside the measured one (the query's mean time at the lowest DOP over its
// mean time at this one, medians over repeats: in a closed loop the same
// as the ratio of queries per hour, without its rounding to the whole
// queries a window finished, which for a query of 20 s in a 30 s window
// reads 1 at both DOPs), flagging a departure beyond 2× either
// way and a plan that changed from the previous DOP (first repeat's plans).
// Only PostgreSQL's cost prices parallelism (planest.Prices): on DuckDB
// and SQLite there are no rows. Paced cells and cells without a figure are
// left out.
func Estimates(cells []*result.QueryCell) []estimate.Row {
	type key struct {
		query   string
		streams int
	}
	type point struct {
		mean       []float64
		cost       float64
		unit, plan string
	}
	byKey := map[key]map[int]*point{}
	for _, c := range cells {
		if c.Cell == nil || c.Cell.Pace != nil || c.Cell.Total.Count == 0 {
			continue
		}
		k := key{c.Query, c.Cell.Streams}
		if byKey[k] == nil {
			byKey[k] = map[int]*point{}
		}
		d := max(c.Cell.DOP, 1)
		p := byKey[k][d]
		if p == nil {
			p = &point{cost: c.Cost, unit: c.CostUnit, plan: PlanShape(c.PlanBefore)}
			byKey[k][d] = p
		}
		p.mean = append(p.mean, c.Cell.Total.MeanUS)
	}
	keys := make([]key, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.SortFunc(keys,
		func(a, b key) int { return cmp.Or(cmp.Compare(a.query, b.query), cmp.Compare(a.streams, b.streams)) })
	var rows []estimate.Row
	for _, k := range keys {
		dops := make([]int, 0, len(byKey[k]))
		for d := range byKey[k] {
			dops = append(dops, d)
		}
		slices.Sort(dops)
		base := byKey[k][dops[0]]
		baseMean := stats.Median(base.mean)
		for i, d := range dops[1:] {
			p := byKey[k][d]
			measured := 0.0
			if m := stats.Median(p.mean); m > 0 {
				measured = baseMean / m
			}
			est, departs := planest.Speedup(p.unit, base.cost, p.cost, measured)
			if est == 0 {
				continue
			}
			prev := byKey[k][dops[i]]
			rows = append(rows, estimate.Row{Query: k.query, Streams: k.streams, DOP: d, BaseCost: base.cost, Cost: p.cost,
				Estimated: est, Measured: measured, Departs: departs,
				PlanChanged: prev.plan != "" && p.plan != "" && prev.plan != p.plan})
		}
	}
	return rows
}

// NoEstimate says why a run on engine over dops has no estimated speedup,
// or "" when it may have one (PostgreSQL) or needs none (one DOP).
func NoEstimate(name string, dops []int) string {
	spec, _ := engine.Lookup(name)
	if len(dops) < 2 || spec.Parallel.Costed {
		return ""
	}
	if spec.Plan == engine.PlanDuckJSON {
		return "no estimated speedup: " + spec.Title +
			"'s plans carry no cost, and the estimated rows that stand in for one do not change with the thread count"
	}
	return "no estimated speedup: " + name + "'s plans carry no cost"
}
