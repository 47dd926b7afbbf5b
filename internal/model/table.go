package model

import (
	"errors"
	"fmt"
)

// Row is one configuration of the capacity planner's table.
type Row struct {
	Sockets        int     `json:"sockets"`
	CoresPerSocket int     `json:"cores_per_socket"`
	SMT            int     `json:"smt"` // hardware threads per core
	GHz            float64 `json:"ghz"`
	LatencyNS      float64 `json:"latency_ns"`     // average memory latency
	LatencyCycles  float64 `json:"latency_cycles"` // the same in core cycles
	CyclesPerTxn   float64 `json:"cycles_per_txn"`
	TPSPerCore     float64 `json:"tps_per_core"` // per physical core, all its threads
	TotalTPS       float64 `json:"total_tps"`
	// PerCoreVs1S and TotalVs1S are relative to one socket at the same
	// clock and SMT.
	PerCoreVs1S float64 `json:"per_core_vs_1s"`
	TotalVs1S   float64 `json:"total_vs_1s"`
	// SMTGain is per-core throughput relative to one thread per core.
	SMTGain float64 `json:"smt_gain"`
	// Match1SNS is the latency a single socket with the same cores, clock
	// and SMT would need for the same total throughput; nil when none
	// would do (see Match1SNote).
	Match1SNS   *float64 `json:"match_1s_latency_ns"`
	Match1SNote string   `json:"match_1s_note,omitempty"`
	// Beyond is set above PublishedSockets sockets (Machine.BeyondNote).
	Beyond bool `json:"beyond_published,omitempty"`
}

// Scaling is the change from one socket count to another at the same clock
// and SMT.
type Scaling struct {
	GHz          float64 `json:"ghz"`
	SMT          int     `json:"smt"`
	From         int     `json:"from_sockets"`
	To           int     `json:"to_sockets"`
	TotalRatio   float64 `json:"total_ratio"`
	PerCoreRatio float64 `json:"per_core_ratio"`
}

// Table is the model evaluated over a grid of configurations.
type Table struct {
	Workload Workload  `json:"workload"`
	Machine  Machine   `json:"machine"`
	Rows     []Row     `json:"rows"`
	Scaling  []Scaling `json:"scaling"`
	// SMTSource is Grid.SMTSource: where a measured SMT gain comes from.
	SMTSource string `json:"smt_source,omitempty"`
}

// Grid is the set of configurations to evaluate: every combination of
// clock, SMT and socket count, in that nesting order.
type Grid struct {
	GHz     []float64
	SMT     []int
	Sockets []int
	// SMTGain is the throughput of a core with more than one hardware
	// thread over one thread; 0: PublishedSMTGain's default.
	SMTGain float64
	// SMTSource, for a measured SMTGain, says what measured it ("": the
	// gain is given, or the published default).
	SMTSource string
}

// Gain is the SMT gain for k threads per core: 1 for one thread.
func (g Grid) Gain(k int) float64 {
	switch {
	case k <= 1:
		return 1
	case g.SMTGain > 0:
		return g.SMTGain
	}
	return PublishedSMTGain.Value
}

// Evaluate computes the table for every configuration in g.
func Evaluate(w Workload, mc Machine, g Grid) (Table, error) {
	if err := w.Validate(); err != nil {
		return Table{}, err
	}
	if mc.CoresPerSocket < 1 {
		return Table{}, fmt.Errorf("%d cores per socket: want at least 1: %w", mc.CoresPerSocket, ErrInput)
	}
	if n := mc.MaxSockets(); n > 0 {
		for _, s := range g.Sockets {
			if s > n {
				return Table{}, fmt.Errorf("%d sockets do not fit a topology of %d: %w", s, n, ErrInput)
			}
		}
	}
	t := Table{Workload: w, Machine: mc, SMTSource: g.SMTSource}
	l1, err := mc.Latency(1)
	if err != nil {
		return Table{}, err
	}
	for _, f := range g.GHz {
		if !(f > 0) {
			return Table{}, fmt.Errorf("clock %v GHz: want a positive frequency: %w", f, ErrInput)
		}
		for _, k := range g.SMT {
			if k < 1 {
				return Table{}, fmt.Errorf("%d threads per core: want at least 1: %w", k, ErrInput)
			}
			gain := g.Gain(k)
			base := ThreadTPS(w, l1, f, gain)
			first := len(t.Rows)
			for _, s := range g.Sockets {
				l, err := mc.Latency(s)
				if err != nil {
					return Table{}, err
				}
				if !(l > 0) {
					return Table{}, fmt.Errorf("%d sockets: latency %v ns: want a positive latency: %w", s, l, ErrInput)
				}
				per := ThreadTPS(w, l, f, gain)
				r := Row{
					Sockets: s, CoresPerSocket: mc.CoresPerSocket, SMT: k, GHz: f,
					LatencyNS: l, LatencyCycles: LatencyCycles(l, f), CyclesPerTxn: CyclesPerTxn(w, l, f),
					TPSPerCore: per, TotalTPS: TotalTPS(per, mc.CoresPerSocket, s),
					PerCoreVs1S: Ratio(base, per),
					TotalVs1S:   Ratio(TotalTPS(base, mc.CoresPerSocket, 1), TotalTPS(per, mc.CoresPerSocket, s)),
					SMTGain:     gain,
					Beyond:      s > PublishedSockets,
				}
				if m, err := MatchingSingleSocketLatency(w, f, gain, s, per); err == nil {
					r.Match1SNS = &m
				} else if errors.Is(err, ErrUnreachable) {
					r.Match1SNote = "no latency is low enough"
				} else {
					r.Match1SNote = "latency does not matter (miss 0)"
				}
				t.Rows = append(t.Rows, r)
			}
			rows := t.Rows[first:]
			// From each socket count to the next, and from the first to
			// every other: 1S→2S, 1S→4S, 2S→4S for sockets 1,2,4.
			for i := range rows {
				for j := i + 1; j < len(rows); j++ {
					if i > 0 && j > i+1 {
						continue
					}
					a, b := rows[i], rows[j]
					t.Scaling = append(t.Scaling, Scaling{
						GHz: f, SMT: k, From: a.Sockets, To: b.Sockets,
						TotalRatio: Ratio(a.TotalTPS, b.TotalTPS), PerCoreRatio: Ratio(a.TPSPerCore, b.TPSPerCore),
					})
				}
			}
		}
	}
	return t, nil
}
