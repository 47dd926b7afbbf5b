package memlat

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/numalab/numalab/internal/units"
)

// Point is one working-set size of a latency ladder.
type Point struct {
	// Bytes is the working set: the memory the chain spreads over (as
	// lmbench and multichase count it). TouchedBytes is what the caches
	// hold of it: one 64-byte line per slot.
	Bytes        int64   `json:"bytes"`
	TouchedBytes int64   `json:"touched_bytes"`
	NS           Stat    `json:"ns"`     // ns per dependent load
	Cycles       float64 `json:"cycles"` // NS.Median times the measured clock
	// At the largest working set only: the point measured again in fresh
	// mappings later in the probe (Config.Repeats), and BestNS, the lowest
	// clean window of NS and Repeats. Neighbours on a shared machine only
	// ever add latency, and a window of 50 ms averages over some 250,000
	// random loads, so the lowest window is the memory's own latency; the
	// medians show what contention made of it.
	Repeats    []Stat  `json:"repeats,omitempty"`
	BestNS     float64 `json:"best_ns,omitempty"`
	BestCycles float64 `json:"best_cycles,omitempty"`
}

// best is the lowest clean window of stats; when every one of them was
// noisy, the lowest window of all.
func best(stats ...Stat) float64 {
	b, bNoisy := 0.0, 0.0
	for _, s := range stats {
		if s.Samples == 0 {
			continue
		}
		if !s.Noisy && (b == 0 || s.Min < b) {
			b = s.Min
		}
		if bNoisy == 0 || s.Min < bNoisy {
			bNoisy = s.Min
		}
	}
	if b == 0 {
		return bNoisy
	}
	return b
}

// setBest fills BestNS and BestCycles from NS and Repeats.
func (p *Point) setBest(ghz float64) {
	p.BestNS = best(append([]Stat{p.NS}, p.Repeats...)...)
	p.BestCycles = p.BestNS * ghz
}

// Ladder is dependent-load latency against working-set size for one chain
// variant and page size.
type Ladder struct {
	Chain        string  `json:"chain"`        // TLBLocal or Random
	Pages        string  `json:"pages"`        // asked for: "4k" or "2m"
	PageBytes    int64   `json:"page_bytes"`   // obtained (see buffer)
	HugeFraction float64 `json:"huge_frac"`    // fraction of the mapping in 2 MiB pages (smaps AnonHugePages)
	SlotBytes    int     `json:"slot_bytes"`   // one pointer per slot, at a random line
	WindowBytes  int64   `json:"window_bytes"` // TLB-local window; the whole set for Random
	CPU          int     `json:"cpu"`          // where the chasing thread ran
	GHz          float64 `json:"ghz"`          // clock used for Cycles
	Points       []Point `json:"points"`
	Levels       []Level `json:"levels,omitempty"`
	LabelError   string  `json:"label_error,omitempty"`
	// Cut is set when the probe stopped (its deadline, Ctrl-C, a failure)
	// before the ladder's largest working set: its last point is then not
	// the DRAM latency, and no summary reads it as one.
	Cut bool `json:"cut,omitempty"`
}

// Last returns the ladder's largest point.
func (l *Ladder) Last() Point {
	if len(l.Points) == 0 {
		return Point{}
	}
	return l.Points[len(l.Points)-1]
}

// Sizes returns working-set sizes from lo to hi, perDoubling per doubling
// (geometric), each rounded down to a multiple of slot, without repeats; hi
// is always the last.
func Sizes(lo, hi int64, perDoubling, slot int) []int64 {
	var out []int64
	if lo < int64(2*slot) {
		lo = int64(2 * slot)
	}
	for k := 0; ; k++ {
		v := float64(lo) * math.Pow(2, float64(k)/float64(perDoubling))
		s := int64(v) / int64(slot) * int64(slot)
		if s >= hi {
			break
		}
		if len(out) == 0 || s > out[len(out)-1] {
			out = append(out, s)
		}
	}
	hi = hi / int64(slot) * int64(slot)
	if len(out) == 0 || hi > out[len(out)-1] {
		out = append(out, hi)
	}
	return out
}

// newLadder is an empty ladder of variant on b, a mapping that asked for
// pages: Pages is what was asked, whatever b obtained, so a mapping that
// asked for 2 MiB pages and got few is never taken for a 4 KiB one.
func newLadder(b *buffer, pages, variant string, slotBytes, cpu int, ghz float64) Ladder {
	return Ladder{Chain: variant, Pages: pages, PageBytes: b.PageBytes, HugeFraction: b.HugeFraction,
		SlotBytes: slotBytes, CPU: cpu, GHz: ghz}
}

