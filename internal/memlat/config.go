package memlat

import (
	"errors"
	"fmt"
	"time"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/setting"
	"github.com/numalab/numalab/internal/units"
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
	// C2CSamples are the clean windows per CPU pair of the cache-to-cache
	// latency (2 ms each); 0 skips it. Its figure is the lowest of them,
	// and on a guest whose vCPUs the host moves, 7 windows (28 ms) could
	// all fall in a slow placement an independent ping-pong of 50 windows
	// did not see: 40 (quick) and 60 cost a tenth of a second a pair.
	C2CSamples int `json:"c2c_samples"`
	// ProcRoot is where /proc is found ("/" in production).
	ProcRoot string `json:"-"`
}

// DefaultConfig is the full probe (about a minute here) or, with quick,
// the short one used inside eval (under 15 s here).
func DefaultConfig(quick bool) Config {
	c := Config{
		MaxBytes: 1 << 30, MinBytes: 4 << 10, PerDoubling: 4,
		Pages: []string{Pages4K, Pages2M}, FullChains: []string{TLBLocal, Random},
		Samples: 3, Tries: 3, DRAMSamples: 10, Repeats: 3, WindowMS: 50, SlotBytes: DefaultSlotBytes,
		WindowBytes: DefaultWindowBytes, Seed: 1, MLP: []int{1, 2, 4, 8, 16}, BWWindowMS: 300, C2CSamples: 60,
		ProcRoot: "/",
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
		c.C2CSamples = 40
	}
	return c
}

// SetSamples sets the clean windows per point to n, keeping as many spare
// windows (Tries − Samples) as before.
func (c *Config) SetSamples(n int) {
	c.Tries += n - c.Samples
	c.Samples = n
}

func (c *Config) sampling() sampling {
	return sampling{Samples: c.Samples, MinWindow: time.Duration(c.WindowMS) * time.Millisecond, Tries: c.Tries}
}

// dramSampling is sampling at the largest working set: more windows, and
// as many spare ones as the other points get.
func (c *Config) dramSampling() sampling {
	return sampling{Samples: c.DRAMSamples, MinWindow: time.Duration(c.WindowMS) * time.Millisecond,
		Tries: c.DRAMSamples + c.Tries - c.Samples}
}

// Need is the memory the probe maps at most at one time, in bytes.
func (c *Config) Need(t *result.Topology) int64 {
	chainMeta := c.MaxBytes / int64(c.SlotBytes) * 8 // order and cycle arrays on the Go heap
	return c.MaxBytes + hugeBytes + chainMeta + bwBytes(t, len(t.CPUs)) + hugeBytes
}

// FitMax is the largest working set, c.MaxBytes halved as often as it
// takes, whose probe fits in the memory m says is available on t
// (CheckFits), but none below 4× the last-level cache, the least that
// reaches DRAM; ok is false when none fits.
func (c Config) FitMax(t *result.Topology, m Meminfo) (maxBytes int64, ok bool) {
	floor := max(4*t.LastLevelCache(), 1<<20)
	for b := c.MaxBytes; b >= floor; b /= 2 {
		c.MaxBytes = b
		if CheckFits(c.Need(t), m) == nil {
			return b, true
		}
	}
	return 0, false
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
		return setting.Errorf("max", "%s: want at least 1MiB (try --max 1g): %w", units.Bytes(c.MaxBytes), ErrBadConfig)
	}
	if c.MinBytes >= c.MaxBytes {
		return fmt.Errorf("ladder from %s to %s: want min below max: %w",
			units.Bytes(c.MinBytes), units.Bytes(c.MaxBytes), ErrBadConfig)
	}
	if c.PerDoubling < 1 || c.Samples < 1 || c.DRAMSamples < 1 || c.Repeats < 1 || c.WindowMS < 1 || c.C2CSamples < 0 {
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
			return fmt.Errorf(
				"2 MiB pages: transparent huge pages are disabled here (THP \"never\"); try --pages 4k: %w", ErrBadConfig)
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
