package fleet

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/workload/null"
)

// Verdicts of a host on one figure.
const (
	OK       = "ok"                 // within the fleet
	Outlier  = "outlier"            // far from the fleet, beyond its own noise
	Noisy    = "noisy"              // far from the fleet, but its own repeats reach the fleet median
	Once     = "far, measured once" // far from the fleet, but measured once: its noise is unknown
	NoRun    = "no run"             // no comparable run measured this figure
	TooFew   = "too few hosts"      // fewer than MinHosts hosts measured this figure
	MinHosts = 3
)

// The outlier rule's thresholds.
const (
	// ZLimit is the modified z-score (Iglewicz and Hoaglin) beyond which a
	// host is far from the fleet.
	ZLimit = 3.5
	// MADFloor is the least MAD used, as a share of the fleet median: in a
	// fleet more alike than this, a deviation under ZLimit/0.6745 × 1%
	// (about 5.2%) is never an outlier.
	MADFloor = 0.01
)

// RuleText states the outlier rule, for --help, the docs and the output.
const RuleText = `a host's value is the median of its repeats; ` +
	`z = 0.6745 × (value − fleet median) / max(MAD, 1% of the fleet median), ` +
	`MAD being the median of the hosts' absolute deviations from the fleet median; ` +
	`|z| > 3.5 is an outlier when the host has 2 or more repeats and the fleet median lies outside them (min to max), ` +
	`"noisy" when it lies inside them, "far, measured once" with one repeat (not an outlier: its noise is unknown); ` +
	`a figure measured by fewer than 3 hosts has no verdicts`

// Figure is one figure across the fleet.
type Figure struct {
	Name    string           `json:"name"` // "DRAM latency"
	Unit    string           `json:"unit"` // "ns"
	Kind    string           `json:"kind"` // the run kind it comes from
	Affects preflight.Figure `json:"affects"`
	// Definition says what the figure is, where it comes from.
	Definition string       `json:"definition"`
	Median     float64      `json:"median"`
	MAD        float64      `json:"mad"`
	Hosts      []HostFigure `json:"hosts"` // in the fleet's host order
}

// HostFigure is one host's value of a figure and its verdict.
type HostFigure struct {
	Host      string    `json:"host"`
	Value     float64   `json:"value"`     // the median of Repeats; 0 with no run
	Repeats   []float64 `json:"repeats"`   // what the host's run measured, in order
	Deviation float64   `json:"deviation"` // (Value − fleet median) / fleet median
	Z         float64   `json:"z"`         // the modified z-score
	Verdict   string    `json:"verdict"`
}

