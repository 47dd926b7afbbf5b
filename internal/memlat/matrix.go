package memlat

import (
	"context"
	"fmt"
	"slices"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/units"
)

// Matrix is latency from a thread on each node (rows) to memory bound to
// each node (columns), at one DRAM-sized working set.
type Matrix struct {
	CPUNodes  []int  `json:"cpu_nodes"`
	MemNodes  []int  `json:"mem_nodes"`
	CPUs      []int  `json:"cpus"` // the CPU each row ran on
	Bytes     int64  `json:"bytes"`
	Chain     string `json:"chain"`
	Pages     string `json:"pages,omitempty"` // asked for: "4k" or "2m"
	PageBytes int64  `json:"page_bytes"`      // obtained, in the mapping with the fewest huge pages
	// HugeFraction is the fraction of that mapping in 2 MiB pages.
	HugeFraction float64     `json:"huge_frac,omitempty"`
	NS           [][]Stat    `json:"ns"`
	Relative     [][]float64 `json:"relative"` // each cell's lowest clean window / the fastest cell's
	SingleNode   bool        `json:"single_node,omitempty"`
	// OnNode is, per memory node, the fraction of the buffer's pages found
	// on that node (move_pages), checked before measuring.
	OnNode []float64 `json:"on_node"`
	// Reused is set when the 1x1 matrix of a one-node machine is the
	// random-chain ladder's largest point rather than a separate bound run.
	Reused bool `json:"reused,omitempty"`
	// RemoteRatio is the mean of the remote cells (thread and memory on
	// different nodes) over the mean of the local ones, each cell its
	// lowest clean window; 0 when the matrix has no remote or no local cell.
	RemoteRatio float64 `json:"remote_ratio,omitempty"`
	// NoNUMAEffect is set when remote memory read no slower than local:
	// RemoteRatio below NUMAEffectRatio. Such a matrix measured no cost
	// of remote memory (emulated nodes, interleaved memory, or nodes that
	// share one memory controller) and must not be used as a latency
	// ratio: see Caveat.
	NoNUMAEffect bool `json:"no_numa_effect,omitempty"`
	// Inverted names the first remote cell that read faster than its
	// row's local cell, which real NUMA hardware does not do; such a
	// matrix is flagged NoNUMAEffect whatever its RemoteRatio.
	Inverted string `json:"inverted,omitempty"`
	// Cut is set when the probe stopped (its deadline, Ctrl-C, a failure)
	// before every cell was measured: a row of NS is then shorter than
	// MemNodes, or empty.
	Cut bool `json:"cut,omitempty"`
}

// NUMAEffectRatio is the remote-to-local latency ratio below which a
// matrix shows no NUMA effect. Remote memory costs 1.3x to 2x local
// between sockets (SLIT distances 20 to 32 against 10) and about 1.1x to
// 1.2x between the nodes of one socket (distance 11 or 12); QEMU's
// emulated nodes measured 0.98x. A cell is its lowest clean window, which
// repeats within a few percent on a quiet machine; on this busy shared
// 2-CPU VM the lowest window of one working set differed by up to 8%
// between fresh mappings, so an emulated matrix on a busy machine can land
// just above the threshold, and its relative column then shows why.
const NUMAEffectRatio = 1.05

// assess fills RemoteRatio, Inverted and NoNUMAEffect from NS.
func (m *Matrix) assess() {
	var loc, rem []float64
	m.RemoteRatio, m.NoNUMAEffect, m.Inverted = 0, false, ""
	for i, row := range m.NS {
		local := -1.0
		for j, st := range row {
			if m.CPUNodes[i] == m.MemNodes[j] {
				local = best(st)
				loc = append(loc, local)
			}
		}
		for j, st := range row {
			if m.CPUNodes[i] == m.MemNodes[j] {
				continue
			}
			rem = append(rem, best(st))
			if local > 0 && best(st) < local && m.Inverted == "" {
				m.Inverted = fmt.Sprintf("node %d's CPUs read node %d's memory in %.1f ns against %.1f ns local",
					m.CPUNodes[i], m.MemNodes[j], best(st), local)
			}
		}
	}
	if len(loc) == 0 || len(rem) == 0 || mean(loc) <= 0 {
		return
	}
	m.RemoteRatio = mean(rem) / mean(loc)
	m.NoNUMAEffect = m.RemoteRatio < NUMAEffectRatio || m.Inverted != ""
}

