package iobench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/numalab/numalab/internal/result"
)

// PageSize is the database page the probe asks about: 8 KiB.
const PageSize = 8192

// The classic optimizer IO cost model the page-rate ratio is set beside: a
// random page read costs 1/320 s and a sequential page 1/1350 s, so one
// random read is worth about 4.2 sequential pages.
const (
	ModelName        = "classic optimizer IO cost model"
	ModelRandomIOPS  = 320.0
	ModelSeqPagesSec = 1350.0
)

// Engine names how queue depth is made; see result.IOProbe.Engine.
const Engine = "psync-threads"

// Config is what Probe does.
type Config struct {
	Dir       string        // directory on the storage to test; the test file is made here
	Size      int64         // test file bytes; 0 = DefaultSize, or less when free space is short
	SizeLimit int64         // the most a default size may be; 0 = DefaultSize
	Duration  time.Duration // measured window of each pattern
	Depths    []int         // queue depths of the 8 KiB random reads
	SeqSizes  []int         // block sizes of the sequential reads, bytes
	SeqQD     int           // queue depth of the sequential reads
	MixQD     int           // queue depth of the random read/write mix; 0 = no mix
	MixRead   int           // percentage of reads in the mix
	Readers   int           // concurrent sequential readers up to this (1, 2, 4, ...); 0 = none
	Span      int64         // spread the data over this many bytes (sparse where it can); 0 = Size
	Buffered  bool          // skip O_DIRECT even where it works
	Seed      uint64        // seeds the file's data and every worker's offsets
	Progress  func(string)  // progress lines; nil = silent
}

// DefaultConfig is the full probe: 3 s per pattern, QD 1 to 64, three
// sequential sizes, 2 and 4 concurrent sequential readers and a 70/30 mix
// at QD 16.
func DefaultConfig(dir string) Config {
	return Config{
		Dir:      dir,
		Duration: 3 * time.Second,
		Depths:   []int{1, 2, 4, 8, 16, 32, 64},
		SeqSizes: []int{64 << 10, 256 << 10, 1 << 20},
		SeqQD:    1,
		MixQD:    16,
		MixRead:  70,
		Readers:  4,
		Seed:     1,
	}
}

// QuickConfig is a short probe: a smaller file, 1 s per pattern, fewer
// queue depths, no concurrent readers.
func QuickConfig(dir string) Config {
	c := DefaultConfig(dir)
	c.SizeLimit = 256 << 20
	c.Duration = time.Second
	c.Depths = []int{1, 4, 16, 64}
	c.Readers = 0
	return c
}

// limit is the most a default test file size may be.
func (c Config) limit() int64 {
	if c.SizeLimit == 0 {
		return DefaultSize
	}
	return c.SizeLimit
}

// Preflight checks that the test file can be made, before anything is
// written or stored; see the package function Preflight.
func (c Config) Preflight() error {
	_, err := Preflight(c.Dir, c.Size, c.limit(), c.Span)
	return err
}

// Plan lists the patterns of a configuration in the order they run: the
// random reads at each depth; the sequential reads of each size at SeqQD,
// then of the largest size at each other depth and by 2, 4, ... up to
// Readers concurrent readers (the ratio's sequential side at each depth);
// the mix.
func Plan(c Config) []Spec {
	var plan []Spec
	for _, qd := range c.Depths {
		plan = append(plan, Spec{Name: RandRead, BlockSize: PageSize, QD: qd})
	}
	for _, bs := range c.SeqSizes {
		plan = append(plan, Spec{Name: SeqRead, BlockSize: bs, QD: c.SeqQD})
	}
	if len(c.SeqSizes) > 0 {
		largest := slices.Max(c.SeqSizes)
		for _, qd := range c.Depths {
			if qd != c.SeqQD {
				plan = append(plan, Spec{Name: SeqRead, BlockSize: largest, QD: qd})
			}
		}
		for _, r := range readerCounts(c.Readers) {
			plan = append(plan, Spec{Name: SeqRead, BlockSize: largest, QD: r, Readers: true})
		}
	}
	if c.MixQD > 0 {
		plan = append(plan, Spec{Name: RandRW, BlockSize: PageSize, QD: c.MixQD, ReadPct: c.MixRead})
	}
	return plan
}

// readerCounts are the counts of concurrent readers measured up to n:
// 2, 4, 8, ... and n itself (one reader is the sequential read at QD 1).
func readerCounts(n int) []int {
	var out []int
	for r := 2; r < n; r *= 2 {
		out = append(out, r)
	}
	if n >= 2 {
		out = append(out, n)
	}
	return out
}

// Check validates a configuration before anything is created.
func (c Config) Check() error {
	if c.Duration <= 0 {
		return fmt.Errorf("duration %s is not positive", c.Duration)
	}
	if c.Size != 0 && c.Size%sizeUnit != 0 {
		return fmt.Errorf("test file size %d bytes is not a whole number of MiB", c.Size)
	}
	if c.Readers < 0 || c.Readers > MaxQD {
		return fmt.Errorf("%d concurrent readers is not between 0 and %d", c.Readers, MaxQD)
	}
	plan := Plan(c)
	if len(plan) == 0 {
		return fmt.Errorf("no patterns to run")
	}
	for _, s := range plan {
		if err := s.check(); err != nil {
			return fmt.Errorf("pattern %s: %w", s, err)
		}
	}
	return nil
}

