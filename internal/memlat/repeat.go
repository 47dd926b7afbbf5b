package memlat

import (
	"context"
	"fmt"

	"github.com/numalab/numalab/internal/units"
)

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
// as KindRepeat.
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
		say(fmt.Sprintf("largest working set again (%d/%d): mapping %s with %s pages",
			round, cfg.Repeats, units.Bytes(cfg.MaxBytes), pages))
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
			r := Repeat{Round: round, Chain: l.Chain, Pages: pages, PageBytes: b.PageBytes, HugeFraction: b.HugeFraction,
				Bytes: p.Bytes, NS: st}
			if err := emit(KindRepeat.Of(r)); err != nil {
				b.free()
				return err
			}
		}
		if b.PageBytes != ls[0].PageBytes {
			rep.Notes = append(rep.Notes,
				fmt.Sprintf("round %d of the largest working set with %s pages asked got %s, the ladder %s",
					round, pages, PageLabel(b.PageBytes, b.HugeFraction), PageLabel(ls[0].PageBytes, ls[0].HugeFraction)))
		}
		b.free()
	}
	return nil
}
