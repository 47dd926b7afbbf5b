// Package memlat measures what a dependent memory access costs on the
// machine at hand: a pointer-chasing latency ladder from L1 to DRAM (in ns
// and in measured core cycles, with 4 KiB and 2 MiB pages, TLB-local and
// fully random chains), the node-to-node latency matrix, memory-level
// parallelism, sequential-read bandwidth and latency under load.
//
// Chains live in mmap'd memory outside the Go heap and are chased on a
// locked OS thread pinned to one CPU. Each number is the median of short
// timed windows in which the thread was not preempted, with the spread.
//
// It refuses to use more memory than MemAvailable less a headroom, always
// unmaps what it mapped, and never prints: progress goes to a callback and
// results to the caller.
package memlat

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/numalab/numalab/internal/result"
)

// Config is a probe's full configuration; it is stored with the run.
type Config struct {
	MaxBytes    int64    `json:"max_bytes"`    // largest working set of the ladder
	MinBytes    int64    `json:"min_bytes"`    // smallest
	PerDoubling int      `json:"per_doubling"` // ladder sizes per doubling
	Pages       []string `json:"pages"`        // "4k", "2m"
	// FullChains are the chain variants measured over the whole ladder;
	// the other variant is measured at MaxBytes only.
	FullChains []string `json:"full_chains"`
	// FullPages are the page sizes measured over the whole ladder (empty:
	// all; when none of Pages is listed, the last of Pages is).
	FullPages []string `json:"full_pages,omitempty"`
	Samples   int      `json:"samples"` // clean windows per point
	// DRAMSamples are the clean windows at the largest working set and in
	// the NUMA matrix, where neighbours' contention varies most.
	DRAMSamples int `json:"dram_samples"`
	// Repeats is how many times the largest working set is measured: in
	// the ladder, then in fresh mappings later in the probe. The DRAM
	// latency is the lowest clean window of all of them.
	Repeats int `json:"repeats"`
	// Tries is the most windows per point (at least Samples). Preempted
	// windows are left out of the median when at least half the samples
	// were clean; otherwise all are used and the point is marked noisy.
	// Windows are timed in thread CPU time, so a preempted one is only
	// slightly slow (the intruder's cache and TLB footprint): on a busy
	// machine, spare windows cost time and buy little.
	Tries       int    `json:"tries"`
	WindowMS    int    `json:"window_ms"` // length of one window
	SlotBytes   int    `json:"slot_bytes"`
	WindowBytes int    `json:"tlb_window_bytes"`
	Seed        uint64 `json:"seed"`
	Quick       bool   `json:"quick"`
	Nodes       []int  `json:"nodes,omitempty"` // NUMA matrix nodes; empty: all
	MLP         []int  `json:"mlp"`             // interleaved chain counts
	BWWindowMS  int    `json:"bw_window_ms"`    // length of a bandwidth window
	// ProcRoot is where /proc is found ("/" in production).
	ProcRoot string `json:"-"`
}

// DefaultConfig is the full probe (about a minute here) or, with quick,
// the short one used inside eval (under 15 s here).
func DefaultConfig(quick bool) Config {
	c := Config{
		MaxBytes: 1 << 30, MinBytes: 4 << 10, PerDoubling: 4,
		Pages: []string{Pages4K, Pages2M}, FullChains: []string{TLBLocal, Random},
		Samples: 3, Tries: 3, DRAMSamples: 10, Repeats: 3, WindowMS: 50, SlotBytes: DefaultSlotBytes, WindowBytes: DefaultWindowBytes,
		Seed: 1, MLP: []int{1, 2, 4, 8, 16}, BWWindowMS: 300, ProcRoot: "/",
	}
	if quick {
		c.Quick = true
		// 512 MiB still touches 128 MiB of lines, 4x a 32 MiB L3.
		c.MaxBytes, c.MinBytes = 512<<20, 8<<10
		c.PerDoubling = 2
		c.FullChains = []string{TLBLocal}
		c.FullPages = []string{Pages2M}
		c.MLP = []int{1, 4, 16}
		c.Tries = 3
		c.DRAMSamples, c.Repeats = 6, 1
		c.BWWindowMS = 100
	}
	return c
}

func (c *Config) sampling() sampling {
	return sampling{Samples: c.Samples, MinWindow: time.Duration(c.WindowMS) * time.Millisecond, Tries: c.Tries}
}

