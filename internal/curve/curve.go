// Package curve measures a throughput–latency curve: one closed-loop cell
// for the capacity, then open-loop cells at fractions of it, from a small
// load to past saturation, and finds the knee, the lowest load at which
// p99 latency (from each call's intended start) leaves its low-load floor
// by a stated factor.
//
// The knee is known only between two measured loads: the last whose p99
// stayed within the factor and the first that left it. curve reports that
// bracket as the knee's uncertainty, and an estimate inside it
// interpolated on log p99; with repeats, each repeat's knee too. It does
// not fit a queueing model, and it refuses nothing a sweep would run.
package curve

import (
	"fmt"
	"math"
	"slices"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/sweep"
)

// DefaultFractions are the loads of a curve, as fractions of the measured
// capacity: dense near saturation, where the knee usually is.
var DefaultFractions = []float64{0.1, 0.2, 0.4, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2}

// DefaultFactor is how far p99 must rise above its low-load floor for a
// load to be past the knee.
const DefaultFactor = 2.0

// FloorBelow is the highest fraction of capacity whose p99 counts in the
// floor; when no load is that low, the lowest load alone is the floor.
const FloorBelow = 0.3

// Plan is a curve's cells: the template (one stream count, one
// placement) first as the closed-loop capacity cell, then once per
// fraction per repeat, each repeat running the fractions in ascending
// order.
func Plan(template sweep.Cell, fractions []float64, repeat int) []sweep.Cell {
	c := template
	c.Index, c.Repeat = 0, 0
	cells := []sweep.Cell{c}
	for r := range repeat {
		for range fractions {
			c := template
			c.Index, c.Repeat = len(cells), r
			cells = append(cells, c)
		}
	}
	return cells
}

// FractionOf is the fraction of capacity cell index of Plan runs at; 0 for
// the capacity cell.
func FractionOf(fractions []float64, index int) float64 {
	if index == 0 {
		return 0
	}
	return fractions[(index-1)%len(fractions)]
}

// Pacer is sweep.Plan.Pace for Plan's cells: the capacity cell closed, the
// others at their fraction of the capacity cell's throughput, paced as
// load says (its arrivals; its rate and think time are the curve's to
// set).
func Pacer(fractions []float64, load sweep.Pacing, seed int64) func(sweep.Cell, []*result.Cell) drive.Pace {
	arrivals := sweep.Pacing{Arrivals: load.Arrivals}
	return func(c sweep.Cell, before []*result.Cell) drive.Pace {
		if c.Index == 0 || len(before) == 0 {
			return drive.Pace{}
		}
		return arrivals.Pace(Rate(FractionOf(fractions, c.Index), before[0].TPS), seed)
	}
}

// Rate is the arrival rate of a cell at fraction of capacity (calls per
// second), kept between one call a second and drive.MaxRate.
func Rate(fraction, capacity float64) float64 {
	return min(max(fraction*capacity, 1), drive.MaxRate)
}

// Point is one load of a curve.
type Point struct {
	Fraction    float64 `json:"fraction"`      // of the capacity asked for
	Offered     float64 `json:"offered_per_s"` // calls per second asked for
	Achieved    float64 `json:"achieved_tps"`  // successful calls per second completed
	P50US       float64 `json:"p50_us"`        // from intended start
	P95US       float64 `json:"p95_us"`
	P99US       float64 `json:"p99_us"`
	ServiceP99  float64 `json:"service_p99_us"` // from actual start
	CPUPct      float64 `json:"cpu_pct"`        // the machine's CPUs busy, mean over them; -1 when not measured
	Late        int64   `json:"late"`           // calls started more than drive.LateAfter after their intended start
	Due         int64   `json:"due"`            // calls due in the window
	Backlog     int64   `json:"backlog"`        // due in the window and never started
	Repeat      int     `json:"repeat"`
	Errors      int64   `json:"errors"`
	Interrupted bool    `json:"interrupted,omitempty"`
}