// Cells is how many cells were measured.
func (m *Matrix) Cells() int {
	n := 0
	for _, row := range m.NS {
		n += len(row)
	}
	return n
}

// Caveat is what a reader must know before using the matrix, or "".
func (m *Matrix) Caveat() string {
	if !m.NoNUMAEffect {
		return ""
	}
	why := fmt.Sprintf("remote reads took %.2fx local, under %.2fx", m.RemoteRatio, NUMAEffectRatio)
	if m.Inverted != "" {
		why = m.Inverted
	}
	return "no NUMA effect measured (emulated or interleaved memory?): " + why +
		"; this matrix is not a remote-to-local latency ratio and must not be used as one"
}

// probeMatrix measures latency from each node's CPUs to memory bound to
// each node.
func probeMatrix(ctx context.Context, cfg *Config, t *result.Topology, rep *Report, say func(string)) error {
	pages := cfg.Pages[len(cfg.Pages)-1]
	m := &Matrix{Bytes: cfg.MaxBytes, Chain: Random, Pages: pages}
	rep.Matrix = m
	if cfg.Quick && len(t.Nodes) == 1 && len(t.Nodes[0].CPUs) > 0 && len(rep.Ladders) > 0 {
		// One node: the matrix is the random chain's DRAM point just
		// measured on node 0's CPU; the quick probe does not repeat it.
		l := rep.Ladders[len(rep.Ladders)-1]
		m.CPUNodes, m.MemNodes, m.CPUs = []int{t.Nodes[0].ID}, []int{t.Nodes[0].ID}, []int{l.CPU}
		m.Pages, m.PageBytes, m.HugeFraction, m.SingleNode = l.Pages, l.PageBytes, l.HugeFraction, true
		m.NS = [][]Stat{{l.Last().NS}}
		m.Relative = [][]float64{{1}}
		m.Reused = true
		return nil
	}
	want := func(id int) bool { return len(cfg.Nodes) == 0 || slices.Contains(cfg.Nodes, id) }
	for _, n := range t.Nodes {
		if !want(n.ID) {
			continue
		}
		if len(n.CPUs) > 0 {
			m.CPUNodes = append(m.CPUNodes, n.ID)
			m.CPUs = append(m.CPUs, n.CPUs[0])
		}
		if n.MemBytes > 0 {
			m.MemNodes = append(m.MemNodes, n.ID)
		}
	}
	if len(m.CPUNodes) == 0 || len(m.MemNodes) == 0 {
		return fmt.Errorf("measuring the NUMA matrix: nodes %v have no CPUs or no memory (try without --nodes)", cfg.Nodes)
	}
	m.SingleNode = len(t.Nodes) == 1
	note, err := matrixBytes(cfg, t, m)
	if err != nil {
		return err
	}
	if note != "" {
		rep.Notes = append(rep.Notes, note)
	}
	m.NS = make([][]Stat, len(m.CPUNodes))
	// The cells measured when a stop cuts the matrix are kept, each row as
	// far as it got.
	defer m.finish()
	for j, mn := range m.MemNodes {
		say(fmt.Sprintf("NUMA matrix: memory on node %d", mn))
		b, err := mapBuffer(cfg.ProcRoot, m.Bytes, pages, mn)
		if err != nil {
			return err
		}
		if j == 0 || b.HugeFraction < m.HugeFraction {
			m.PageBytes, m.HugeFraction = b.PageBytes, b.HugeFraction
		}
		frac, err := onNode(b.mem, mn)
		if err != nil {
			b.free()
			return fmt.Errorf("checking where the pages bound to node %d are: %w", mn, err)
		}
		if frac < 0.99 {
			b.free()
			return fmt.Errorf("binding %s to node %d: only %.1f%% of its pages are there: %w",
				units.Bytes(m.Bytes), mn, 100*frac, ErrCannotBind)
		}
		m.OnNode = append(m.OnNode, frac)
		c, err := buildChain(b.mem, m.Bytes, cfg.SlotBytes, int(m.Bytes), cfg.Seed+3000+uint64(j))
		if err != nil {
			b.free()
			return err
		}
		for i, cpu := range m.CPUs {
			say(fmt.Sprintf("NUMA matrix: node %d to node %d", m.CPUNodes[i], mn))
			var st Stat
			err := onCPU(cpu, func() (err error) {
				st, err = chaseLatency(ctx, c, 1, cfg.dramSampling())
				return err
			})
			if err != nil {
				b.free()
				return err
			}
			m.NS[i] = append(m.NS[i], st)
		}
		b.free()
	}
	return nil
}