// dramSampling is sampling at the largest working set: more windows, and
// as many spare ones as the other points get.
func (c *Config) dramSampling() sampling {
	return sampling{Samples: c.DRAMSamples, MinWindow: time.Duration(c.WindowMS) * time.Millisecond, Tries: c.DRAMSamples + c.Tries - c.Samples}
}

func (c *Config) pagesOf(b *buffer) string {
	if b.PageBytes == hugeBytes || b.HugeFraction > 0.5 {
		return Pages2M
	}
	return Pages4K
}

// bwRegionBytes is the memory each bandwidth thread streams over.
func bwRegionBytes(t *result.Topology) int64 {
	return max(2*t.LastLevelCache(), 64<<20)
}

// Need is the memory the probe maps at most at one time, in bytes.
func (c *Config) Need(t *result.Topology) int64 {
	chainMeta := c.MaxBytes / int64(c.SlotBytes) * 8 // order and cycle arrays on the Go heap
	return c.MaxBytes + hugeBytes + chainMeta + int64(len(t.CPUs))*(bwRegionBytes(t)+hugeBytes)
}

// ErrBadConfig is wrapped by Validate's errors.
var ErrBadConfig = errors.New("bad probe configuration")

// Validate checks c against the machine: sizes, page sizes, nodes and the
// memory available (m).
func (c *Config) Validate(t *result.Topology, m Meminfo) error {
	if c.SlotBytes < 64 || c.SlotBytes%64 != 0 {
		return fmt.Errorf("slot of %d bytes: want a multiple of 64: %w", c.SlotBytes, ErrBadConfig)
	}
	if c.MaxBytes < 1<<20 {
		return fmt.Errorf("--max %s: want at least 1MiB (try --max 1g): %w", FormatBytes(c.MaxBytes), ErrBadConfig)
	}
	if c.MinBytes >= c.MaxBytes {
		return fmt.Errorf("ladder from %s to %s: want min below max: %w", FormatBytes(c.MinBytes), FormatBytes(c.MaxBytes), ErrBadConfig)
	}
	if c.PerDoubling < 1 || c.Samples < 1 || c.DRAMSamples < 1 || c.Repeats < 1 || c.WindowMS < 1 {
		return fmt.Errorf("ladder density, samples, repeats and window must be positive: %w", ErrBadConfig)
	}
	if len(c.Pages) == 0 {
		return fmt.Errorf("no page size: want 4k, 2m or both: %w", ErrBadConfig)
	}
	for _, p := range c.Pages {
		if p != Pages4K && p != Pages2M {
			return fmt.Errorf("page size %q: want 4k, 2m or both: %w", p, ErrBadConfig)
		}
		if p == Pages2M && t.THP == "never" {
			return fmt.Errorf("2 MiB pages: transparent huge pages are disabled here (THP \"never\"); try --pages 4k: %w", ErrBadConfig)
		}
	}
	for _, k := range c.MLP {
		if k != 1 && k != 2 && k != 4 && k != 8 && k != 16 {
			return fmt.Errorf("memory-level parallelism of %d chains: want 1, 2, 4, 8 or 16: %w", k, ErrBadConfig)
		}
	}
	if len(t.CPUs) == 0 {
		return fmt.Errorf("topology lists no usable CPU: %w", ErrBadConfig)
	}
	for _, n := range c.Nodes {
		if t.NodeIndex(n) < 0 {
			var have []int
			for _, nd := range t.Nodes {
				have = append(have, nd.ID)
			}
			return fmt.Errorf("NUMA node %d does not exist (this machine has nodes %v): %w", n, have, ErrBadConfig)
		}
	}
	return CheckFits(c.Need(t), m)
}

// Clock is one measurement of the core clock.
type Clock struct {
	When string `json:"when"` // "start", "before 2m ladder", "end"
	CPU  int    `json:"cpu"`
	GHz  Stat   `json:"ghz"`
}

// Matrix is latency from a thread on each node (rows) to memory bound to
// each node (columns), at one DRAM-sized working set.
type Matrix struct {
	CPUNodes   []int       `json:"cpu_nodes"`
	MemNodes   []int       `json:"mem_nodes"`
	CPUs       []int       `json:"cpus"` // the CPU each row ran on
	Bytes      int64       `json:"bytes"`
	Chain      string      `json:"chain"`
	PageBytes  int64       `json:"page_bytes"`
	NS         [][]Stat    `json:"ns"`
	Relative   [][]float64 `json:"relative"` // each cell's lowest clean window / the fastest cell's
	SingleNode bool        `json:"single_node,omitempty"`
	// OnNode is, per memory node, the fraction of the buffer's pages found
	// on that node (move_pages), checked before measuring.
	OnNode []float64 `json:"on_node"`
	// Reused is set when the 1x1 matrix of a one-node machine is the
	// random-chain ladder's largest point rather than a separate bound run.
	Reused bool `json:"reused,omitempty"`
}