// Knee is where p99 left its floor.
type Knee struct {
	Found bool `json:"found"`
	// Estimate is the offered load (calls per second) at which p99 is
	// interpolated to reach Factor × floor, on log p99 between Below and
	// Above; Below and Above bracket it: the knee is in (Below, Above].
	Estimate float64 `json:"estimate_per_s"`
	Below    float64 `json:"below_per_s"`
	Above    float64 `json:"above_per_s"`
	// EstimateFraction, BelowFraction and AboveFraction are the same as
	// fractions of the capacity.
	EstimateFraction float64 `json:"estimate_fraction"`
	BelowFraction    float64 `json:"below_fraction"`
	AboveFraction    float64 `json:"above_fraction"`
}

// Curve is a measured curve and its knee.
type Curve struct {
	Capacity    float64   `json:"capacity_tps"`    // the closed-loop cell's throughput
	CapacityP99 float64   `json:"capacity_p99_us"` // its p99 (from actual start: a closed loop has no other)
	CapacityCPU float64   `json:"capacity_cpu_pct"`
	Streams     int       `json:"streams"`
	Arrivals    string    `json:"arrivals"` // "poisson" or "uniform"
	Factor      float64   `json:"factor"`   // the knee's rise over the floor
	FloorUS     float64   `json:"floor_p99_us"`
	Points      []Point   `json:"points"`            // in the order measured
	Knee        Knee      `json:"knee"`              // from the median p99 of each load
	Repeats     []Knee    `json:"repeats,omitempty"` // each repeat's own knee, when there are several
	Notes       []string  `json:"notes,omitempty"`
	Fractions   []float64 `json:"fractions"`
}

// Limit is the p99 (µs) past which a load is beyond the knee: Factor
// times the low-load floor; 0 without a floor.
func (cv Curve) Limit() float64 { return cv.Factor * cv.FloorUS }

// KindCurve stores a curve with its run; RunKind is the run's kind
// ('numalab run oltp --curve'), SQLRunKind that of 'numalab run sql
// --curve'.
const (
	KindCurve  result.Kind[Curve] = "curve.Curve"
	RunKind                       = "oltp-curve"
	SQLRunKind                    = "sql-curve"
)

// Analyze makes the curve of cells measured from Plan's (the capacity
// cell first), with the knee at factor × the floor.
func Analyze(cells []*result.Cell, fractions []float64, factor float64) Curve {
	cv := Curve{Factor: factor, Fractions: fractions}
	if len(cells) == 0 {
		return cv
	}
	capCell := cells[0]
	cv.Capacity, cv.CapacityP99, cv.CapacityCPU, cv.Streams = capCell.TPS, capCell.Total.P99US,
		cpuPct(capCell), capCell.Streams
	for i, c := range cells[1:] {
		p := Point{Fraction: FractionOf(fractions, i+1), Achieved: c.TPS, P50US: c.Total.P50US, P95US: c.Total.P95US,
			P99US: c.Total.P99US, CPUPct: cpuPct(c), Repeat: c.Repeat, Errors: c.Total.Errors, Interrupted: c.Interrupted}
		if c.Pace != nil {
			p.Offered, p.ServiceP99, p.Late, p.Due, p.Backlog = c.Pace.Rate, c.Pace.Service.P99US, c.Pace.Late,
				c.Pace.Offered, c.Pace.Backlog
			cv.Arrivals = c.Pace.Arrivals
		}
		cv.Points = append(cv.Points, p)
	}
	loads, p99s := medians(cv.Points, -1)
	cv.FloorUS = floor(loads, p99s, cv.Capacity)
	cv.Knee = knee(loads, p99s, cv.FloorUS, factor, cv.Capacity)
	repeats := map[int]bool{}
	for _, p := range cv.Points {
		repeats[p.Repeat] = true
	}
	if len(repeats) > 1 {
		for r := range len(repeats) {
			l, q := medians(cv.Points, r)
			cv.Repeats = append(cv.Repeats, knee(l, q, floor(l, q, cv.Capacity), factor, cv.Capacity))
		}
	}
	if !cv.Knee.Found && len(loads) > 0 {
		cv.Notes = append(cv.Notes, fmt.Sprintf(
			"p99 stayed within %g× its floor up to %.0f/s (%.2f of capacity): the knee is past the highest load measured",
			factor, loads[len(loads)-1], loads[len(loads)-1]/cv.Capacity))
	}
	for _, p := range cv.Points {
		if p.Fraction < 1 && p.Due > 0 && p.Backlog*100 > p.Due {
			cv.Notes = append(cv.Notes, fmt.Sprintf("at %.2f of capacity (repeat %d) %d of the %d calls due in the "+
				"window had not started when it closed: the stream fell behind a load below the capacity its closed-loop "+
				"cell measured (a machine whose share of CPU changed, or a stall)",
				p.Fraction, p.Repeat, p.Backlog, p.Due))
			break
		}
	}
	return cv
}