// figures collects each figure's repeats from every host's runs.
func figures(hosts []string, sources []Source) ([]Figure, error) {
	index := map[string]int{}
	for i, h := range hosts {
		index[h] = i
	}
	var figs []Figure
	add := func(proto Figure, host string, repeats []float64) {
		if len(repeats) == 0 {
			return
		}
		j := slices.IndexFunc(figs, func(f Figure) bool { return f.Name == proto.Name })
		if j < 0 {
			proto.Hosts = make([]HostFigure, len(hosts))
			for i, h := range hosts {
				proto.Hosts[i] = HostFigure{Host: h, Verdict: NoRun}
			}
			figs = append(figs, proto)
			j = len(figs) - 1
		}
		figs[j].Hosts[index[host]].Repeats = repeats
	}
	for _, s := range sources {
		var err error
		switch s.Run.Kind {
		case result.RunProbeMem:
			err = probeFigures(s.Run, add)
		case result.RunOLTP:
			err = oltpFigures(s.Run, add)
		case null.RunKind:
			err = nullFigures(s.Run, add)
		}
		if err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(figs, func(a, b Figure) int {
		return cmp.Or(cmp.Compare(slices.Index(Kinds, a.Kind), slices.Index(Kinds, b.Kind)),
			cmp.Compare(order(a), order(b)), cmp.Compare(a.Name, b.Name))
	})
	return figs, nil
}

func order(f Figure) int {
	switch f.Name {
	case dramName:
		return 0
	case bwName:
		return 1
	}
	return 2
}

const (
	dramName = "DRAM latency"
	bwName   = "bandwidth"
)

// probeFigures are a memory probe's DRAM latency and bandwidth. The DRAM
// latency is calib.ReadProbe's local latency; its repeats are that value
// scaled by the probe's own repeats of the fully random chain's largest
// point (memlat.Repeat, 4 KiB pages, else 2 MiB), relative to their median,
// so that the host's spread is the probe's own.
func probeFigures(r *result.Run, add func(Figure, string, []float64)) error {
	p, err := calib.ReadProbe(r)
	if err != nil {
		return err
	}
	if p.LocalNS > 0 {
		reps, err := memlat.KindRepeat.All(r)
		if err != nil {
			return err
		}
		var ns []float64
		for _, pages := range []string{memlat.Pages4K, memlat.Pages2M} {
			for _, x := range reps {
				if x.Chain == memlat.Random && x.Pages == pages && x.NS.Median > 0 {
					ns = append(ns, x.NS.Median)
				}
			}
			if len(ns) > 0 {
				break
			}
		}
		vals := []float64{p.LocalNS}
		if m := stats.Median(ns); m > 0 {
			vals = vals[:0]
			for _, x := range ns {
				vals = append(vals, p.LocalNS*x/m)
			}
		}
		add(Figure{Name: dramName, Unit: "ns", Kind: r.Kind, Affects: preflight.Latency,
			Definition: "local DRAM latency as the model reads a probe (calib.ReadProbe): the NUMA matrix's local latency, " +
				"else the random chain's DRAM latency"}, r.Host, vals)
	}
	bw, err := memlat.KindBandwidth.Last(r)
	if err != nil || bw == nil {
		return err
	}
	best := 0.0
	for _, pt := range bw.Read {
		best = max(best, pt.GBps)
	}
	if best > 0 {
		add(Figure{Name: bwName, Unit: "GB/s", Kind: r.Kind, Affects: preflight.Bandwidth,
			Definition: "the highest read bandwidth of the probe's thread counts, all threads together"},
			r.Host, []float64{best})
	}
	return nil
}

// oltpFigures are an OLTP run's tps per core, one figure per cell point
// (engine, workload, streams, placement, data node), its repeats the
// point's repeats.
func oltpFigures(r *result.Run, add func(Figure, string, []float64)) error {
	cells, err := result.KindCell.All(r)
	if err != nil {
		return err
	}
	type point struct {
		fig  Figure
		reps []float64
	}
	var points []point
	for _, c := range cells {
		if c.Interrupted || c.TPSPerCore <= 0 {
			continue
		}
		name := fmt.Sprintf("%s tps per core (%s, %d %s, %s)",
			c.Workload, c.Engine, c.Streams, plural(c.Streams, "stream", "streams"), cmp.Or(c.Placement, "not pinned"))
		if c.DataNode >= 0 {
			name += fmt.Sprintf(", data on node %d", c.DataNode)
		}
		j := slices.IndexFunc(points, func(p point) bool { return p.fig.Name == name })
		if j < 0 {
			points = append(points, point{fig: Figure{Name: name, Unit: "tps/core", Kind: r.Kind, Affects: preflight.OLTP,
				Definition: "successful transactions per second per physical core of the placement, each repeat of the cell"}})
			j = len(points) - 1
		}
		points[j].reps = append(points[j].reps, c.TPSPerCore)
	}
	for _, p := range points {
		add(p.fig, r.Host, p.reps)
	}
	return nil
}

// nullFigures are a null-transaction run's round trips per second, all
// streams together, one figure per cell point (engine, transport,
// protocol, client/backend pairing, streams), its repeats the point's
// repeats. What distorts OLTP (clock, C-states, steal) distorts them too.
func nullFigures(r *result.Run, add func(Figure, string, []float64)) error {
	cells, err := null.KindCell.All(r)
	if err != nil {
		return err
	}
	var names []string
	reps := map[string][]float64{}
	for _, c := range cells {
		if c.Cell.Interrupted || c.Cell.TPS <= 0 {
			continue
		}
		name := fmt.Sprintf("null round trips/s (%s, %s", c.Cell.Engine, c.Transport)
		if c.Protocol != "" {
			name += ", " + c.Protocol
		}
		name += fmt.Sprintf(", %s, %d %s)", c.Pairing.Name, c.Cell.Streams, plural(c.Cell.Streams, "stream", "streams"))
		if _, ok := reps[name]; !ok {
			names = append(names, name)
		}
		reps[name] = append(reps[name], c.Cell.TPS)
	}
	for _, name := range names {
		add(Figure{Name: name, Unit: "calls/s", Kind: r.Kind, Affects: preflight.OLTP,
			Definition: "SELECT 1 round trips per second, all streams together, each repeat of the cell (numalab run null)"},
			r.Host, reps[name])
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// judge fills the fleet median, the MAD and every host's verdict (Rule).
func judge(f *Figure) {
	var vals []float64
	for i := range f.Hosts {
		h := &f.Hosts[i]
		if len(h.Repeats) > 0 {
			h.Value = stats.Median(h.Repeats)
			vals = append(vals, h.Value)
		}
	}
	f.Median = stats.Median(vals)
	var dev []float64
	for _, v := range vals {
		dev = append(dev, math.Abs(v-f.Median))
	}
	f.MAD = stats.Median(dev)
	scale := max(f.MAD, MADFloor*math.Abs(f.Median))
	for i := range f.Hosts {
		h := &f.Hosts[i]
		if len(h.Repeats) == 0 {
			continue
		}
		if f.Median != 0 {
			h.Deviation = (h.Value - f.Median) / f.Median
		}
		if scale > 0 {
			h.Z = 0.6745 * (h.Value - f.Median) / scale
		}
		h.Verdict = verdict(h, f.Median, len(vals))
	}
}

// verdict is Rule for one host.
func verdict(h *HostFigure, median float64, hosts int) string {
	switch {
	case hosts < MinHosts:
		return TooFew
	case math.Abs(h.Z) <= ZLimit:
		return OK
	case len(h.Repeats) < 2:
		return Once
	case slices.Min(h.Repeats) <= median && median <= slices.Max(h.Repeats):
		return Noisy
	}
	return Outlier
}