// MLPPoint is k independent chains interleaved.
type MLPPoint struct {
	Chains    int     `json:"chains"`
	Threads   int     `json:"threads"`     // 1, or 2 when split across SMT siblings
	NSPerLoad Stat    `json:"ns_per_load"` // wall time per load, all chains together
	InFlight  float64 `json:"in_flight"`   // single-chain latency / ns per load: misses overlapped
	SplitCPUs []int   `json:"split_cpus,omitempty"`
}

// MLP is memory-level parallelism at a DRAM-sized working set.
type MLP struct {
	Bytes     int64      `json:"bytes"`
	PageBytes int64      `json:"page_bytes"`
	CPU       int        `json:"cpu"`
	Points    []MLPPoint `json:"points"`
	SMT       bool       `json:"smt"` // whether sibling-split points were measured
	Note      string     `json:"note,omitempty"`
}

// BWPoint is sequential-read bandwidth with some threads.
type BWPoint struct {
	Threads     int     `json:"threads"`
	CPUs        []int   `json:"cpus"`
	GBps        float64 `json:"gb_per_s"` // 10^9 bytes per second, all threads together
	RegionBytes int64   `json:"region_bytes"`
	Preempted   int     `json:"preempted"` // threads preempted during their window
}

// LoadedPoint is chase latency while k other CPUs stream.
type LoadedPoint struct {
	Streamers int     `json:"streamers"`
	NS        Stat    `json:"ns"`
	GBps      float64 `json:"gb_per_s"` // what the streamers read meanwhile
}

// Bandwidth holds the bandwidth and loaded-latency results.
type Bandwidth struct {
	Read   []BWPoint     `json:"read"`
	Loaded []LoadedPoint `json:"loaded"`
	Bytes  int64         `json:"chase_bytes"`
	CPU    int           `json:"chase_cpu"`
}

// Summary is what other commands (numalab model --from-run) read from a
// probe: stored as item kind "memlat.Summary".
type Summary struct {
	GHz             float64 `json:"ghz"`               // median measured core clock
	WorkingSetBytes int64   `json:"working_set_bytes"` // where the DRAM numbers were measured
	// DRAM latency of a fully random chain (every access may miss the
	// TLB) and of a TLB-local one, with 4 KiB and 2 MiB pages: the largest
	// point's BestNS, its lowest clean window; 0 when not measured.
	DRAMNS4K         float64 `json:"dram_ns_4k,omitempty"`
	DRAMNS2M         float64 `json:"dram_ns_2m,omitempty"`
	TLBLocalDRAMNS4K float64 `json:"tlb_local_dram_ns_4k,omitempty"`
	TLBLocalDRAMNS2M float64 `json:"tlb_local_dram_ns_2m,omitempty"`
	PageBytes2M      int64   `json:"page_bytes_2m,omitempty"` // page size obtained when 2m was asked
	// Nodes and MatrixNS: the NUMA matrix (rows: the thread's node in
	// CPUNodes order, columns: the memory's node in Nodes order), each
	// cell's lowest clean window in ns; LocalNS is the mean of its diagonal, RemoteNS of
	// the rest (0 on one node).
	Nodes    []int       `json:"nodes"`
	CPUNodes []int       `json:"cpu_nodes"` // the matrix's rows; equal to Nodes unless a node lacks CPUs or memory
	MatrixNS [][]float64 `json:"matrix_ns"`
	LocalNS  float64     `json:"local_ns"`
	RemoteNS float64     `json:"remote_ns,omitempty"`
	// Levels are the labelled plateaus of the TLB-local ladder (2 MiB pages
	// when measured, else 4 KiB).
	Levels []Level `json:"levels,omitempty"`
}

// Report is everything one probe measured.
type Report struct {
	Config    Config     `json:"config"`
	Clocks    []Clock    `json:"clocks"`
	GHz       float64    `json:"ghz"`
	Ladders   []Ladder   `json:"ladders"`
	MLP       *MLP       `json:"mlp,omitempty"`
	Bandwidth *Bandwidth `json:"bandwidth,omitempty"`
	Matrix    *Matrix    `json:"matrix,omitempty"`
	Summary   Summary    `json:"summary"`
	Notes     []string   `json:"notes,omitempty"`
	Elapsed   float64    `json:"elapsed_s"`
}

