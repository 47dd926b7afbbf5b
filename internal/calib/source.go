package calib

import (
	"fmt"
	"github.com/numalab/numalab/internal/setting"
	"github.com/numalab/numalab/internal/units"

	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
)

// nodeMatrix is the probe's node latency matrix reordered to t's nodes, or
// nil unless it covers exactly the nodes with CPUs and t has no
// memory-only nodes.
func nodeMatrix(p ProbeLatency, t *result.Topology) [][]float64 {
	sum := p.Summary
	if sum == nil {
		return nil
	}
	if len(sum.Nodes) != len(t.Nodes) || len(sum.MatrixNS) != len(sum.Nodes) {
		return nil
	}
	pos := map[int]int{}
	for i, id := range sum.Nodes {
		pos[id] = i
	}
	m := make([][]float64, len(t.Nodes))
	for i, a := range t.Nodes {
		pa, ok := pos[a.ID]
		if !ok || len(sum.MatrixNS[pa]) != len(sum.Nodes) {
			return nil
		}
		m[i] = make([]float64, len(t.Nodes))
		for j, b := range t.Nodes {
			pb, ok := pos[b.ID]
			if !ok {
				return nil
			}
			m[i][j] = sum.MatrixNS[pa][pb]
		}
	}
	return m
}

// coresPerPackage is the physical cores of the topology's smallest
// package (0 unknown).
func coresPerPackage(t *result.Topology) int {
	if t == nil {
		return 0
	}
	per := map[int]int{}
	for _, c := range t.Cores {
		per[c.Package]++
	}
	least := 0
	for _, n := range per {
		if least == 0 || n < least {
			least = n
		}
	}
	return least
}

// topologyGHz is the highest maximum CPU frequency a topology records, in
// GHz, or 0.
func topologyGHz(t *result.Topology) float64 {
	if t == nil {
		return 0
	}
	var mhz float64
	for _, c := range t.CPUs {
		mhz = max(mhz, c.MaxMHz)
	}
	return mhz / 1000
}

// MachineSpec says where a Machine's latencies and cores come from: given
// latencies, a topology (its node latencies, or its distances scaled to
// the local latency), or a stored memory probe with the machine it ran on.
// Given figures override what a probe measured.
type MachineSpec struct {
	LocalNS, RemoteNS float64 // 0: not given
	// OneSocketNS is one socket's latency when it differs from a
	// multi-socket server's local latency (0: the same); the uniform model
	// only.
	OneSocketNS float64
	// TwoHopNS is the remote latency two hops away (0: not given): with
	// it, and no topology, the uniform model goes beyond
	// model.PublishedSockets (model.Machine.TwoHopNS).
	TwoHopNS         float64
	BufferNS         float64
	BufferMinSockets int
	Locality         float64 // -1: none (every node equally likely)
	CoresPerSocket   int     // 0: the topology's, else 1
	Topology         *result.Topology
	Probe            *ProbeLatency // with Topology the probed machine's (nil: none)
}

