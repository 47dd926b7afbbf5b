package tpch

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/dop"
	"github.com/numalab/numalab/internal/estimate"
	"github.com/numalab/numalab/internal/planest"
	"github.com/numalab/numalab/internal/result"
)

// Analysis is what a tpch run's cells say: speedup against DOP per
// query, plan changes, the cost model against the clock and a DOP
// recommendation from the throughput test.
type Analysis struct {
	Queries []QueryScaling `json:"queries"`
	Changes []PlanChange   `json:"plan_changes"`
	Cost    *CostFit       `json:"cost_fit,omitempty"`
	Advice  *DOPAdvice     `json:"dop_advice,omitempty"`
	// Rule is the DOP rule of thumb each query's Rule comes from, its
	// threshold a cost (a time turned into one by Cost's fit); RuleNote
	// says why there is none when one was asked for.
	Rule     *dop.Rule `json:"dop_rule,omitempty"`
	RuleNote string    `json:"dop_rule_note,omitempty"`
}

// RuleSpec is the DOP rule of thumb to set beside the measured DOPs: its
// threshold as given (a time is turned into a cost with the run's fitted
// seconds per cost unit) and the machine's cores.
type RuleSpec struct {
	Threshold      dop.Threshold
	CoresPerSocket int
	Sockets        int
}

// QueryScaling is one query's times against DOP (medians over repeats).
type QueryScaling struct {
	Query   int         `json:"query"`
	Points  []DOPPoint  `json:"points"`
	BestDOP int         `json:"best_dop"`
	StopsAt int         `json:"stops_at,omitempty"` // the DOP after which the next gains less than 10%; 0: scales to the last
	Cost    float64     `json:"cost,omitempty"`     // plan cost at the lowest DOP
	Rule    *dop.Advice `json:"rule,omitempty"`     // the rule of thumb's DOP for that cost
}

// DOPPoint is a query at one DOP.
type DOPPoint struct {
	DOP      int     `json:"dop"`
	Seconds  float64 `json:"seconds"` // median over repeats
	Min, Max float64 `json:"-"`
	Speedup  float64 `json:"speedup"` // against the lowest DOP
	Used     int     `json:"dop_used,omitempty"`
	Rows     int64   `json:"rows"`
	Repeats  int     `json:"repeats"`
	// Explained says some repeat finished no run in its window, so its
	// time is PostgreSQL's EXPLAIN ANALYZE's one run.
	Explained bool `json:"timed_by_explain,omitempty"`
	// Cost is the plan's cost at this DOP (the plan captured in the first
	// repeat); PlanChanged says the plan's operators differ from the
	// previous DOP's.
	Cost        float64 `json:"cost,omitempty"`
	PlanChanged bool    `json:"plan_changed,omitempty"`
	// EstSpeedup is the optimizer's: cost at the lowest DOP over cost at
	// this one; 0 where the engine's cost does not price parallelism
	// (only PostgreSQL's does: planest.Prices). Departs says the measured
	// speedup is more than 2× above or below it.
	EstSpeedup float64 `json:"estimated_speedup,omitempty"`
	Departs    bool    `json:"departs_from_estimate,omitempty"`
}

// estimate sets each point's estimated speedup against the lowest DOP's
// cost, and flags points whose measured speedup departs from it.
func (q *QueryScaling) estimate(unit string) {
	if len(q.Points) == 0 {
		return
	}
	for i := range q.Points {
		p := &q.Points[i]
		p.EstSpeedup, p.Departs = planest.Speedup(unit, q.Points[0].Cost, p.Cost, p.Speedup)
	}
}

// Estimates are the points above the lowest DOP with an estimated speedup,
// query by query.
func (a Analysis) Estimates() []estimate.Row {
	var rows []estimate.Row
	for _, q := range a.Queries {
		for _, p := range q.Points[1:] {
			if p.EstSpeedup == 0 {
				continue
			}
			rows = append(rows, estimate.Row{Query: QueryName(q.Query), DOP: p.DOP, BaseCost: q.Points[0].Cost, Cost: p.Cost,
				Estimated: p.EstSpeedup, Measured: p.Speedup, Departs: p.Departs, PlanChanged: p.PlanChanged})
		}
	}
	return rows
}

// PlanChange is a plan that differs between consecutive DOPs.
type PlanChange struct {
	Query   int      `json:"query"`
	FromDOP int      `json:"from_dop"`
	DOP     int      `json:"dop"`
	Removed []string `json:"removed,omitempty"`
	Added   []string `json:"added,omitempty"`
}