// Emit receives each result as soon as it is measured, with its kind
// ("memlat.Ladder", "memlat.MLP", "memlat.Bandwidth", "memlat.Matrix",
// "memlat.Clock", "memlat.Summary").
type Emit func(kind string, v any) error

// ReadMeminfo reads root/proc/meminfo.
func ReadMeminfo(root string) (Meminfo, error) {
	f, err := os.Open(filepath.Join(root, "proc/meminfo"))
	if err != nil {
		return Meminfo{}, fmt.Errorf("reading memory available: %w", err)
	}
	defer f.Close()
	return ParseMeminfo(f)
}

// dataCaches returns the data/unified cache size one CPU sees per level.
func dataCaches(t *result.Topology, cpu int) []int64 {
	var out []int64
	for lvl := 1; lvl <= 4; lvl++ {
		for _, c := range t.Caches {
			if c.Level == lvl && c.Type != "Instruction" && slices.Contains(c.CPUs, cpu) {
				out = append(out, c.SizeBytes)
				break
			}
		}
	}
	return out
}

// Probe runs the whole memory probe described by cfg on the machine t.
// cfg must have passed Validate. say gets progress lines; emit gets every
// result as it is measured. What was measured before an error or a
// cancelled ctx is in the returned report.
func Probe(ctx context.Context, cfg Config, t *result.Topology, say func(string), emit Emit) (*Report, error) {
	start := time.Now()
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/"
	}
	rep := &Report{Config: cfg}
	cpu0 := t.CPUs[0].ID
	caches := dataCaches(t, cpu0)
	clock := func(when string) (float64, error) {
		say("core clock: " + when)
		var st Stat
		err := onCPU(cpu0, func() (err error) {
			st, err = measureGHz(ctx, sampling{Samples: 5, MinWindow: 20 * time.Millisecond})
			return err
		})
		if err != nil {
			return 0, err
		}
		c := Clock{When: when, CPU: cpu0, GHz: st}
		rep.Clocks = append(rep.Clocks, c)
		return st.Median, emit("memlat.Clock", c)
	}
	if _, err := clock("start"); err != nil {
		return rep, err
	}
	if llc := t.LastLevelCache(); llc > 0 && cfg.MaxBytes/int64(cfg.SlotBytes)*lineBytes < 4*llc {
		rep.Notes = append(rep.Notes, fmt.Sprintf("--max %s touches %s of lines, less than 4x the %s last-level cache: the largest point may not be DRAM",
			FormatBytes(cfg.MaxBytes), FormatBytes(cfg.MaxBytes/int64(cfg.SlotBytes)*lineBytes), FormatBytes(llc)))
	}

	sizes := Sizes(cfg.MinBytes, cfg.MaxBytes, cfg.PerDoubling, cfg.SlotBytes)
	var keep *buffer  // the last page size's mapping, for MLP and loaded latency
	var random *chain // the random chain over all of keep
	defer func() {
		if keep != nil {
			keep.free()
		}
	}()
	for pi, pages := range cfg.Pages {
		ghz := rep.Clocks[len(rep.Clocks)-1].GHz.Median
		if pi > 0 && !cfg.Quick {
			var err error
			if ghz, err = clock("before " + pages + " ladders"); err != nil {
				return rep, err
			}
		}
		say(fmt.Sprintf("mapping %s with %s pages", FormatBytes(cfg.MaxBytes), pages))
		b, err := mapBuffer(cfg.ProcRoot, cfg.MaxBytes, pages, -1)
		if err != nil {
			return rep, err
		}
		if pages == Pages2M && b.PageBytes != hugeBytes {
			rep.Notes = append(rep.Notes, fmt.Sprintf("asked for 2 MiB pages, got %s", PageLabel(b.PageBytes, b.HugeFraction)))
		}
		fullPages := len(cfg.FullPages) == 0 || slices.Contains(cfg.FullPages, pages) ||
			(pi == len(cfg.Pages)-1 && !slices.ContainsFunc(cfg.Pages, func(p string) bool { return slices.Contains(cfg.FullPages, p) }))
		for _, variant := range []string{TLBLocal, Random} {
			sz := sizes
			if variant == Random {
				// Up to one TLB window the random chain is the TLB-local one.
				i, _ := slices.BinarySearch(sizes, int64(cfg.WindowBytes)+1)
				sz = sizes[min(i, len(sizes)-1):]
			}
			if !fullPages || !slices.Contains(cfg.FullChains, variant) {
				sz = sizes[len(sizes)-1:]
			}
			var l Ladder
			var c *chain
			err := onCPU(cpu0, func() (err error) {
				l, c, err = runLadder(ctx, b, &cfg, variant, sz, ghz, cpu0, say)
				return err
			})
			if variant == Random {
				random = c // the last chain written into b, at MaxBytes
			}
			if len(l.Points) > 2 {
				var prefix []Point
				if variant == Random && len(rep.Ladders) > 0 && rep.Ladders[len(rep.Ladders)-1].Pages == l.Pages {
					prefix = rep.Ladders[len(rep.Ladders)-1].Points
				}
				l.label(caches, prefix)
			}
			if len(l.Points) > 0 {
				rep.Ladders = append(rep.Ladders, l)
				if eerr := emit("memlat.Ladder", l); eerr != nil && err == nil {
					err = eerr
				}
			}
			if err != nil {
				b.free()
				return rep, err
			}
		}
		if pi == len(cfg.Pages)-1 {
			keep = b
		} else {
			b.free()
		}
	}

	if err := probeMLP(ctx, &cfg, t, random, keep, rep, say); err != nil {
		return rep, err
	}
	if err := emit("memlat.MLP", rep.MLP); err != nil {
		return rep, err
	}
	if err := probeBandwidth(ctx, &cfg, t, random, rep, say); err != nil {
		return rep, err
	}
	if err := emit("memlat.Bandwidth", rep.Bandwidth); err != nil {
		return rep, err
	}
	keep.free()
	keep = nil

	// The largest working set again in fresh mappings, half of the
	// repeats now and the rest at the end, so that a busy spell of the
	// neighbours does not decide every one of them.
	round := 2
	repeat := func(n int) error {
		for ; n > 0; n-- {
			if err := repeatLargest(ctx, &cfg, rep, round, say, emit); err != nil {
				return err
			}
			round++
		}
		return nil
	}
	if err := repeat((cfg.Repeats - 1) / 2); err != nil {
		return rep, err
	}
	if err := probeMatrix(ctx, &cfg, t, rep, say); err != nil {
		return rep, err
	}
	if err := emit("memlat.Matrix", rep.Matrix); err != nil {
		return rep, err
	}
	if err := repeat(cfg.Repeats + 1 - round); err != nil {
		return rep, err
	}
	if _, err := clock("end"); err != nil {
		return rep, err
	}
	var g []float64
	for _, c := range rep.Clocks {
		g = append(g, c.GHz.Median)
	}
	rep.GHz = summarise(g, nil, len(g), 0).Median
	rep.Summary = summarize(rep)
	rep.Elapsed = time.Since(start).Seconds()
	return rep, emit("memlat.Summary", rep.Summary)
}