// cpuPct is the mean busy percentage of the machine's CPUs in c's window;
// -1 when it was not measured.
func cpuPct(c *result.Cell) float64 {
	if c.Usage == nil || len(c.Usage.CPUs) == 0 {
		return -1
	}
	var sum float64
	for _, u := range c.Usage.CPUs {
		sum += u.BusyPct
	}
	return sum / float64(len(c.Usage.CPUs))
}

// medians groups the points of repeat (all of them when repeat < 0) by
// fraction and returns, in ascending fraction, the median offered load and
// the median p99 of each. Interrupted points do not count.
func medians(points []Point, repeat int) (loads, p99s []float64) {
	var kept []Point
	for _, p := range points {
		if (repeat < 0 || p.Repeat == repeat) && !p.Interrupted && p.Offered > 0 {
			kept = append(kept, p)
		}
	}
	fractions, groups := stats.Group(kept, func(p Point) float64 { return p.Fraction })
	slices.Sort(fractions)
	for _, f := range fractions {
		loads = append(loads, stats.MedianOf(groups[f], func(p Point) float64 { return p.Offered }))
		p99s = append(p99s, stats.MedianOf(groups[f], func(p Point) float64 { return p.P99US }))
	}
	return loads, p99s
}

// floor is the low-load p99: the median of the p99s at loads up to
// FloorBelow of capacity, or the lowest load's alone.
func floor(loads, p99s []float64, capacity float64) float64 {
	var low []float64
	for i, l := range loads {
		if l <= FloorBelow*capacity {
			low = append(low, p99s[i])
		}
	}
	if len(low) == 0 && len(p99s) > 0 {
		low = p99s[:1]
	}
	if len(low) == 0 {
		return 0
	}
	return stats.Median(low)
}

// knee finds the first load (ascending) above the floor's loads whose p99
// exceeds factor × floor.
func knee(loads, p99s []float64, floor, factor, capacity float64) Knee {
	limit := factor * floor
	for i, q := range p99s {
		if floor <= 0 || q <= limit || i == 0 || loads[i] <= FloorBelow*capacity {
			continue
		}
		k := Knee{Found: true, Below: loads[i-1], Above: loads[i], Estimate: loads[i]}
		if lo, hi := math.Log(p99s[i-1]), math.Log(q); hi > lo && p99s[i-1] > 0 {
			t := (math.Log(limit) - lo) / (hi - lo)
			k.Estimate = loads[i-1] + min(max(t, 0), 1)*(loads[i]-loads[i-1])
		}
		if capacity > 0 {
			k.EstimateFraction, k.BelowFraction, k.AboveFraction = k.Estimate/capacity, k.Below/capacity, k.Above/capacity
		}
		return k
	}
	return Knee{}
}
