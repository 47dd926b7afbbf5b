package hosts

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aclements/go-moremath/stats"
	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/result"
)

// Confidence is the level of every band: the interval for the mean of a
// cell's repeats.
const Confidence = 0.95

// BandText says what the bands cover, for the output and the docs.
const BandText = "tps: the 95% confidence interval of the mean of the best cell's repeats " +
	"(mean ± t·s/√n, Student's t with n − 1 degrees of freedom; none with one repeat); " +
	"cost per 1,000 tps: the total cost at the band's ends"

// Machine is what a host is, as its run and its memory probe recorded it.
type Machine struct {
	CPUModel   string  `json:"cpu_model"`
	Sockets    int     `json:"sockets"`
	Cores      int     `json:"cores"`   // physical cores
	Threads    int     `json:"threads"` // logical CPUs
	SMT        int     `json:"smt"`     // hardware threads per core
	Nodes      int     `json:"nodes"`
	MemGiB     float64 `json:"mem_gib"`
	Hypervisor string  `json:"hypervisor,omitempty"`
	Governor   string  `json:"governor,omitempty"`
	// From the memory probe (ProbeRun; 0: none): the clock and the
	// local and remote DRAM latency as the model reads them.
	ProbeRun int64   `json:"probe_run,omitempty"`
	GHz      float64 `json:"ghz,omitempty"`
	LocalNS  float64 `json:"local_ns,omitempty"`
	RemoteNS float64 `json:"remote_ns,omitempty"`
}

// SocketFit is what a host's calibrated model predicts of its CPU in
// Sockets sockets, at the threads per core it ran.
type SocketFit struct {
	Sockets    int     `json:"sockets"`
	TotalTPS   float64 `json:"total_tps"`
	TPSPerCore float64 `json:"tps_per_core"`
	VsOne      float64 `json:"total_vs_1_socket"`
}

// distorting are the figures a host's comparison rests on: its tps, its
// tps per core, and the latency its fit reads. A preflight warning that
// distorts one of them is shown beside the host.
var distorting = []preflight.Figure{preflight.OLTP, preflight.Scaling, preflight.Latency}

// measureHost reads one host's figures from its source, at price p.
func measureHost(s Source, p Price) (Host, error) {
	r := s.Run
	h := Host{Name: r.Host, Store: s.Store, Run: r.ID, Started: r.Started, Version: r.Version,
		Machine: machineOf(r.Machine)}
	if n := clock(r); n != "" {
		h.Notes = append(h.Notes, n)
	}
	cells, err := result.KindCell.All(r)
	if err != nil {
		return h, err
	}
	points := cellPoints(cells)
	if len(points) == 0 {
		return h,
			fmt.Errorf("host %s's run %d has no complete closed-loop cell with transactions: nothing to compare", h.Name, r.ID)
	}
	best := points[0]
	for _, pt := range points {
		if pt.mean > best.mean {
			best = pt
		}
		i := slices.IndexFunc(h.Streams, func(sp StreamPoint) bool { return sp.Streams == pt.cell.Streams })
		sp := StreamPoint{Streams: pt.cell.Streams, Placement: pt.cell.Placement, TPS: pt.mean, Low: pt.low, High: pt.high}
		switch {
		case i < 0:
			h.Streams = append(h.Streams, sp)
		case pt.mean > h.Streams[i].TPS:
			h.Streams[i] = sp
		}
	}
	slices.SortFunc(h.Streams, func(a, b StreamPoint) int { return cmp.Compare(a.Streams, b.Streams) })
	h.Cell, h.Repeats, h.TPS, h.TPSLow, h.TPSHigh = best.cell, best.tps, best.mean, best.low, best.high
	h.Banded, h.TPSPerCore = len(best.tps) >= 2, best.perCore
	if h.TPS > 0 && len(best.tps) >= 2 {
		h.Spread = stats.StdDev(best.tps) / h.TPS
	}
	if err := h.cost(p, r); err != nil {
		return h, err
	}
	if s.Probe != nil {
		pl, err := calib.ReadProbe(s.Probe)
		if err == nil {
			h.Machine.ProbeRun, h.Machine.GHz, h.Machine.LocalNS, h.Machine.RemoteNS = s.Probe.ID,
				pl.GHz, pl.LocalNS, pl.RemoteNS
		}
	}
	h.Sockets, h.Fit = socketFits(s)
	pf, err := preflight.Kind.Last(r)
	if err != nil {
		return h, err
	}
	if pf != nil {
		for _, w := range pf.Warnings {
			if slices.ContainsFunc(w.Affects, func(f preflight.Figure) bool { return slices.Contains(distorting, f) }) {
				h.Warnings = append(h.Warnings, w.String())
			}
		}
	}
	return h, nil
}