// Repeat is the largest working set of one ladder measured again in a
// fresh mapping.
type Repeat struct {
	Round        int     `json:"round"` // 2, 3, ...: the ladder's own measurement is round 1
	Chain        string  `json:"chain"`
	Pages        string  `json:"pages"`
	PageBytes    int64   `json:"page_bytes"`
	HugeFraction float64 `json:"huge_frac"`
	Bytes        int64   `json:"bytes"`
	NS           Stat    `json:"ns"`
}

// repeatLargest measures the largest point of every ladder again, one
// fresh mapping per page size, adds it to the point's Repeats and emits it
// as "memlat.Repeat".
func repeatLargest(ctx context.Context, cfg *Config, rep *Report, round int, say func(string), emit Emit) error {
	for _, pages := range cfg.Pages {
		var ls []*Ladder
		for i := range rep.Ladders {
			if l := &rep.Ladders[i]; l.Pages == pages && len(l.Points) > 0 {
				ls = append(ls, l)
			}
		}
		if len(ls) == 0 {
			continue
		}
		say(fmt.Sprintf("largest working set again (%d/%d): mapping %s with %s pages", round, cfg.Repeats, FormatBytes(cfg.MaxBytes), pages))
		b, err := mapBuffer(cfg.ProcRoot, cfg.MaxBytes, pages, -1)
		if err != nil {
			return err
		}
		for i, l := range ls {
			p := &l.Points[len(l.Points)-1]
			say(fmt.Sprintf("largest working set again (%d/%d): %s %s pages", round, cfg.Repeats, l.Chain, pages))
			var st Stat
			err := onCPU(l.CPU, func() error {
				c, err := buildChain(b.mem, p.Bytes, cfg.SlotBytes, int(l.WindowBytes), cfg.Seed+uint64(1000*round+i))
				if err != nil {
					return err
				}
				st, err = chaseLatency(ctx, c, 1, cfg.dramSampling())
				return err
			})
			if err != nil {
				b.free()
				return err
			}
			p.Repeats = append(p.Repeats, st)
			p.setBest(l.GHz)
			r := Repeat{Round: round, Chain: l.Chain, Pages: pages, PageBytes: b.PageBytes, HugeFraction: b.HugeFraction, Bytes: p.Bytes, NS: st}
			if err := emit("memlat.Repeat", r); err != nil {
				b.free()
				return err
			}
		}
		if b.PageBytes != ls[0].PageBytes {
			rep.Notes = append(rep.Notes, fmt.Sprintf("round %d of the largest working set with %s pages asked got %s, the ladder %s",
				round, pages, PageLabel(b.PageBytes, b.HugeFraction), PageLabel(ls[0].PageBytes, ls[0].HugeFraction)))
		}
		b.free()
	}
	return nil
}