// Probe creates the test file, measures every pattern of the plan, calls
// each (if not nil) with every pattern as soon as it is measured, and
// removes the file whatever happens. On Ctrl-C it returns what was
// measured, marked Interrupted, with ctx.Err().
func Probe(ctx context.Context, c Config, each func(result.IOPattern) error) (*result.IOProbe, error) {
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("probing storage: %w", err)
	}
	say := c.Progress
	if say == nil {
		say = func(string) {}
	}
	started := time.Now()
	f, err := Create(ctx, c.Dir, c.Size, c.limit(), c.Span, c.Buffered, c.Seed, say)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &result.IOProbe{
		Dir:        c.Dir,
		File:       f.path,
		FSType:     f.space.fsType,
		FileSize:   f.size,
		Span:       f.span,
		Sparse:     f.sparse,
		FreeBefore: f.space.avail,
		Direct:     f.direct,
		Buffered:   f.buffered,
		Engine:     Engine,
		Fill:       result.IOFill{Bytes: f.size, Elapsed: f.fill, MBps: float64(f.size) / f.fill.Seconds() / 1e6},
		Duration:   c.Duration,
		Seed:       c.Seed,
		Started:    started,
	}
	if !f.space.known() {
		r.FreeBefore = -1
	}
	plan := Plan(c)
	for i, s := range plan {
		say(fmt.Sprintf("io: %s (%d of %d, %s)", s, i+1, len(plan), c.Duration))
		p, err := f.Measure(ctx, s, c.Duration, c.Seed+uint64(i))
		if ctx.Err() != nil {
			r.Interrupted = true
			r.Ratio, r.Ratios = Ratio(r.Patterns), Ratios(r.Patterns)
			return r, ctx.Err()
		}
		if err != nil {
			return r, err
		}
		r.Patterns = append(r.Patterns, p)
		if each != nil {
			if err := each(p); err != nil {
				return r, err
			}
		}
	}
	r.Ratio, r.Ratios = Ratio(r.Patterns), Ratios(r.Patterns)
	if err := f.Close(); err != nil {
		return r, err
	}
	return r, nil
}

// Ratio sets the measured random-to-sequential page-rate ratio beside the
// classic model's: 8 KiB random reads per second at QD1 against the 8 KiB
// pages per second of the largest sequential read measured. Nil when
// either is missing.
func Ratio(ps []result.IOPattern) *result.IORatio {
	var rnd, seq *result.IOPattern
	for i := range ps {
		p := &ps[i]
		switch {
		case p.Name == RandRead && p.QD == 1 && p.BlockSize == PageSize:
			rnd = p
		case p.Name == SeqRead && (seq == nil || p.BlockSize > seq.BlockSize):
			seq = p
		}
	}
	if rnd == nil || seq == nil || rnd.Read.IOPS == 0 {
		return nil
	}
	pages := seq.Read.MBps * 1e6 / PageSize
	return &result.IORatio{
		PageSize:       PageSize,
		RandomIOPS:     rnd.Read.IOPS,
		SeqBlockSize:   seq.BlockSize,
		SeqPagesPerSec: pages,
		Ratio:          pages / rnd.Read.IOPS,
		ModelName:      ModelName,
		ModelRandom:    ModelRandomIOPS,
		ModelSeqPages:  ModelSeqPagesSec,
		ModelRatio:     ModelSeqPagesSec / ModelRandomIOPS,
	}
}

// Ratios is the random/sequential page-rate ratio at each queue depth
// where both were measured: 8 KiB random reads per second at QD n against
// the 8 KiB pages per second of the largest sequential read of one
// sequence at QD n, and of n concurrent readers (one reader: the one
// sequence at QD 1). In depth order, the depths first.
func Ratios(ps []result.IOPattern) []result.IORatioAt {
	rnd := map[int]float64{}
	type key struct{ qd, readers int }
	seq, size := map[key]float64{}, map[key]int{}
	for _, p := range ps {
		switch {
		case p.Name == RandRead && p.BlockSize == PageSize:
			rnd[p.QD] = p.Read.IOPS
		case p.Name == SeqRead:
			k := key{p.QD, p.Readers}
			if p.BlockSize > size[k] {
				seq[k], size[k] = p.Read.MBps*1e6/PageSize, p.BlockSize
			}
		}
	}
	var out []result.IORatioAt
	add := func(qd, readers int, pages float64) {
		if r := rnd[qd]; r > 0 && pages > 0 {
			out = append(out, result.IORatioAt{QD: qd, Readers: readers, RandomIOPS: r, SeqPagesPerSec: pages, Ratio: pages / r})
		}
	}
	var depths, readers []int
	for k := range seq {
		if k.readers == 0 {
			depths = append(depths, k.qd)
		} else {
			readers = append(readers, k.readers)
		}
	}
	slices.Sort(depths)
	slices.Sort(readers)
	for _, d := range depths {
		add(d, 0, seq[key{d, 0}])
	}
	if len(readers) > 0 {
		add(1, 1, seq[key{1, 0}])
	}
	for _, r := range readers {
		add(r, r, seq[key{r, r}])
	}
	return out
}