// String says what changed.
func (p PlanChange) String() string {
	what := "the operators' order or nesting changed"
	if len(p.Removed)+len(p.Added) > 0 {
		what = fmt.Sprintf("%s replaced by %s", orNone(p.Removed), orNone(p.Added))
	}
	return fmt.Sprintf("%s: DOP %d → %d: %s", QueryName(p.Query), p.FromDOP, p.DOP, what)
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, ", ")
}

// CostFit is seconds per cost unit fitted over the queries at the lowest
// DOP by the median ratio, and the queries far off it.
type CostFit struct {
	Unit           string      `json:"unit"`
	DOP            int         `json:"dop"`
	SecondsPerUnit float64     `json:"seconds_per_unit"`
	Points         []CostPoint `json:"points"`
	// Off are the queries more than 2× off the fitted line, largest error
	// first; Common the plan operators all of them have and at most half
	// of the queries on the line have.
	Off    []int    `json:"off"`
	Common []string `json:"common_operators,omitempty"`
}

// CostPoint is one query's cost, time and error (measured / fitted).
type CostPoint struct {
	Query     int      `json:"query"`
	Cost      float64  `json:"cost"`
	Seconds   float64  `json:"seconds"`
	Error     float64  `json:"error"`
	Operators []string `json:"operators"`
}

// Largest are the n queries with the largest error either way.
func (f *CostFit) Largest(n int) []CostPoint {
	ps := slices.Clone(f.Points)
	slices.SortStableFunc(ps,
		func(a, b CostPoint) int { return cmp.Compare(math.Abs(math.Log(b.Error)), math.Abs(math.Log(a.Error))) })
	return ps[:min(n, len(ps))]
}

// DOPAdvice is the server-wide DOP the throughput test supports.
type DOPAdvice struct {
	// PerStreams is, per stream count, each DOP's queries per hour and
	// slowest query.
	PerStreams []StreamsAdvice `json:"per_streams"`
	// Serial is the fewest concurrent streams from which DOP 1 gives the
	// most queries per hour at every higher stream count that chose a DOP
	// (BestQPH > 0); 0: never.
	Serial int `json:"serial_from_streams,omitempty"`
}

// NeverSerial says some stream count chose a DOP and none chose DOP 1.
func (a *DOPAdvice) NeverSerial() bool {
	chose := false
	for _, s := range a.PerStreams {
		if s.BestQPH == 1 {
			return false
		}
		chose = chose || s.BestQPH > 0
	}
	return chose
}

// StreamsAdvice is the throughput test at one stream count.
type StreamsAdvice struct {
	Streams int          `json:"streams"`
	Points  []Throughput `json:"points"`
	// BestQPH and BestSlowest are 0 when, at every DOP, the median repeat
	// finished no query in its window: then there is nothing to choose by.
	BestQPH     int `json:"best_qph_dop"`
	BestSlowest int `json:"best_slowest_dop"`
	// Clear says the best DOP's range over repeats does not overlap the
	// runner-up's (for queries per hour).
	Clear bool `json:"clear"`
}

// Throughput is one DOP at one stream count: medians and ranges over repeats.
type Throughput struct {
	DOP            int     `json:"dop"`
	QPH            float64 `json:"queries_per_hour"`
	QPHMin, QPHMax float64 `json:"-"`
	Slowest        float64 `json:"slowest_seconds"`
	SlowestQuery   int     `json:"slowest_query"`
	Repeats        int     `json:"repeats"`
}