// summarize fills the Summary from the report's parts.
func summarize(rep *Report) Summary {
	s := Summary{GHz: rep.GHz}
	for _, l := range rep.Ladders {
		last := l.Last()
		s.WorkingSetBytes = last.Bytes
		switch {
		case l.Chain == Random && l.Pages == Pages4K:
			s.DRAMNS4K = last.BestNS
		case l.Chain == Random && l.Pages == Pages2M:
			s.DRAMNS2M = last.BestNS
			s.PageBytes2M = l.PageBytes
		case l.Chain == TLBLocal && l.Pages == Pages4K:
			s.TLBLocalDRAMNS4K = last.BestNS
			if s.Levels == nil {
				s.Levels = l.Levels
			}
		case l.Chain == TLBLocal && l.Pages == Pages2M:
			s.TLBLocalDRAMNS2M = last.BestNS
			if len(l.Levels) > 0 {
				s.Levels = l.Levels
			}
		}
	}
	if m := rep.Matrix; m != nil {
		s.Nodes, s.CPUNodes = m.MemNodes, m.CPUNodes
		var loc, rem []float64
		for i, row := range m.NS {
			r := make([]float64, len(row))
			for j, st := range row {
				r[j] = best(st)
				if m.CPUNodes[i] == m.MemNodes[j] {
					loc = append(loc, r[j])
				} else {
					rem = append(rem, r[j])
				}
			}
			s.MatrixNS = append(s.MatrixNS, r)
		}
		s.LocalNS, s.RemoteNS = mean(loc), mean(rem)
	}
	return s
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// sibling returns another logical CPU on cpu's core, or -1.
func sibling(t *result.Topology, cpu int) int {
	c, ok := t.CPU(cpu)
	if !ok || c.Core < 0 || c.Core >= len(t.Cores) {
		return -1
	}
	for _, o := range t.Cores[c.Core].CPUs {
		if o != cpu {
			return o
		}
	}
	return -1
}

// probeMLP interleaves independent chases on c, a random chain over b.
func probeMLP(ctx context.Context, cfg *Config, t *result.Topology, c *chain, b *buffer, rep *Report, say func(string)) error {
	cpu0 := t.CPUs[0].ID
	m := &MLP{Bytes: cfg.MaxBytes, PageBytes: b.PageBytes, CPU: cpu0}
	rep.MLP = m
	var one float64
	for _, k := range cfg.MLP {
		say(fmt.Sprintf("memory-level parallelism: %d chains", k))
		var st Stat
		err := onCPU(cpu0, func() (err error) {
			st, err = chaseLatency(ctx, c, k, cfg.sampling())
			return err
		})
		if err != nil {
			return err
		}
		if k == 1 {
			one = st.Median
		}
		m.Points = append(m.Points, MLPPoint{Chains: k, Threads: 1, NSPerLoad: st, InFlight: ratio(one, st.Median)})
	}
	sib := sibling(t, cpu0)
	if sib < 0 {
		m.Note = "no SMT: each core runs one hardware thread, so chains cannot be split across siblings"
		return nil
	}
	m.SMT = true
	for _, k := range cfg.MLP {
		if k < 2 {
			continue
		}
		say(fmt.Sprintf("memory-level parallelism: %d chains on CPUs %d and %d", k, cpu0, sib))
		// Each sibling chases k/2 chains from its own half of the start points.
		var wg sync.WaitGroup
		var st [2]Stat
		var errs [2]error
		for h, cpu := range []int{cpu0, sib} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Sibling h takes chains h, h+2, h+4, ... of the k a
				// single thread would run: disjoint start points.
				cc := *c
				for x := range cc.starts {
					cc.starts[x] = c.starts[(x+h*16/k)%16]
				}
				errs[h] = onCPU(cpu, func() (err error) {
					st[h], err = chaseLatency(ctx, &cc, k/2, cfg.sampling())
					return err
				})
			}()
		}
		wg.Wait()
		if err := errors.Join(errs[0], errs[1]); err != nil {
			return err
		}
		// Two threads together: loads per ns add up.
		comb := 1 / (1/st[0].Median + 1/st[1].Median)
		s := Stat{Median: comb, Min: 1 / (1/st[0].Min + 1/st[1].Min), Max: 1 / (1/st[0].Max + 1/st[1].Max),
			Samples: min(st[0].Samples, st[1].Samples), Dropped: st[0].Dropped + st[1].Dropped,
			Noisy: st[0].Noisy || st[1].Noisy, Window: st[0].Window}
		m.Points = append(m.Points, MLPPoint{Chains: k, Threads: 2, NSPerLoad: s, InFlight: ratio(one, comb), SplitCPUs: []int{cpu0, sib}})
	}
	return nil
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// streamCPUs lists the CPUs bandwidth threads use: one per physical core
// first, then the SMT siblings.
func streamCPUs(t *result.Topology) []int {
	var first, rest []int
	for _, c := range t.Cores {
		if len(c.CPUs) == 0 {
			continue
		}
		first = append(first, c.CPUs[0])
		rest = append(rest, c.CPUs[1:]...)
	}
	if len(first) == 0 {
		for _, c := range t.CPUs {
			first = append(first, c.ID)
		}
	}
	return append(first, rest...)
}

