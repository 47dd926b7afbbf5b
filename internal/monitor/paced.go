package monitor

import (
	"fmt"
	"io"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/sweep"
)

// DefaultPacedLoad is the paced load of a monitoring run, as a fraction of
// the capacity its saturated cells measured.
const DefaultPacedLoad = 0.5

// TwoLoads is Plan's cells and slots at saturation, then the same again
// (same order, same alternation of on and off) marked Paced: those run
// open-loop at a fraction of the capacity the first half measured (see
// Pacer). What monitoring costs at saturation is throughput; at a paced
// load the throughput is the schedule's, and the cost moves into CPU and
// latency.
func TwoLoads(template sweep.Cell, fs []Facility, repeat int) ([]sweep.Cell, []Slot) {
	cells, slots := Plan(template, fs, repeat)
	n := len(cells)
	for i := range n {
		c, s := cells[i], slots[i]
		c.Index, s.Paced = len(cells), true
		cells, slots = append(cells, c), append(slots, s)
	}
	return cells, slots
}

// Pacer is sweep.Plan.Pace for TwoLoads: saturated cells run closed; a
// paced cell runs at fraction of the capacity, the median throughput of
// the saturated cells with their facility off, arriving as load says.
func Pacer(slots []Slot, fraction float64, load sweep.Pacing, seed int64) func(sweep.Cell, []*result.Cell) drive.Pace {
	return func(c sweep.Cell, before []*result.Cell) drive.Pace {
		if !slots[c.Index].Paced {
			return drive.Pace{}
		}
		return load.Pace(min(max(fraction*Capacity(slots, before), 1), drive.MaxRate), seed)
	}
}

// Capacity is the median throughput of the saturated cells of before
// (cells of TwoLoads, by index) that ran with their facility off.
func Capacity(slots []Slot, before []*result.Cell) float64 {
	var off []float64
	for _, m := range before {
		if s := slots[m.Index]; !s.Paced && !s.On && !m.Interrupted && m.Total.Count > 0 {
			off = append(off, m.TPS)
		}
	}
	return stats.Median(off)
}

// PacedAnalysis is what each facility costs at the paced load.
type PacedAnalysis struct {
	Fraction  float64         `json:"fraction"` // of the capacity
	Rate      float64         `json:"rate_per_s"`
	Overheads []PacedOverhead `json:"overheads"`
}

// PacedOverhead is one facility at the paced load: what it added, on
// against off, to the machine's CPU busy % and to p50 and p99 latency
// (from intended start), each a Hodges-Lehmann shift with its interval,
// and the throughput both sides achieved (the schedule's, unless the
// facility made the server fall behind it).
type PacedOverhead struct {
	Facility string         `json:"facility"`
	CPUAdded stats.Shift    `json:"cpu_pct_added"` // percentage points of the machine's CPUs
	P50Added stats.Shift    `json:"p50_us_added"`
	P99Added stats.Shift    `json:"p99_us_added"`
	Off      stats.Interval `json:"off_tps"`
	On       stats.Interval `json:"on_tps"`
}

// AnalyzePaced is the analysis of the paced cells, run at fraction of the
// capacity; cells cut short, and cells without a CPU figure for the CPU
// shift, are left out.
func AnalyzePaced(cells []Cell, fraction float64) PacedAnalysis {
	a := PacedAnalysis{Fraction: fraction}
	type side struct{ cpu, p50, p99, tps []float64 }
	sides := map[string]*[2]side{}
	var order []string
	for _, c := range cells {
		if !c.Paced || c.Cell.Interrupted || c.Cell.Total.Count == 0 {
			continue
		}
		if c.Cell.Pace != nil {
			a.Rate = c.Cell.Pace.Rate
		}
		s := sides[c.Facility]
		if s == nil {
			s = &[2]side{}
			sides[c.Facility] = s
			order = append(order, c.Facility)
		}
		i := 0
		if c.On {
			i = 1
		}
		if u := c.Cell.Usage; u != nil && len(u.CPUs) > 0 {
			var busy float64
			for _, cpu := range u.CPUs {
				busy += cpu.BusyPct
			}
			s[i].cpu = append(s[i].cpu, busy/float64(len(u.CPUs)))
		}
		s[i].p50 = append(s[i].p50, c.Cell.Total.P50US)
		s[i].p99 = append(s[i].p99, c.Cell.Total.P99US)
		s[i].tps = append(s[i].tps, c.Cell.TPS)
	}
	for _, f := range order {
		s := sides[f]
		a.Overheads = append(a.Overheads, PacedOverhead{Facility: f,
			CPUAdded: stats.ShiftOf(s[0].cpu, s[1].cpu), P50Added: stats.ShiftOf(s[0].p50, s[1].p50),
			P99Added: stats.ShiftOf(s[0].p99, s[1].p99), Off: stats.Summarize(s[0].tps), On: stats.Summarize(s[1].tps)})
	}
	return a
}

// WritePacedAnalysis prints what each facility added at the paced load.
func WritePacedAnalysis(w io.Writer, a PacedAnalysis) {
	const f = "%-21v %12v %12v  %-30v %-30v %v\n"
	fmt.Fprintf(w, "\nAt a paced load (%.2f of capacity, %s calls/s): what each facility adds, "+
		"on − off, Hodges-Lehmann shift with its %.0f%% interval\n",
		a.Fraction, perSecond(a.Rate), 100*stats.Confidence)
	fmt.Fprintf(w, f, "facility", "tps off", "tps on", "CPU % added (points)", "p50 µs added", "p99 µs added")
	for _, o := range a.Overheads {
		fmt.Fprintf(w, f, o.Facility, perSecond(o.Off.Median), perSecond(o.On.Median), shift(o.CPUAdded),
			shift(o.P50Added), shift(o.P99Added))
	}
}

func shift(s stats.Shift) string {
	if !s.HasCI {
		return fmt.Sprintf("%+.1f n=%d+%d", s.Estimate, s.NA, s.NB)
	}
	return fmt.Sprintf("%+.1f [%.1f, %.1f] n=%d+%d", s.Estimate, s.Lo, s.Hi, s.NA, s.NB)
}

// KindPacedAnalysis stores a monitoring run's paced analysis.
const KindPacedAnalysis result.Kind[PacedAnalysis] = "monitor.PacedAnalysis"
