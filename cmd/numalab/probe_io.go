package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/iobench"
	"github.com/numalab/numalab/internal/result"
)

const probeIOHelp = `Usage: numalab probe io [--path DIR] [--size SIZE] [--duration D] [--quick] [--json]

Measures the storage under DIR as a database sees it, on a test file
numalab-iobench-<pid>.dat that it creates in DIR, fills with incompressible
data, fsyncs, and removes afterwards (also on error and Ctrl-C):

  - 8 KiB random reads at queue depths 1, 2, 4, ..., 64: IOPS, mean, p50 and
    p99 latency;
  - sequential reads of 64 KiB, 256 KiB and 1 MiB: MB/s;
  - a 70/30 random read/write mix of 8 KiB at queue depth 16: IOPS of each.

Every operation uses O_DIRECT, so the page cache is not measured. Where the
filesystem refuses O_DIRECT (e.g. ramfs) the probe falls back to buffered
I/O, drops the file from the page cache before each pattern, and labels the
result "buffered: O_DIRECT refused by <fs>". Queue depth N is N threads,
each with one pread/pwrite in flight (fio: ioengine=psync, numjobs=N).

It then sets the random-to-sequential page-rate ratio (sequential 8 KiB
pages per second from the 1 MiB reads, divided by random 8 KiB reads per
second at QD1) beside a classic optimizer IO cost model's: 320 random reads
against 1,350 sequential pages per second, about 4.2.

The test file is 1 GiB (256 MiB with --quick), or half the free space when
that is less; it must leave 5% of the filesystem (at least 4 MiB, at most
1 GiB) free. The run is stored (kind "probe-io") in --store.

Examples:
  numalab probe io --path /var/lib/postgresql          # the disk the database is on
  numalab probe io --path /mnt/nvme --quick            # about 20 s
  numalab probe io --path . --size 4GiB --duration 10s # a bigger file, longer windows
  numalab probe io --path /data --qd 1,8,32 --mix-qd 0 --json > io.json
`

// probeIOConfig is the configuration stored with the run.
type probeIOConfig struct {
	Dir      string `json:"dir"`
	Size     int64  `json:"size"` // 0 = chosen from the free space
	Duration string `json:"duration"`
	Quick    bool   `json:"quick"`
	Depths   []int  `json:"depths"`
	SeqSizes []int  `json:"seq_sizes"`
	SeqQD    int    `json:"seq_qd"`
	MixQD    int    `json:"mix_qd"`
	MixRead  int    `json:"mix_read_pct"`
	Buffered bool   `json:"buffered"`
	Seed     uint64 `json:"seed"`
}