// stream reads region sequentially on cpu until stop is closed or, when
// d > 0, for d of thread CPU time; it returns the bytes read, the thread
// CPU time taken and whether the thread was preempted.
func stream(cpu int, region []byte, d time.Duration, ready *sync.WaitGroup, gate <-chan struct{}, stop <-chan struct{}) (bytes int64, took time.Duration, preempted bool, err error) {
	err = onCPU(cpu, func() error {
		const chunk = 4 << 20
		p := unsafe.Pointer(unsafe.SliceData(region))
		readSum(p, len(region)/8) // warm the TLB
		ready.Done()
		<-gate
		c0 := involuntarySwitches()
		t0 := threadTime()
		var sink uint64
	loop:
		for {
			for off := 0; off+chunk <= len(region); off += chunk {
				sink += readSum(unsafe.Add(p, off), chunk/8)
				bytes += chunk
				select {
				case <-stop:
					break loop
				default:
				}
				if d > 0 && threadTime()-t0 >= d {
					break loop
				}
			}
		}
		took = threadTime() - t0
		preempted = involuntarySwitches() != c0
		_ = sink
		return nil
	})
	return
}

// probeBandwidth measures sequential-read bandwidth with 1..all CPUs and
// chase latency on c while 0..all-1 other CPUs stream.
func probeBandwidth(ctx context.Context, cfg *Config, t *result.Topology, c *chain, rep *Report, say func(string)) error {
	cpus := streamCPUs(t)
	region := bwRegionBytes(t)
	pages := cfg.Pages[len(cfg.Pages)-1]
	bw := &Bandwidth{Bytes: cfg.MaxBytes, CPU: cpus[0]}
	rep.Bandwidth = bw
	rb, err := mapBuffer(cfg.ProcRoot, region*int64(len(cpus)), pages, -1)
	if err != nil {
		return err
	}
	defer rb.free()
	regionOf := func(i int) []byte { return rb.mem[int64(i)*region : int64(i+1)*region] }
	window := time.Duration(cfg.BWWindowMS) * time.Millisecond

	for _, n := range steps(1, len(cpus)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		say(fmt.Sprintf("read bandwidth: %d threads", n))
		var ready, wg sync.WaitGroup
		gate := make(chan struct{})
		rates := make([]float64, n)
		pre := make([]bool, n)
		errs := make([]error, n)
		ready.Add(n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				by, took, p, err := stream(cpus[i], regionOf(i), window, &ready, gate, nil)
				rates[i], pre[i], errs[i] = float64(by)/float64(took.Nanoseconds()), p, err
			}()
		}
		ready.Wait()
		close(gate)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		pt := BWPoint{Threads: n, CPUs: cpus[:n], RegionBytes: region}
		for i := range n {
			pt.GBps += rates[i]
			if pre[i] {
				pt.Preempted++
			}
		}
		bw.Read = append(bw.Read, pt)
	}

	for _, k := range append([]int{0}, steps(1, len(cpus)-1)...) {
		say(fmt.Sprintf("loaded latency: %d streaming CPUs", k))
		var ready, wg sync.WaitGroup
		gate, stop := make(chan struct{}), make(chan struct{})
		bytes := make([]int64, k)
		took := make([]time.Duration, k)
		errs := make([]error, k+1)
		ready.Add(k)
		for i := range k {
			wg.Add(1)
			go func() {
				defer wg.Done()
				bytes[i], took[i], _, errs[i] = stream(cpus[i+1], regionOf(i+1), 0, &ready, gate, stop)
			}()
		}
		ready.Wait()
		close(gate)
		var st Stat
		errs[k] = onCPU(cpus[0], func() (err error) {
			st, err = chaseLatency(ctx, c, 1, cfg.sampling())
			return err
		})
		close(stop)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		lp := LoadedPoint{Streamers: k, NS: st}
		for i := range k {
			lp.GBps += float64(bytes[i]) / float64(max(took[i].Nanoseconds(), 1))
		}
		bw.Loaded = append(bw.Loaded, lp)
	}
	return nil
}

