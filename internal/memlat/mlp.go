package memlat

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/numalab/numalab/internal/result"
)

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
	Bytes        int64      `json:"bytes"`
	Pages        string     `json:"pages,omitempty"`     // asked for: "4k" or "2m"
	PageBytes    int64      `json:"page_bytes"`          // obtained (see buffer)
	HugeFraction float64    `json:"huge_frac,omitempty"` // fraction of the mapping in 2 MiB pages
	CPU          int        `json:"cpu"`
	Points       []MLPPoint `json:"points"`
	SMT          bool       `json:"smt"` // whether sibling-split points were measured
	Note         string     `json:"note,omitempty"`
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

// newMLP is an empty MLP result on b, a mapping that asked for pages.
func newMLP(bytes int64, pages string, b *buffer, cpu int) *MLP {
	return &MLP{Bytes: bytes, Pages: pages, PageBytes: b.PageBytes, HugeFraction: b.HugeFraction, CPU: cpu}
}

// probeMLP interleaves independent chases on c, a random chain over b,
// the mapping of the last page size asked for.
func probeMLP(ctx context.Context, cfg *Config, t *result.Topology, c *chain, b *buffer, rep *Report,
	say func(string)) error {
	cpu0 := t.CPUs[0].ID
	m := newMLP(cfg.MaxBytes, cfg.Pages[len(cfg.Pages)-1], b, cpu0)
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
		m.Points = append(m.Points,
			MLPPoint{Chains: k, Threads: 2, NSPerLoad: s, InFlight: ratio(one, comb), SplitCPUs: []int{cpu0, sib}})
	}
	return nil
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
