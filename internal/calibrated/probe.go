package calibrated

import (
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// ProbeLatency is what a stored memory probe ('numalab probe mem') gives
// the model. ReadProbe chooses it by one rule:
//
//   - clock: the summary's measured clock, else the median of the stored
//     clock measurements;
//   - local latency: the DRAM latency (memlat.Summary.DRAM): the NUMA
//     matrix's local latency, else the fully random chain's DRAM latency
//     with 4 KiB pages, else with 2 MiB pages;
//   - remote latency: the mean of the matrix's off-diagonal cells; 0 on a
//     machine with one node, where it cannot be measured, and 0 when the
//     matrix measured no NUMA effect (memlat.Summary.NoNUMAEffect): such a
//     matrix is never a latency ratio, so the probe counts as one node.
type ProbeLatency struct {
	Run       int64
	Summary   *memlat.Summary // nil: the probe stored none
	GHz       float64         // 0: no clock measured
	LocalNS   float64         // 0: no DRAM latency measured
	LocalWhat string          // which measurement LocalNS is, in words
	RemoteNS  float64         // 0: one node, or no NUMA effect
	// NoNUMAEffect is set when the matrix had remote cells but measured
	// remote no slower than local; its remote latency is then dropped.
	NoNUMAEffect bool
	// FromFit is set when LocalNS is not the probe's but the chain a
	// measured fit timed next to its cells (fromMeasured).
	FromFit bool
}

// ReadProbe chooses the clock and latencies of a stored memory probe.
func ReadProbe(probe *result.Run) (ProbeLatency, error) {
	p := ProbeLatency{Run: probe.ID}
	var err error
	if p.Summary, err = memlat.KindSummary.Last(probe); err != nil {
		return p, err
	}
	if s := p.Summary; s != nil {
		p.GHz, p.RemoteNS = s.GHz, s.RemoteNS
		if s.NoNUMAEffect {
			p.RemoteNS, p.NoNUMAEffect = 0, true
		}
		p.LocalNS, p.LocalWhat = s.DRAM()
	}
	if !(p.GHz > 0) {
		clocks, err := memlat.KindClock.All(probe)
		if err != nil {
			return p, err
		}
		var g []float64
		for _, c := range clocks {
			g = append(g, c.GHz.Median)
		}
		p.GHz = stats.Median(g)
	}
	return p, nil
}