// steps returns lo, 2·lo, 4·lo, ... up to hi, and hi itself: thread counts
// for bandwidth sweeps that stay short on machines with many CPUs.
func steps(lo, hi int) []int {
	var out []int
	for n := lo; n > 0 && n < hi; n *= 2 {
		out = append(out, n)
	}
	if hi >= lo && hi > 0 {
		out = append(out, hi)
	}
	return out
}

// probeMatrix measures latency from each node's CPUs to memory bound to
// each node.
func probeMatrix(ctx context.Context, cfg *Config, t *result.Topology, rep *Report, say func(string)) error {
	pages := cfg.Pages[len(cfg.Pages)-1]
	m := &Matrix{Bytes: cfg.MaxBytes, Chain: Random}
	rep.Matrix = m
	if cfg.Quick && len(t.Nodes) == 1 && len(t.Nodes[0].CPUs) > 0 && len(rep.Ladders) > 0 {
		// One node: the matrix is the random chain's DRAM point just
		// measured on node 0's CPU; the quick probe does not repeat it.
		l := rep.Ladders[len(rep.Ladders)-1]
		m.CPUNodes, m.MemNodes, m.CPUs = []int{t.Nodes[0].ID}, []int{t.Nodes[0].ID}, []int{l.CPU}
		m.PageBytes, m.SingleNode = l.PageBytes, true
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
	m.NS = make([][]Stat, len(m.CPUNodes))
	for j, mn := range m.MemNodes {
		nd := t.Nodes[t.NodeIndex(mn)]
		if nd.MemBytes < cfg.MaxBytes+cfg.MaxBytes/4 {
			return fmt.Errorf("binding %s to node %d: the node has %s of memory: %w (try a smaller --max)",
				FormatBytes(cfg.MaxBytes), mn, FormatBytes(nd.MemBytes), ErrCannotBind)
		}
		say(fmt.Sprintf("NUMA matrix: memory on node %d", mn))
		b, err := mapBuffer(cfg.ProcRoot, cfg.MaxBytes, pages, mn)
		if err != nil {
			return err
		}
		m.PageBytes = b.PageBytes
		frac, err := onNode(b.mem, mn)
		if err != nil {
			b.free()
			return fmt.Errorf("checking where the pages bound to node %d are: %w", mn, err)
		}
		if frac < 0.99 {
			b.free()
			return fmt.Errorf("binding %s to node %d: only %.1f%% of its pages are there: %w", FormatBytes(cfg.MaxBytes), mn, 100*frac, ErrCannotBind)
		}
		m.OnNode = append(m.OnNode, frac)
		c, err := buildChain(b.mem, cfg.MaxBytes, cfg.SlotBytes, int(cfg.MaxBytes), cfg.Seed+3000+uint64(j))
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
	fastest := 0.0
	for _, row := range m.NS {
		for _, s := range row {
			if b := best(s); fastest == 0 || b < fastest {
				fastest = b
			}
		}
	}
	for _, row := range m.NS {
		r := make([]float64, len(row))
		for j, s := range row {
			r[j] = ratio(best(s), fastest)
		}
		m.Relative = append(m.Relative, r)
	}
	return nil
}