// runLadder measures a ladder over sizes on b, a mapping that asked for
// pages, on the calling pinned thread. It also returns the chain of the
// largest size, still in b.
func runLadder(ctx context.Context, b *buffer, pages string, cfg *Config, variant string, sizes []int64, ghz float64,
	cpu int, say func(string)) (Ladder, *chain, error) {
	l := newLadder(b, pages, variant, cfg.SlotBytes, cpu, ghz)
	var c *chain
	for i, size := range sizes {
		window := int64(cfg.WindowBytes)
		if variant == Random {
			window = size
		}
		l.WindowBytes = min(window, size)
		say(fmt.Sprintf("latency %s %s pages: %s (%d/%d)", variant, l.Pages, units.Bytes(size), i+1, len(sizes)))
		var err error
		c, err = buildChain(b.mem, size, cfg.SlotBytes, int(window), cfg.Seed+uint64(i))
		if err != nil {
			return l, nil, err
		}
		s := cfg.sampling()
		last := i == len(sizes)-1
		if last {
			s = cfg.dramSampling()
		}
		st, err := chaseLatency(ctx, c, 1, s)
		if err != nil {
			return l, nil, err
		}
		p := Point{Bytes: size, TouchedBytes: int64(c.slots) * lineBytes, NS: st, Cycles: st.Median * ghz}
		if last {
			p.setBest(ghz)
		}
		l.Points = append(l.Points, p)
	}
	if variant == Random {
		l.WindowBytes = sizes[len(sizes)-1]
	}
	return l, c, nil
}

// label fills l.Levels from its points and the data cache sizes. prefix
// are points of smaller working sets measured on another ladder (the
// random chain starts past one TLB window, where it stops being the
// TLB-local chain), put before l's own.
func (l *Ladder) label(cacheBytes []int64, prefix []Point) {
	var bytes []int64
	var ns []float64
	for _, p := range prefix {
		if len(l.Points) > 0 && p.Bytes < l.Points[0].Bytes {
			bytes, ns = append(bytes, p.TouchedBytes), append(ns, p.NS.Median)
		}
	}
	for _, p := range l.Points {
		bytes, ns = append(bytes, p.TouchedBytes), append(ns, p.NS.Median)
	}
	lv, err := LabelPlateaus(bytes, ns, cacheBytes)
	if err != nil {
		l.LabelError = err.Error()
		return
	}
	for i := range lv {
		lv[i].Cycles = lv[i].NS * l.GHz
	}
	l.Levels = lv
}

// probeLadders measures the ladders of every page size on cpu, each page
// size in a mapping of its own, labels their plateaus against caches and
// emits each as KindLadder; clock measures the core clock before the
// second page size's ladders. It returns the last page size's mapping,
// which the caller frees, and the random chain over all of it, for MLP and
// loaded latency.
func probeLadders(ctx context.Context, cfg *Config, cpu0 int, caches []int64, rep *Report,
	clock func(when string) (float64, error), say func(string), emit Emit) (keep *buffer, random *chain, err error) {
	sizes := Sizes(cfg.MinBytes, cfg.MaxBytes, cfg.PerDoubling, cfg.SlotBytes)
	for pi, pages := range cfg.Pages {
		ghz := rep.Clocks[len(rep.Clocks)-1].GHz.Median
		if pi > 0 && !cfg.Quick {
			var err error
			if ghz, err = clock("before " + pages + " ladders"); err != nil {
				return nil, nil, err
			}
		}
		say(fmt.Sprintf("mapping %s with %s pages", units.Bytes(cfg.MaxBytes), pages))
		b, err := mapBuffer(cfg.ProcRoot, cfg.MaxBytes, pages, -1)
		if err != nil {
			return nil, nil, err
		}
		if pages == Pages2M && b.PageBytes != hugeBytes {
			rep.Notes = append(rep.Notes, fmt.Sprintf("asked for 2 MiB pages, got %s: "+
				"the kernel had too few huge pages free (memory fragmented or in use); "+
				"the 2m ladders are labelled with the pages they had",
				PageLabel(b.PageBytes, b.HugeFraction)))
		}
		fullPages := len(cfg.FullPages) == 0 || slices.Contains(cfg.FullPages, pages) ||
			(pi == len(cfg.Pages)-1 &&
				!slices.ContainsFunc(cfg.Pages, func(p string) bool { return slices.Contains(cfg.FullPages, p) }))
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
				l, c, err = runLadder(ctx, b, pages, cfg, variant, sz, ghz, cpu0, say)
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
				l.Cut = len(l.Points) < len(sz)
				rep.Ladders = append(rep.Ladders, l)
				if eerr := emit(KindLadder.Of(l)); eerr != nil && err == nil {
					err = eerr
				}
			}
			if err != nil {
				b.free()
				return nil, nil, err
			}
		}
		if pi == len(cfg.Pages)-1 {
			return b, random, nil
		}
		b.free()
	}
	return nil, nil, fmt.Errorf("measuring latency ladders: no page size: %w", ErrBadConfig)

}