// Analyze reads a run's cells; spec, if not nil, is the DOP rule of
// thumb set beside each query's measured best DOP.
func Analyze(cells []Cell, spec *RuleSpec) Analysis {
	var a Analysis
	byQ := map[int]map[int][]Cell{}
	byS := map[int]map[int][]Cell{}
	for _, c := range cells {
		// A throughput cell in which no query finished measured 0 queries
		// per hour; a power cell without a time measured nothing.
		if c.Cell == nil || (c.Mode == ModePower && c.Cell.Total.Count == 0 && !c.TimedByExplain) {
			continue
		}
		m, key := byQ, c.Query
		if c.Mode == ModeThroughput {
			m, key = byS, c.Streams
		}
		if m[key] == nil {
			m[key] = map[int][]Cell{}
		}
		m[key][c.DOP] = append(m[key][c.DOP], c)
	}
	fit := &CostFit{}
	for _, q := range sortedKeys(byQ) {
		qs := QueryScaling{Query: q}
		unit := ""
		var prev *planest.Plan
		prevDOP := 0
		for _, d := range sortedKeys(byQ[q]) {
			cs := byQ[q][d]
			secs := make([]float64, len(cs))
			p := DOPPoint{DOP: d, Repeats: len(cs)}
			for i, c := range cs {
				secs[i] = c.Seconds
				p.Rows = max(p.Rows, c.Rows)
				p.Explained = p.Explained || c.TimedByExplain
				if c.Plan != nil {
					p.Used, unit = c.Used, c.Plan.CostUnit
					if p.Cost == 0 {
						p.Cost = c.Plan.Cost
					}
					if prev != nil && prev.Shape != c.Plan.Shape {
						p.PlanChanged = true
						rm, ad := planest.Changed(*prev, *c.Plan)
						a.Changes = append(a.Changes, PlanChange{Query: q, FromDOP: prevDOP, DOP: d, Removed: rm, Added: ad})
					}
					if prev == nil {
						qs.Cost = c.Plan.Cost
						if c.Plan.Cost > 0 {
							fit.Unit, fit.DOP = c.Plan.CostUnit, d
							fit.Points = append(fit.Points, CostPoint{Query: q, Cost: c.Plan.Cost, Operators: c.Plan.Operators()})
						}
					}
					prev, prevDOP = c.Plan, d
				}
			}
			p.Seconds, p.Min, p.Max = median(secs), slices.Min(secs), slices.Max(secs)
			qs.Points = append(qs.Points, p)
		}
		base := qs.Points[0].Seconds
		best := 0
		for i := range qs.Points {
			qs.Points[i].Speedup = base / qs.Points[i].Seconds
			if qs.Points[i].Seconds < qs.Points[best].Seconds {
				best = i
			}
		}
		qs.BestDOP = qs.Points[best].DOP
		qs.estimate(unit)
		for i := 0; i+1 < len(qs.Points); i++ {
			if qs.Points[i+1].Seconds > 0.9*qs.Points[i].Seconds {
				qs.StopsAt = qs.Points[i].DOP
				break
			}
		}
		if n := len(fit.Points); n > 0 && fit.Points[n-1].Query == q {
			fit.Points[n-1].Seconds = base
		}
		a.Queries = append(a.Queries, qs)
	}
	if len(fit.Points) >= 3 {
		ratios := make([]float64, len(fit.Points))
		for i, p := range fit.Points {
			ratios[i] = p.Seconds / p.Cost
		}
		fit.SecondsPerUnit = median(ratios)
		var off [][]string
		inLine := map[string]int{} // operator: queries on the line that have it
		for i := range fit.Points {
			p := &fit.Points[i]
			p.Error = p.Seconds / (p.Cost * fit.SecondsPerUnit)
			if p.Error > 2 || p.Error < 0.5 {
				off = append(off, p.Operators)
				continue
			}
			for _, op := range p.Operators {
				inLine[op]++
			}
		}
		onLine := len(fit.Points) - len(off)
		for _, p := range fit.Largest(len(fit.Points)) {
			if p.Error > 2 || p.Error < 0.5 {
				fit.Off = append(fit.Off, p.Query)
			}
		}
		if len(off) > 0 {
			common := off[0]
			for _, ops := range off[1:] {
				common = slices.DeleteFunc(slices.Clone(common), func(o string) bool { return !slices.Contains(ops, o) })
			}
			// What most queries on the line have too explains nothing.
			fit.Common = slices.DeleteFunc(common, func(o string) bool { return onLine > 0 && 2*inLine[o] > onLine })
		}
		a.Cost = fit
	}
	if spec != nil {
		a.applyRule(*spec)
	}
	if len(byS) > 0 {
		adv := &DOPAdvice{}
		for _, s := range sortedKeys(byS) {
			sa := StreamsAdvice{Streams: s}
			for _, d := range sortedKeys(byS[s]) {
				cs := byS[s][d]
				qph := make([]float64, len(cs))
				slow := make([]float64, len(cs))
				t := Throughput{DOP: d, Repeats: len(cs)}
				for i, c := range cs {
					qph[i], slow[i] = c.QueriesPerHour, c.SlowestSeconds
					if c.SlowestSeconds >= slices.Max(slow[:i+1]) {
						t.SlowestQuery = c.Slowest
					}
				}
				t.QPH, t.QPHMin, t.QPHMax, t.Slowest = median(qph), slices.Min(qph), slices.Max(qph), median(slow)
				sa.Points = append(sa.Points, t)
			}
			best, bestSlow := 0, 0
			for i, p := range sa.Points {
				if p.QPH > sa.Points[best].QPH {
					best = i
				}
				if p.Slowest > 0 && (sa.Points[bestSlow].Slowest == 0 || p.Slowest < sa.Points[bestSlow].Slowest) {
					bestSlow = i
				}
			}
			if sa.Points[best].QPH == 0 {
				adv.PerStreams = append(adv.PerStreams, sa)
				continue
			}
			sa.BestQPH, sa.BestSlowest = sa.Points[best].DOP, sa.Points[bestSlow].DOP
			sa.Clear = true
			for i, p := range sa.Points {
				if i != best && p.QPHMax >= sa.Points[best].QPHMin {
					sa.Clear = false
				}
			}
			adv.PerStreams = append(adv.PerStreams, sa)
		}
		for i := len(adv.PerStreams) - 1; i >= 0 && adv.PerStreams[i].BestQPH <= 1; i-- {
			if adv.PerStreams[i].BestQPH == 1 {
				adv.Serial = adv.PerStreams[i].Streams
			}
		}
		a.Advice = adv
	}
	return a
}

