package pages

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sentinel"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/units"
)

// pageMemory names the two kinds of memory, in the images' order.
var pageMemory = [2]struct {
	name, pages string
	huge        bool
}{{"4 KiB pages", memlat.Pages4K, false}, {"2 MiB pages", memlat.Pages2M, true}}

// hotMemory is the index of the caches in MeasuredFit.Memory: the memory
// a hot run's data sits in.
const hotMemory = 2

// ChaseTime is one timing of a random chain: two windows of 50 ms.
const ChaseTime = 100 * time.Millisecond

// pageRun is the experiment in progress: the two images with their
// connections and chains, the caches' chain, and the fit being filled in.
type pageRun struct {
	ctx      context.Context
	cpu      int
	conns    [2]*pageConn
	chains   [3]*memlat.DRAMChase // the two images' kinds of memory, then the caches'
	f        *calib.MeasuredFit
	progress func(calib.FitCell)
}

// chase measures chain i (a kind of memory, or the caches) on the cell's
// CPU.
func (r *pageRun) chase(i int) error {
	st, err := r.chains[i].MeasureWindows(r.ctx, r.cpu, int(ChaseTime/(50*time.Millisecond)))
	if err != nil {
		return fmt.Errorf("timing the random chain in %s: %w", r.f.Memory[i].Name, err)
	}
	m := &r.f.Memory[i]
	m.SamplesNS = append(m.SamplesNS, st.Median)
	return nil
}

// chaseAll measures every chain.
func (r *pageRun) chaseAll() error {
	for i := range r.chains {
		if err := r.chase(i); err != nil {
			return err
		}
	}
	return nil
}

// cell runs one cell in memory i, labelled, then times memory i's chain
// and takes a sentinel sample, and adds its cold runs as a cell in memory
// i at the chain's latency and its hot runs as one in the caches. A cell
// stopped by ctx before its chain was timed is left out.
func (r *pageRun) cell(i int, label string, d time.Duration, repeat bool) error {
	c, err := r.conns[i].cell(r.ctx, r.cpu, d)
	if err != nil {
		return err
	}
	if err := r.ctx.Err(); err != nil {
		return err
	}
	if err := r.chase(i); err != nil {
		return err
	}
	ns := r.f.Memory[i].SamplesNS
	chain := [2]float64{ns[len(ns)-1], 0}
	before := len(r.f.Sentinel.Samples) - 1
	r.f.Sentinel.Take(label)
	if c.noCounters != "" {
		r.f.CountersReason = c.noCounters
	}
	for kind, mem := range []int{i, hotMemory} {
		fc := calib.FitCell{Label: label + ", " + []string{"cold", "hot"}[kind], Memory: mem, ChainNS: chain[kind],
			Point: model.Point{GHz: r.f.GHz, TPSPerCore: c.tps(kind)}, Txns: c.pairs, Seconds: c.seconds[kind],
			Before: before, After: before + 1, Repeat: repeat, Counters: c.counters[kind], NoCounters: c.readFailed}
		r.f.Cells = append(r.f.Cells, fc)
		if r.progress != nil {
			r.progress(fc)
		}
	}
	return nil
}

// CacheChainBytes is the size of the caches' chain: half the level-2
// cache of machine t, 128 KiB when its size is not known.
func CacheChainBytes(t *result.Topology) int64 {
	if t != nil {
		for _, c := range t.Caches {
			if c.Level == 2 && c.Type != "Instruction" && c.SizeBytes > 0 {
				return c.SizeBytes / 2
			}
		}
	}
	return 128 << 10
}