func cmdProbeIO(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "probe io", probeIOHelp)
	path := fs.String("path", ".", "`directory` on the storage to test; the test file is made and removed here")
	sizeArg := fs.String("size", "", "test file `size`, e.g. 512MiB, 4GiB (default: 1GiB, 256MiB with --quick, less when space is short)")
	duration := fs.Duration("duration", 0, "measured `window` of each pattern (default 3s, 1s with --quick)")
	quick := fs.Bool("quick", false, "a short probe: 256 MiB file, 1 s per pattern, QD 1, 4, 16, 64")
	qdArg := fs.String("qd", "", "`depths` of the 8 KiB random reads, comma-separated (default 1,2,4,8,16,32,64; 1,4,16,64 with --quick)")
	seqArg := fs.String("seq", "64KiB,256KiB,1MiB", "block `sizes` of the sequential reads, comma-separated")
	seqQD := fs.Int("seq-qd", 1, "queue `depth` of the sequential reads")
	mixQD := fs.Int("mix-qd", 16, "queue `depth` of the 70/30 read/write mix; 0 skips it")
	mixRead := fs.Int("mix-read", 70, "`percent` of reads in the mix")
	buffered := fs.Bool("buffered", false, "use buffered I/O (page cache) even where O_DIRECT works")
	seed := fs.Uint64("seed", 1, "`seed` of the test data and the random offsets")
	asJSON := fs.Bool("json", false, "print the result as JSON instead of a table")
	storePath := storeFlag(fs)
	if done, err := parseNoArgs(e, fs, args); done {
		return err
	}

	c := iobench.DefaultConfig(*path)
	if *quick {
		c = iobench.QuickConfig(*path)
	}
	c.Seed = *seed
	c.Buffered = *buffered
	c.SeqQD, c.MixQD, c.MixRead = *seqQD, *mixQD, *mixRead
	var errs []error
	if *path == "" {
		errs = append(errs, badFlag("path", *path, "is empty (want a directory on the storage to test)"))
	}
	if *sizeArg != "" {
		n, err := parseByteSize(*sizeArg)
		switch {
		case err != nil:
			errs = append(errs, badFlag("size", *sizeArg, "is not a size (want e.g. 512MiB, 4GiB or a byte count)"))
		case n < iobench.MinSize || n%(1<<20) != 0:
			errs = append(errs, badFlag("size", *sizeArg, fmt.Sprintf("is not a whole number of MiB of at least %s (try 256MiB)", strings.ReplaceAll(iobench.FormatBytes(iobench.MinSize), " ", ""))))
		default:
			c.Size = n
		}
	}
	if *duration != 0 {
		if *duration < 100*time.Millisecond {
			errs = append(errs, badFlag("duration", duration.String(), "is too short (want at least 100ms; try 3s)"))
		}
		c.Duration = *duration
	}
	if *qdArg != "" {
		d, err := parseList(*qdArg, strconv.Atoi)
		if err != nil || !allIn(d, 1, 1024) {
			errs = append(errs, badFlag("qd", *qdArg, "is not a list of queue depths from 1 to 1024 (try 1,4,16,64)"))
		}
		c.Depths = d
	}
	sizes, err := parseList(*seqArg, func(s string) (int, error) { n, err := parseByteSize(s); return int(n), err })
	if err != nil || !allIn(sizes, 4096, 1<<20) || !allDivide(sizes, 4096, 1<<20) {
		errs = append(errs, badFlag("seq", *seqArg, "is not a list of block sizes from 4KiB to 1MiB, powers of two (try 64KiB,1MiB)"))
	}
	c.SeqSizes = sizes
	if *seqQD < 1 || *seqQD > 1024 {
		errs = append(errs, badFlag("seq-qd", strconv.Itoa(*seqQD), "is not a queue depth from 1 to 1024"))
	}
	if *mixQD < 0 || *mixQD > 1024 {
		errs = append(errs, badFlag("mix-qd", strconv.Itoa(*mixQD), "is not a queue depth from 0 (no mix) to 1024"))
	}
	if *mixRead < 0 || *mixRead > 100 {
		errs = append(errs, badFlag("mix-read", strconv.Itoa(*mixRead), "is not a percentage from 0 to 100"))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if err := c.Check(); err != nil {
		return err
	}
	if err := c.Preflight(); err != nil {
		return err
	}

	rec, err := startRun(ctx, e, *storePath, "probe-io", probeIOConfig{
		Dir: c.Dir, Size: c.Size, Duration: c.Duration.String(), Quick: *quick, Depths: c.Depths,
		SeqSizes: c.SeqSizes, SeqQD: c.SeqQD, MixQD: c.MixQD, MixRead: c.MixRead, Buffered: c.Buffered, Seed: c.Seed,
	})
	if err != nil {
		return err
	}
	pr := newProgress(e.stderr)
	c.Progress = pr.Say
	r, err := iobench.Probe(ctx, c, func(p result.IOPattern) error { return rec.Add("result.IOPattern", p) })
	pr.Done()
	if r != nil {
		if aerr := rec.Add("result.IOProbe", r); aerr != nil && err == nil {
			err = aerr
		}
	}
	if ferr := rec.Finish(err, ioHeadline(r)); ferr != nil && err == nil {
		err = ferr
	}
	if r != nil {
		var werr error
		if *asJSON {
			werr = writeJSON(e.stdout, r)
		} else {
			werr = iobench.WriteText(e.stdout, r)
		}
		if err == nil {
			err = werr
		}
	}
	if errors.Is(err, context.Canceled) && r != nil {
		err = fmt.Errorf("probe io interrupted after %d of %d patterns (those are printed and stored; the test file is removed): %w",
			len(r.Patterns), len(iobench.Plan(c)), err)
	}
	return err
}

// ioHeadline is the run's one-line figure for listings.
func ioHeadline(r *result.IOProbe) string {
	if r == nil {
		return ""
	}
	var parts []string
	for _, p := range r.Patterns {
		if p.Name == iobench.RandRead && p.QD == 1 {
			parts = append(parts, fmt.Sprintf("8 KiB random read QD1 %.0f IOPS", p.Read.IOPS))
		}
	}
	best := 0.0
	for _, p := range r.Patterns {
		if p.Name == iobench.RandRead {
			best = math.Max(best, p.Read.IOPS)
		}
	}
	if best > 0 {
		parts = append(parts, fmt.Sprintf("best %.0f IOPS", best))
	}
	for _, p := range r.Patterns {
		if p.Name == iobench.SeqRead && p.BlockSize == 1<<20 {
			parts = append(parts, fmt.Sprintf("1 MiB sequential %.0f MB/s", p.Read.MBps))
		}
	}
	if r.Ratio != nil {
		parts = append(parts, fmt.Sprintf("page-rate ratio %.1f (model 4.2)", r.Ratio.Ratio))
	}
	if !r.Direct {
		parts = append(parts, r.Buffered)
	}
	return strings.Join(parts, ", ")
}

// parseByteSize reads a byte count: a number with an optional unit, B, K/KiB,
// M/MiB, G/GiB, T/TiB (all binary), as in 512MiB, 4G or 1048576.
func parseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.TrimSpace(t[i:])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("parsing size %q: want a number and a unit such as 512MiB", s)
	}
	mult := map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
		"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}[strings.ToLower(unit)]
	if mult == 0 {
		return 0, fmt.Errorf("parsing size %q: unknown unit %q (want B, KiB, MiB, GiB or TiB)", s, unit)
	}
	n := v * mult
	if n != math.Trunc(n) || n > math.MaxInt64/2 {
		return 0, fmt.Errorf("parsing size %q: not a whole number of bytes", s)
	}
	return int64(n), nil
}

// parseList reads a comma-separated list.
func parseList(s string, parse func(string) (int, error)) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := parse(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func allIn(v []int, lo, hi int) bool {
	for _, x := range v {
		if x < lo || x > hi {
			return false
		}
	}
	return len(v) > 0
}

// allDivide reports whether every v is a multiple of unit that divides whole.
func allDivide(v []int, unit, whole int) bool {
	for _, x := range v {
		if x <= 0 || x%unit != 0 || whole%x != 0 {
			return false
		}
	}
	return true
}