// applyRule sets the rule of thumb's DOP beside each query with a plan
// cost, its threshold turned into a cost by the fitted seconds per unit
// when it is a time.
func (a *Analysis) applyRule(spec RuleSpec) {
	spu := 0.0
	if a.Cost != nil {
		spu = a.Cost.SecondsPerUnit
	}
	rule, err := spec.Threshold.Rule(spu, spec.CoresPerSocket, spec.Sockets)
	if err != nil {
		a.RuleNote = fmt.Sprintf("no DOP rule of thumb: threshold %s needs the seconds a cost unit takes, and no "+
			"fit of cost against time was made (it needs plan costs of 3 or more queries)", spec.Threshold)
		return
	}
	a.Rule = &rule
	for i := range a.Queries {
		if q := &a.Queries[i]; q.Cost > 0 {
			adv := rule.DOP(q.Cost)
			q.Rule = &adv
		}
	}
}

// Rung is where the rule of thumb's ladder steps to a DOP: from Cost (in
// seconds by the fit, when the threshold was a time).
type Rung struct {
	DOP     int     `json:"dop"`
	Cost    float64 `json:"cost"`
	Seconds float64 `json:"seconds,omitempty"`
}

// Rungs are the rule's ladder, DOP 2 at the threshold and doubling every
// 4× of cost, up to one socket's cores; none without a rule.
func (a Analysis) Rungs() []Rung {
	r := a.Rule
	if r == nil {
		return nil
	}
	var out []Rung
	for d, c := 2, r.Threshold; d <= r.CoresPerSocket; d, c = 2*d, 4*c {
		out = append(out, Rung{DOP: d, Cost: c, Seconds: c * r.SecondsPerUnit})
	}
	return out
}

func sortedKeys[V any](m map[int]V) []int {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// RunKind is the kind of a stored 'numalab run tpch' run.
const RunKind = "tpch"

// StorageAdvice sets PostgreSQL's random_page_cost/seq_page_cost
// (settings, as Describe records them) beside the random/sequential ratio
// a storage probe measured (nil: none stored), and says which settings the
// measurements support, with the evidence. It only suggests.
func StorageAdvice(settings map[string]string, probe *result.IORatio, fit *CostFit) []string {
	rnd, err1 := strconv.ParseFloat(settings["random_page_cost"], 64)
	seq, err2 := strconv.ParseFloat(settings["seq_page_cost"], 64)
	if err1 != nil || err2 != nil || seq <= 0 {
		return nil
	}
	out := []string{
		fmt.Sprintf("PostgreSQL assumes a random page costs %.2g sequential ones (random_page_cost %g / seq_page_cost %g).",
			rnd/seq, rnd, seq)}
	if probe == nil {
		return append(out, "No storage probe is stored: run 'numalab probe io --path DIR' on the database's disk "+
			"to set the storage's measured ratio beside it.")
	}
	out = append(out, fmt.Sprintf(
		"The storage probe measured %.1f: %.0f sequential 8 KiB pages/s against %.0f random reads/s at queue depth 1.",
		probe.Ratio, probe.SeqPagesPerSec, probe.RandomIOPS))
	suggest := math.Max(1.1, probe.Ratio) * seq
	why := "the measured ratio"
	if fit != nil && slices.ContainsFunc(fit.Common, func(op string) bool { return strings.Contains(op, "Index Scan") }) {
		why += "; the queries far off the cost line all have index scans, which random_page_cost prices"
	}
	if math.Abs(suggest-rnd)/rnd > 0.25 {
		out = append(out, fmt.Sprintf("Suggested, not applied: random_page_cost = %.1f (%s), for data that does "+
			"not fit in memory; data that is cached reads no disk, where 1.1 is the usual setting.", suggest, why))
	} else {
		out = append(out, "The setting is within 25% of the measured ratio: no change suggested.")
	}
	return out
}

// KindAnalysis is a run's analysis, stored after its cells.
const KindAnalysis result.Kind[Analysis] = "tpch.Analysis"
