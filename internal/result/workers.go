package result

import (
	"fmt"
	"slices"
	"strings"
)

// WorkerCPUs is where a cell's parallel workers ran (DuckDB's worker
// threads, PostgreSQL's parallel worker processes), sampled from /proc
// while the cell ran, warm-up included: the CPU time each worker used
// between two samples is put on the CPU it was on at the second.
type WorkerCPUs struct {
	// Kind says what the workers are: "duckdb worker threads",
	// "postgres parallel workers".
	Kind string `json:"kind"`
	// Placement are the CPUs the workers were meant to run on (the
	// cell's placement); nil when the cell was not placed.
	Placement []int `json:"placement,omitempty"`
	// How says how numalab put them there, or Why why it could not.
	How string `json:"how,omitempty"`
	Why string `json:"why,omitempty"`
	// Oversubscribed: the DOP is above the placement's CPUs.
	Oversubscribed bool `json:"oversubscribed,omitempty"`
	Workers        int  `json:"workers"` // workers seen
	Samples        int  `json:"samples"` // sampling rounds
	// PerCPU is CPU time per CPU, by CPU number.
	PerCPU []CPUTime `json:"per_cpu"`
	// OutsideMS is the CPU time on CPUs outside Placement (0 when not
	// placed).
	OutsideMS float64 `json:"outside_ms"`
}

// CPUTime is the workers' CPU time on one CPU.
type CPUTime struct {
	CPU int     `json:"cpu"`
	MS  float64 `json:"ms"`
}

// TotalMS is the workers' CPU time on every CPU.
func (w *WorkerCPUs) TotalMS() float64 {
	t := 0.0
	for _, c := range w.PerCPU {
		t += c.MS
	}
	return t
}

// Outside is the share of the workers' CPU time outside the placement.
func (w *WorkerCPUs) Outside() float64 {
	if t := w.TotalMS(); t > 0 {
		return w.OutsideMS / t
	}
	return 0
}

// Short says in a few words where the workers ran, for a table cell:
// "1-2 in" (every sample inside the placement), "0-3 30% out", "0-1"
// (not placed), "not placed" (numalab could not place them), "-" (no CPU
// time seen); "oversub" is added when the DOP is above the placement's CPUs.
func (w *WorkerCPUs) Short() string {
	if w == nil {
		return "-"
	}
	var on []int
	for _, c := range w.PerCPU {
		if c.MS > 0 {
			on = append(on, c.CPU)
		}
	}
	s := "-"
	switch {
	case w.Why != "":
		s = "not placed"
	case len(on) == 0:
	case len(w.Placement) == 0:
		s = cpuRanges(on)
	case w.OutsideMS == 0:
		s = cpuRanges(on) + " in"
	default:
		s = fmt.Sprintf("%s %.0f%% out", cpuRanges(on), 100*w.Outside())
	}
	if w.Oversubscribed {
		s += " oversub"
	}
	return s
}

// cpuRanges is "0-3,6" for 0,1,2,3,6 (sorted input).
func cpuRanges(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		} else {
			parts = append(parts, fmt.Sprint(cpus[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Notes are what a reader of the cell must know about its workers: that
// numalab could not place them, or the time they ran outside the placement.
func (w *WorkerCPUs) Notes() []string {
	if w == nil || len(w.Placement) == 0 {
		return nil
	}
	var out []string
	if w.Why != "" {
		out = append(out, fmt.Sprintf("its %s are not placed: %s", w.Kind, w.Why))
	}
	if w.OutsideMS > 0 {
		out = append(out, fmt.Sprintf("its %s ran %.0f ms of %.0f ms outside the placement's CPUs %s",
			w.Kind, w.OutsideMS, w.TotalMS(), cpuRanges(w.Placement)))
	}
	return out
}

// MergeWorkers adds up the records of one cell's repeats: CPU time per
// CPU and outside the placement summed, the rest from the first; nil when
// none has a record.
func MergeWorkers(ws []*WorkerCPUs) *WorkerCPUs {
	var out *WorkerCPUs
	per := map[int]float64{}
	for _, w := range ws {
		if w == nil {
			continue
		}
		if out == nil {
			c := *w
			out = &c
			out.OutsideMS, out.Samples = 0, 0
		}
		out.OutsideMS += w.OutsideMS
		out.Samples += w.Samples
		for _, c := range w.PerCPU {
			per[c.CPU] += c.MS
		}
	}
	if out == nil {
		return nil
	}
	out.PerCPU = nil
	for cpu, ms := range per {
		out.PerCPU = append(out.PerCPU, CPUTime{CPU: cpu, MS: ms})
	}
	slices.SortFunc(out.PerCPU, func(a, b CPUTime) int { return a.CPU - b.CPU })
	return out
}