// Measure runs cfg at the clock ghz: pairs of cells on cfg.CPU, the
// tpcc-ro image in 4 KiB then 2 MiB pages, each cell followed by a
// timing of its memory's chain and a sample of the speed sentinel (with
// the memory reference mem where not nil; one more sample before the
// first pair). A memory's chain is a random chain in memory mapped like
// its image and as large, timed also before the first pair and after the
// last; the caches' a chain of cacheBytes in 4 KiB pages, timed then. A
// cell next to a sentinel sample whose core reading is off its median by
// more than cfg.Tolerance is flagged and, up to cfg.Repeats of them and
// while a repeat ends within cfg.RepeatWithin of the start (0: any time),
// run once more at the end; flagged cells are left out. A and M are then
// fitted to the rest, cold and hot (MeasuredFit's Compute). progress,
// when not nil, hears of each cell as it is measured.
//
// The servers' steps (starting, --init and its time) are said on steps
// (nil: io.Discard).
//
// When ctx is done part way, the cells measured so far are fitted and
// returned with ctx's error: the caller stores what was measured.
func Measure(ctx context.Context, cfg RunConfig, ghz float64, cacheBytes int64, mem *sentinel.Memory,
	progress func(calib.FitCell), steps io.Writer) (*calib.MeasuredFit, error) {
	start := time.Now()
	sd, err := openSides(ctx, cfg, cmp.Or[io.Writer](steps, io.Discard))
	if err != nil {
		return nil, err
	}
	defer sd.release()
	f := &calib.MeasuredFit{Engine: sd.engine, Workload: sd.workload,
		What: fmt.Sprintf("%s on %s, one stream on CPU %d, %s, each transaction run twice with the same inputs (cold, "+
			"then hot from the caches)", sd.what, sd.title, cfg.CPU, sd.where),
		Method: fmt.Sprintf("%d pairs of %v cells, 4 KiB then 2 MiB pages, each followed by a sample of the speed "+
			"sentinel; in each cell every transaction ran cold then hot, timed apart; each cold cell's latency a random "+
			"chain in memory mapped alike and as large, timed right after it, the caches' a chain of %s timed before "+
			"the first pair and after the last; cells next to a core reading more than %.0f%% off the median left out, "+
			"and up to %d of them run again where the time allowed%s",
			cfg.Pairs, cfg.Cell, units.Bytes(cacheBytes), 100*cfg.Tolerance, cfg.Repeats, sd.chains),
		GHz: ghz,
	}
	if len(sd.inits) > 0 {
		f.Method += "; " + strings.Join(sd.inits, ", ")
	}
	f.Sentinel.UseMemory(mem)
	r := &pageRun{ctx: ctx, cpu: cfg.CPU, f: f, progress: progress}
	for i, s := range sd.s {
		r.conns[i] = s.conn
		if r.chains[i], err = memlat.NewChase(s.dataBytes, s.pages); err != nil {
			return nil, fmt.Errorf("mapping the random chain in %s: %w", s.name, err)
		}
		defer r.chains[i].Free()
		f.Memory = append(f.Memory, calib.FitMemory{Name: s.name, DataHuge: s.dataHuge, ChainHuge: r.chains[i].HugeFraction,
			ChainBytes: r.chains[i].Bytes})
		if _, err := r.conns[i].cell(ctx, cfg.CPU, cfg.Cell/4); err != nil { // warm
			return nil, err
		}
	}
	if r.chains[hotMemory], err = memlat.NewChase(cacheBytes, memlat.Pages4K); err != nil {
		return nil, fmt.Errorf("mapping the random chain for the caches: %w", err)
	}
	defer r.chains[hotMemory].Free()
	f.Memory = append(f.Memory, calib.FitMemory{Name: "the caches", Hot: true, ChainBytes: cacheBytes})
	if err := r.chaseAll(); err != nil {
		return nil, stopped(ctx, err)
	}
	f.Sentinel.Take("start")
	err = r.cells(cfg, start)
	if err == nil {
		err = r.chaseAll()
	}
	if err = stopped(ctx, err); err != nil && ctx.Err() == nil {
		return nil, err
	}
	f.Flag(cfg.Tolerance)
	for i := range f.Memory {
		f.Memory[i].LatencyNS = stats.Median(f.Memory[i].SamplesNS)
	}
	f.Compute()
	return f, err
}

// side is one kind of memory the cells' data sits in: a tpcc stream whose
// data is there, and how that memory is mapped.
type side struct {
	name, pages string  // "4 KiB pages", memlat.Pages4K: the chain's
	dataHuge    float64 // the share of the data's memory in 2 MiB pages
	dataBytes   int64   // the data's size: the chain's
	conn        *pageConn
}

