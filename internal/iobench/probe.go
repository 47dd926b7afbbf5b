package iobench

import (
	"context"
	"fmt"
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
	Buffered  bool          // skip O_DIRECT even where it works
	Seed      uint64        // seeds the file's data and every worker's offsets
	Progress  func(string)  // progress lines; nil = silent
}

// DefaultConfig is the full probe: 3 s per pattern, QD 1 to 64, three
// sequential sizes and a 70/30 mix at QD 16.
func DefaultConfig(dir string) Config {
	return Config{
		Dir:      dir,
		Duration: 3 * time.Second,
		Depths:   []int{1, 2, 4, 8, 16, 32, 64},
		SeqSizes: []int{64 << 10, 256 << 10, 1 << 20},
		SeqQD:    1,
		MixQD:    16,
		MixRead:  70,
		Seed:     1,
	}
}

// QuickConfig is a short probe: a smaller file, 1 s per pattern, fewer
// queue depths.
func QuickConfig(dir string) Config {
	c := DefaultConfig(dir)
	c.SizeLimit = 256 << 20
	c.Duration = time.Second
	c.Depths = []int{1, 4, 16, 64}
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
	_, err := Preflight(c.Dir, c.Size, c.limit())
	return err
}

// Plan lists the patterns of a configuration in the order they run.
func Plan(c Config) []Spec {
	var plan []Spec
	for _, qd := range c.Depths {
		plan = append(plan, Spec{Name: RandRead, BlockSize: PageSize, QD: qd})
	}
	for _, bs := range c.SeqSizes {
		plan = append(plan, Spec{Name: SeqRead, BlockSize: bs, QD: c.SeqQD})
	}
	if c.MixQD > 0 {
		plan = append(plan, Spec{Name: RandRW, BlockSize: PageSize, QD: c.MixQD, ReadPct: c.MixRead})
	}
	return plan
}

// Check validates a configuration before anything is created.
func (c Config) Check() error {
	if c.Duration <= 0 {
		return fmt.Errorf("duration %s is not positive", c.Duration)
	}
	if c.Size != 0 && c.Size%sizeUnit != 0 {
		return fmt.Errorf("test file size %d bytes is not a whole number of MiB", c.Size)
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
	f, err := Create(ctx, c.Dir, c.Size, c.limit(), c.Buffered, c.Seed, say)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &result.IOProbe{
		Dir:        c.Dir,
		File:       f.path,
		FSType:     f.space.fsType,
		FileSize:   f.size,
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
			r.Ratio = Ratio(r.Patterns)
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
	r.Ratio = Ratio(r.Patterns)
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