// point is a cell point's repeats.
type point struct {
	cell            Cell
	tps, perCores   []float64
	mean, low, high float64
	perCore         float64
}

// cellPoints groups a run's complete closed-loop cells by point, in the
// order first measured, with each point's mean tps and band.
func cellPoints(cells []result.Cell) []point {
	var pts []point
	for _, c := range cells {
		if c.Interrupted || c.Pace != nil || !(c.TPS > 0) {
			continue
		}
		k := Cell{Workload: c.Workload, Streams: c.Streams, Placement: c.Placement, DOP: c.DOP,
			DataNode: c.DataNode, Cores: c.Cores}
		i := slices.IndexFunc(pts, func(p point) bool { return p.cell == k })
		if i < 0 {
			pts = append(pts, point{cell: k})
			i = len(pts) - 1
		}
		pts[i].tps = append(pts[i].tps, c.TPS)
		pts[i].perCores = append(pts[i].perCores, c.TPSPerCore)
	}
	for i := range pts {
		p := &pts[i]
		p.mean, p.low, p.high = Band(p.tps)
		p.perCore = stats.Mean(p.perCores)
	}
	return pts
}

// Band is the mean of xs and its 95% confidence interval (Student's t),
// its low end at least 0 (a throughput); with fewer than two values, the
// mean alone (low = high = mean).
func Band(xs []float64) (mean, low, high float64) {
	mean = stats.Mean(xs)
	if len(xs) < 2 {
		return mean, mean, mean
	}
	w := halfWidth(len(xs), stats.StdDev(xs))
	return mean, max(mean-w, 0), mean + w
}

// halfWidth is the band's half width for n repeats of standard deviation
// sd: t(0.975, n − 1)·sd/√n.
func halfWidth(n int, sd float64) float64 {
	t := -stats.InvCDF(stats.TDist{V: float64(n - 1)})((1 - Confidence) / 2)
	return t * sd / math.Sqrt(float64(n))
}

// machineOf is what a run's topology says of the machine.
func machineOf(t *result.Topology) Machine {
	if t == nil {
		return Machine{}
	}
	m := Machine{CPUModel: t.CPUModel, Sockets: len(t.Packages), Cores: len(t.Cores), Threads: len(t.CPUs),
		SMT: t.ThreadsPerCore(), Nodes: len(t.Nodes), Hypervisor: t.Hypervisor}
	for _, n := range t.Nodes {
		m.MemGiB += float64(n.MemBytes) / (1 << 30)
	}
	for _, c := range t.CPUs {
		if c.Governor != "" {
			m.Governor = c.Governor
			break
		}
	}
	return m
}

// socketFits is what the host's calibration predicts of 2 and 4 sockets
// of its CPU, at the threads per core it ran, and which fit that is.
func socketFits(s Source) ([]SocketFit, string) {
	c := s.Fit
	if c == nil {
		return nil, "no fit: " + s.FitError
	}
	var out []SocketFit
	for _, n := range []int{2, 4} {
		var row *model.Row
		for i, r := range c.Table.Rows {
			if r.Sockets == n && (row == nil || r.SMT == c.ThreadsPerCore()) {
				row = &c.Table.Rows[i]
			}
		}
		if row != nil {
			out = append(out, SocketFit{Sockets: n, TotalTPS: row.TotalTPS, TPSPerCore: row.TPSPerCore, VsOne: row.TotalVs1S})
		}
	}
	what := fmt.Sprintf("A = %s core cycles and M = %s memory waits per transaction, stall share %s at one socket",
		model.Thousands(c.Workload.Core()), model.Thousands(c.Workload.Waits()), model.Percent(c.StallShare))
	if c.Fit == nil {
		what += " (one latency point: the stall share is the published one)"
	}
	if c.RemoteAssumed {
		what += "; several sockets' latencies from the published ratios"
	}
	if c.FitChoice != "" {
		// Select names the host's newest model-fit run, which calib
		// words as a run named on the command line.
		what += "; " + strings.Replace(c.FitChoice, "named by --fit-run", "the host's newest in its store", 1)
	}
	if len(out) == 0 {
		return nil, "no prediction: " + what
	}
	return out, what
}