// sides are the two kinds of memory of one engine's data (in
// pageMemory's order), what they are in words, and how to let them go.
type sides struct {
	s              [2]side
	engine, title  string   // "postgres", "PostgreSQL"
	workload, what string   // the fit's workload ("tpcc-ro", "bank.sql"), in words
	where, chains  string   // where the data is, in words; how the chains stand for it
	inits          []string // what --init did on each server, in words
	release        func()
}

// openSides opens cfg's engine's data in memory of both page sizes:
// SQLite's image in memory numalab maps (imageSides), a server's buffers
// in a managed server of each page size (serverSides), its steps said on
// w.
func openSides(ctx context.Context, cfg RunConfig, w io.Writer) (*sides, error) {
	if cfg.engine() == "sqlite" {
		return imageSides(ctx, cfg)
	}
	return serverSides(ctx, cfg, w)
}

// cells runs the pairs, then the repeats of off-speed cells.
func (r *pageRun) cells(cfg RunConfig, start time.Time) error {
	for k := 0; k < cfg.Pairs && r.ctx.Err() == nil; k++ {
		for i, kind := range pageMemory {
			if err := r.cell(i, fmt.Sprintf("pair %d, %s", k+1, kind.name), cfg.Cell, false); err != nil {
				return err
			}
		}
	}
	r.f.Flag(cfg.Tolerance)
	repeats := cfg.Repeats
	for _, c := range slices.Clone(r.f.Cells) {
		// A cell's hot runs share its sentinel samples: the cold one
		// stands for both.
		late := cfg.RepeatWithin > 0 && time.Since(start)+cfg.Cell+ChaseTime > cfg.RepeatWithin
		if !c.Off || c.Memory == hotMemory || repeats == 0 || r.ctx.Err() != nil || late {
			continue
		}
		repeats--
		// A sample of its own before the repeat: the last one may be off.
		label := strings.TrimSuffix(c.Label, ", cold")
		r.f.Sentinel.Take("before " + label + " again")
		if err := r.cell(c.Memory, label+" again", cfg.Cell, true); err != nil {
			return err
		}
	}
	return nil
}

// stopped is ctx's error where ctx is done (what failed then was cut by
// it), else err.
func stopped(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Run is Measure on machine t (the caches' chain CacheChainBytes, the
// speed sentinel's memory reference mapped for t, or the core reference
// alone where it cannot be), saying on w what it runs, each cell as it is
// measured and, at the end, the fit (MeasuredFit's Lines).
func Run(ctx context.Context, cfg RunConfig, t *result.Topology, ghz float64, w io.Writer) (*calib.MeasuredFit, error) {
	mem, err := sentinel.MemoryFor(t)
	if err != nil {
		fmt.Fprintf(w, "speed sentinel: the core reference alone: %v\n", err)
	} else {
		defer mem.Free()
	}
	fmt.Fprintf(w, "%d pairs of %v cells on CPU %d at %.2f GHz, %s's data in 4 KiB then 2 MiB pages, each transaction "+
		"run cold then hot (the same inputs again), a random chain in memory mapped alike and one in the caches "+
		"timed before and after; up to %d off-speed cells repeated\n",
		cfg.Pairs, cfg.Cell, cfg.CPU, ghz, cfg.engine(), cfg.Repeats)
	f, err := Measure(ctx, cfg, ghz, CacheChainBytes(t), mem, func(c calib.FitCell) {
		chain := "the caches" // a hot cell's latency is their chain's median, at the end
		if c.ChainNS > 0 {
			chain = fmt.Sprintf("%.1f ns", c.ChainNS)
		}
		fmt.Fprintf(w, "  %-34s %8.0f tps  %-10s  %v timed\n", c.Label, c.TPSPerCore,
			chain, time.Duration(c.Seconds*float64(time.Second)).Round(time.Millisecond))
	}, w)
	if f != nil {
		for _, l := range f.Lines() {
			fmt.Fprintln(w, l)
		}
	}
	return f, err
}