// Build makes the Machine for up to maxSockets sockets (the remote latency
// is needed only above one). It returns the topology that limits socket
// counts (nil: none) and the core clock measured or recorded with the
// machine (0: unknown). Its errors name the flags of 'numalab model' that
// would supply what is missing.
func (s MachineSpec) Build(maxSockets int) (model.Machine, *result.Topology, float64, error) {
	t := s.Topology
	local, remote := s.LocalNS, s.RemoteNS
	localSet, remoteSet := local > 0, remote > 0
	ghz := topologyGHz(t)
	src := "flags"
	runCores := 0 // cores per socket of a one-node probe's machine
	if p := s.Probe; p != nil {
		// A stored memory probe: its measured latencies stand in for
		// latencies not given, and its measured clock for the clock.
		if p.GHz > 0 {
			ghz = p.GHz
		}
		if !localSet && p.LocalNS > 0 {
			local, localSet = p.LocalNS, true
		}
		if !remoteSet && p.RemoteNS > 0 {
			remote, remoteSet = p.RemoteNS, true
		}
		if t != nil && s.LocalNS == 0 && s.RemoteNS == 0 && len(t.Nodes) > 1 && !p.NoNUMAEffect {
			if mat := nodeMatrix(*p, t); mat != nil {
				t.LatencyNS = mat
			}
		}
		if t == nil || len(t.Nodes) <= 1 || p.NoNUMAEffect {
			// One measured node says nothing about sockets this machine
			// lacks: model them with the local latency and --remote-ns.
			// A matrix with no NUMA effect counts as one node: it is
			// never a latency ratio.
			src = fmt.Sprintf("run %d: measured local latency (memlat.Summary)", p.Run)
			if p.NoNUMAEffect {
				src += ", its NUMA matrix unused: remote no slower than local (no NUMA effect)"
			}
			runCores = coresPerPackage(t)
			t = nil
		}
	}
	var mc model.Machine
	if t != nil {
		switch {
		case len(t.LatencyNS) > 0:
		case len(t.Distances) > 0 && !localSet:
			return model.Machine{}, nil, 0, setting.Errorf("local-ns", "missing: %s has node distances but no latencies; "+
				"give a measured local latency to scale them, e.g. --local-ns 90", t.Source)
		case len(t.Distances) == 0 && (!localSet || (len(t.Nodes) > 1 && !remoteSet)):
			return model.Machine{}, nil, 0, setting.Together([]string{"local-ns", "remote-ns"},
				"%s has neither node latencies nor distances; give both, e.g. --local-ns 90 --remote-ns 140", t.Source)
		case len(t.Distances) == 0 && maxSockets > model.PublishedSockets:
			return model.Machine{}, nil, 0, setting.Errorf("sockets",
				"%d sockets need the hops between them, and %s has neither node latencies nor distances to give them: %s",
				maxSockets, t.Source, model.BeyondHint)
		}
		var err error
		mc, err = TopologyMachine(t, local, remote)
		if err != nil {
			return model.Machine{}, nil, 0, fmt.Errorf("reading latencies from %s: %w", t.Source, err)
		}
		mc.Source = t.Source + ": " + mc.Source
		if len(t.LatencyNS) == 0 && len(t.Distances) == 0 && len(mc.Sockets) > model.PublishedSockets {
			// Without distances nothing gives the hops: stop where the
			// published figures do.
			mc.Sockets = mc.Sockets[:model.PublishedSockets]
		}
	} else {
		if !localSet {
			return model.Machine{}, nil, 0, setting.New("local-ns",
				"missing: give the local memory latency, e.g. --local-ns 67 (or a machine with --topology FILE or --from-run ID)")
		}
		if maxSockets > 1 && !remoteSet {
			return model.Machine{}, nil, 0, setting.New("remote-ns",
				"missing: more than one socket needs the remote memory latency, e.g. --remote-ns 125 (or --sockets 1)")
		}
		if maxSockets > model.PublishedSockets && s.TwoHopNS == 0 {
			return model.Machine{}, nil, 0, setting.Errorf("sockets",
				"%d sockets need the hops between them: the published figures stop at %d, and one remote latency gives "+
					"no hops: %s", maxSockets, model.PublishedSockets, model.BeyondHint)
		}
		mc = model.Machine{Source: src, LocalNS: local, RemoteNS: remote, OneSocketNS: s.OneSocketNS, TwoHopNS: s.TwoHopNS,
			CoresPerSocket: max(runCores, 1)}
	}
	if s.CoresPerSocket > 0 {
		mc.CoresPerSocket = s.CoresPerSocket
	}
	mc.BufferNS, mc.BufferMinSockets, mc.Locality = s.BufferNS, s.BufferMinSockets, s.Locality
	return mc, t, ghz, nil
}

// RunMachine is what a stored run offers the model: the machine it ran on
// (its source naming the run) and, for a memory probe, its clock and
// latencies (ReadProbe); nil for what the run does not have.
func RunMachine(r *result.Run) (*result.Topology, *ProbeLatency, error) {
	p, err := ReadProbe(r)
	if err != nil {
		return nil, nil, err
	}
	if r.Machine == nil && p.Summary == nil {
		return nil, nil, fmt.Errorf("run %d was stored without its machine's topology or a memory probe summary "+
			"(try --topology FILE, or a 'numalab probe mem' run)", r.ID)
	}
	var t *result.Topology
	if r.Machine != nil {
		c := *r.Machine
		c.Source = fmt.Sprintf("run %d (%s)", r.ID, r.Machine.Source)
		t = &c
	}
	if p.Summary == nil {
		return t, nil, nil
	}
	return t, &p, nil
}

// fromMeasured takes LocalNS from the measured fit stored in run (kind
// RunFit), for a probe that measured no DRAM latency (cut before its
// largest working set): the random chain its first memory's cells were
// timed next to, mapped as their data is. Without such a chain p stays as
// it is.
func fromMeasured(p *ProbeLatency, run *result.Run) error {
	f, err := KindMeasuredFit.Last(run)
	if err != nil || f == nil || len(f.Memory) == 0 || !(f.Memory[0].LatencyNS > 0) {
		return err
	}
	mem := f.Memory[0]
	p.LocalNS, p.FromFit = mem.LatencyNS, true
	p.LocalWhat = fmt.Sprintf("a random chain in %s timed next to run %d's cells (%s, mapped as its data is): "+
		"memory probe run %d was cut before its DRAM point",
		mem.Name, run.ID, units.Bytes(mem.ChainBytes), p.Run)
	return nil
}