// finish fills Relative and the assessment from the cells measured, and
// marks the matrix cut when a row lacks cells.
func (m *Matrix) finish() {
	m.Cut = false
	for _, row := range m.NS {
		m.Cut = m.Cut || len(row) < len(m.MemNodes)
	}
	fastest := 0.0
	for _, row := range m.NS {
		for _, s := range row {
			if b := best(s); fastest == 0 || b < fastest {
				fastest = b
			}
		}
	}
	m.Relative = m.Relative[:0]
	for _, row := range m.NS {
		r := make([]float64, len(row))
		for j, s := range row {
			r[j] = ratio(best(s), fastest)
		}
		m.Relative = append(m.Relative, r)
	}
	m.assess()
}

// minMatrixBytes is the smallest chain the matrix measures DRAM with: far
// beyond any last-level cache here.
const minMatrixBytes = 64 << 20

// matrixBytes sets m.Bytes, one size for every memory node so that the
// rows compare: --max, or less where a node has not that much free (a
// buffer bound to a node that cannot hold it gets the process killed: a
// guest's memory node with RAM-disk pages on it did), with a note saying
// so; an error where a node cannot hold minMatrixBytes.
func matrixBytes(cfg *Config, t *result.Topology, m *Matrix) (string, error) {
	m.Bytes = cfg.MaxBytes
	short := -1
	for _, mn := range m.MemNodes {
		nd := t.Nodes[t.NodeIndex(mn)]
		if nd.MemBytes < cfg.MaxBytes+cfg.MaxBytes/4 {
			return "", fmt.Errorf("binding %s to node %d: the node has %s of memory: %w (try a smaller --max)",
				units.Bytes(cfg.MaxBytes), mn, units.Bytes(nd.MemBytes), ErrCannotBind)
		}
		usable, err := NodeUsable(cfg.ProcRoot, mn)
		if err != nil {
			return "", err
		}
		if usable < m.Bytes {
			m.Bytes, short = usable, mn
		}
	}
	if short < 0 {
		return "", nil
	}
	m.Bytes -= m.Bytes % int64(cfg.SlotBytes)
	if m.Bytes < minMatrixBytes {
		return "", fmt.Errorf("binding the NUMA matrix's chain to node %d: the node has %s free, "+
			"less than the %s the matrix needs at least: %w "+
			"(free memory on that node, e.g. files in a tmpfs or RAM disk there, or leave it out with --nodes)",
			short, units.Bytes(max(m.Bytes, 0)), units.Bytes(minMatrixBytes), ErrCannotBind)
	}
	return fmt.Sprintf("the NUMA matrix's chains are %s, not --max %s: node %d had no more free",
		units.Bytes(m.Bytes), units.Bytes(cfg.MaxBytes), short), nil
}
