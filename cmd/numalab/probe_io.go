package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/iobench"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/units"
)

func cmdProbeIO(ctx context.Context, e *env, args []string) error {
	fs := cliflag.New(e.stderr, "probe io", helpText("probe-io"))
	path := fs.String("path", ".", "`directory` on the storage to test; the test file is made and removed here")
	var size units.Bytes
	fs.Var(&size, "size", "test file `size`, e.g. 512MiB, 4GiB (default: 1GiB, 256MiB with --quick, less when space is short)")
	duration := cliflag.RangedDuration(fs, "duration", 0, 100*time.Millisecond, time.Hour, "measured `window` of each pattern, 100ms to 1h (default 3s, 1s with --quick)")
	quick := fs.Bool("quick", false, "a short probe: 256 MiB file, 1 s per pattern, QD 1, 4, 16, 64")
	qdArg := fs.String("qd", "", "`depths` of the 8 KiB random reads, comma-separated (default 1,2,4,8,16,32,64; 1,4,16,64 with --quick)")
	seq := units.List{64 << 10, 256 << 10, 1 << 20}
	fs.Var(&seq, "seq", "block `sizes` of the sequential reads, comma-separated")
	seqQD := cliflag.RangedInt(fs, "seq-qd", 1, 1, iobench.MaxQD, "queue `depth` of the sequential reads, 1 to 1024")
	mixQD := cliflag.RangedInt(fs, "mix-qd", 16, 0, iobench.MaxQD, "queue `depth` of the 70/30 read/write mix, up to 1024; 0 skips it")
	mixRead := cliflag.RangedInt(fs, "mix-read", 70, 0, 100, "`percent` of reads in the mix, 0 to 100")
	var span units.Bytes
	fs.Var(&span, "span", "spread the test file's data over `size` bytes, e.g. 8GiB: 1 MiB chunks evenly spaced, holes between where the filesystem keeps them (default: no span, the data back to back)")
	readers := cliflag.RangedInt(fs, "readers", 0, 0, iobench.MaxQD, "concurrent sequential `readers` up to this, each its own sequence (2, 4, ... N); 0: none (default 4, 0 with --quick)")
	buffered := fs.Bool("buffered", false, "use buffered I/O (page cache) even where O_DIRECT works")
	seed := fs.Uint64("seed", 1, "`seed` of the test data and the random offsets")
	asJSON := fs.Bool("json", false, "print the result as JSON instead of a table")
	storePath := cliflag.Store(fs)
	done, errs, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return err
	}

	c := iobench.DefaultConfig(*path)
	if *quick {
		c = iobench.QuickConfig(*path)
	}
	c.Size, c.Seed, c.Buffered = int64(size), *seed, *buffered
	c.SeqQD, c.MixQD, c.MixRead, c.Span = *seqQD, *mixQD, *mixRead, int64(span)
	if cliflag.Given(fs, "readers") {
		c.Readers = *readers
	}
	if *duration != 0 { // 0: not given
		c.Duration = *duration
	}
	if *qdArg != "" {
		d, err := cliflag.ParseInts("qd", *qdArg, 1)
		if err == nil && slices.ContainsFunc(d, func(q int) bool { return q > iobench.MaxQD }) {
			err = cliflag.Bad("qd", *qdArg, "is not a list of queue depths from 1 to 1024 (try 1,4,16,64)")
		}
		errs = append(errs, err)
		c.Depths = d
	}
	c.SeqSizes = nil
	for _, b := range seq {
		c.SeqSizes = append(c.SeqSizes, int(b))
	}
	if err := errors.Join(append(errs, c.CheckFlags()...)...); err != nil {
		return err
	}
	if err := c.Check(); err != nil {
		return err
	}
	if err := c.Preflight(); err != nil {
		return err
	}

	rec, err := startRun(ctx, e, *storePath, result.RunProbeIO, c.Stored(*quick))
	if err != nil {
		return err
	}
	pr := newProgress(e.stderr)
	c.Progress = pr.Say
	r, err := iobench.Probe(ctx, c, func(p result.IOPattern) error { return rec.Add(result.KindIOPattern.Of(p)) })
	pr.Done()
	if r != nil {
		if aerr := rec.Add(result.KindIOProbe.Of(*r)); aerr != nil && err == nil {
			err = aerr
		}
	}
	if ferr := rec.Finish(err, iobench.Headline(r)); ferr != nil && err == nil {
		err = ferr
	}
	if r != nil {
		werr := writeAs(e.stdout, *asJSON, r, iobench.WriteText)
		if err == nil {
			err = werr
		}
	}
	if errors.Is(err, context.Canceled) {
		done := 0 // stopped before the probe had its test file
		if r != nil {
			done = len(r.Patterns)
		}
		err = fmt.Errorf("probe io interrupted after %d of %d patterns (those are printed and stored; the test file is removed): %w",
			done, len(iobench.Plan(c)), err)
	}
	return err
}
