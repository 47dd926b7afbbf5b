package iobench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/golden"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

func TestSummarize(t *testing.T) {
	h := stats.NewHistogram()
	for _, ns := range []int64{3000, 1000, 2000, 4000} {
		h.Record(ns)
	}
	s := summarize(h, 8192, 2*time.Second)
	want := result.IOStats{Ops: 4, Bytes: 4 * 8192, IOPS: 2, MBps: 4 * 8192 / 2 / 1e6, MeanUs: 2.5,
		P50Us: 2, P99Us: 4, MaxUs: 4}
	if s != want {
		t.Errorf("summarize = %+v, want %+v", s, want)
	}
	if z := summarize(stats.NewHistogram(), 8192, time.Second); z != (result.IOStats{}) {
		t.Errorf("summarize(empty) = %+v, want zero", z)
	}
}

func TestPlan(t *testing.T) {
	got := Plan(DefaultConfig("/d"))
	var names []string
	for _, s := range got {
		names = append(names, s.String())
	}
	want := []string{
		"random read 8KiB QD1", "random read 8KiB QD2", "random read 8KiB QD4", "random read 8KiB QD8",
		"random read 8KiB QD16", "random read 8KiB QD32", "random read 8KiB QD64",
		"sequential read 64KiB QD1", "sequential read 256KiB QD1", "sequential read 1MiB QD1",
		"sequential read 1MiB QD2", "sequential read 1MiB QD4", "sequential read 1MiB QD8", "sequential read 1MiB QD16",
		"sequential read 1MiB QD32", "sequential read 1MiB QD64", "sequential read 1MiB, 2 readers",
		"sequential read 1MiB, 4 readers",
		"random read/write 70/30 8KiB QD16",
	}
	if !slices.Equal(names, want) {
		t.Errorf("Plan(DefaultConfig) =\n%q\nwant\n%q", names, want)
	}
	c := DefaultConfig("/d")
	c.SeqSizes = []int{3000}
	if err := c.Check(); err == nil {
		t.Error("Check accepted a 3000-byte block")
	}
	c = DefaultConfig("/d")
	c.Size = 5<<20 + 1
	if err := c.Check(); err == nil {
		t.Error("Check accepted a size that is not whole MiB")
	}
}

// TestRatios pairs random reads with sequential reads at the same depth:
// one sequence with QD in flight, and QD readers of their own sequences
// (one reader being the one sequence at QD 1); depths without both are
// left out.
func TestRatios(t *testing.T) {
	pat := func(name string, bs, qd, readers int, iops, mbps float64) result.IOPattern {
		return result.IOPattern{Name: name, BlockSize: bs, QD: qd, Readers: readers,
			Read: result.IOStats{IOPS: iops, MBps: mbps}}
	}
	ps := []result.IOPattern{
		pat(RandRead, PageSize, 1, 0, 100, 0), pat(RandRead, PageSize, 4, 0, 400, 0), pat(RandRead, PageSize, 16, 0, 800, 0),
		pat(SeqRead, 64<<10, 1, 0, 0, 8.192), // smaller: the 1 MiB read at QD 1 is the one
		pat(SeqRead, 1<<20, 1, 0, 0, 81.92), pat(SeqRead, 1<<20, 4, 0, 0, 163.84), pat(SeqRead, 1<<20, 2, 0, 0, 100),
		pat(SeqRead, 1<<20, 4, 4, 0, 40.96),
	}
	got := Ratios(ps)
	want := []result.IORatioAt{
		{QD: 1, RandomIOPS: 100, SeqPagesPerSec: 10000, Ratio: 100},
		{QD: 4, RandomIOPS: 400, SeqPagesPerSec: 20000, Ratio: 50},
		{QD: 1, Readers: 1, RandomIOPS: 100, SeqPagesPerSec: 10000, Ratio: 100},
		{QD: 4, Readers: 4, RandomIOPS: 400, SeqPagesPerSec: 5000, Ratio: 12.5},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Ratios =\n%+v\nwant\n%+v", got, want)
	}
}

func TestRatio(t *testing.T) {
	ps := []result.IOPattern{
		{Name: RandRead, BlockSize: PageSize, QD: 1, Read: result.IOStats{IOPS: 400}},
		{Name: RandRead, BlockSize: PageSize, QD: 4, Read: result.IOStats{IOPS: 1500}},
		{Name: SeqRead, BlockSize: 64 << 10, QD: 1, Read: result.IOStats{MBps: 10}},
		{Name: SeqRead, BlockSize: 1 << 20, QD: 1, Read: result.IOStats{MBps: 16.384}},
	}
	r := Ratio(ps)
	if r == nil {
		t.Fatal("Ratio = nil")
	}
	if r.SeqBlockSize != 1<<20 || math.Abs(r.SeqPagesPerSec-2000) > 1e-9 || math.Abs(r.Ratio-5) > 1e-9 {
		t.Errorf("Ratio = %+v, want 2000 pages/s from the 1 MiB reads, ratio 5", r)
	}
	if math.Abs(r.ModelRatio-4.21875) > 1e-9 {
		t.Errorf("model ratio %v, want 1350/320", r.ModelRatio)
	}
	if Ratio(ps[1:]) != nil {
		t.Error("Ratio without a QD1 random read is not nil")
	}
}

func smallConfig(dir string) Config {
	c := DefaultConfig(dir)
	c.Size = 8 << 20
	c.Duration = 150 * time.Millisecond
	c.Depths = []int{1, 4}
	c.SeqSizes = []int{64 << 10, 1 << 20}
	c.MixQD = 4
	return c
}

func checkPatterns(t *testing.T, r *result.IOProbe, c Config) {
	t.Helper()
	plan := Plan(c)
	if len(r.Patterns) != len(plan) {
		t.Fatalf("%d patterns, want %d", len(r.Patterns), len(plan))
	}
	for i, p := range r.Patterns {
		s := plan[i]
		if p.Name != s.Name || p.BlockSize != s.BlockSize || p.QD != s.QD {
			t.Errorf("pattern %d is %s %d QD%d, want %s", i, p.Name, p.BlockSize, p.QD, s)
		}
		if p.Measured != c.Duration {
			t.Errorf("%s: measured %s, want %s", s, p.Measured, c.Duration)
		}
		if p.Read.Ops == 0 || p.Read.MeanUs <= 0 || p.Read.P99Us < p.Read.P50Us || p.Read.MaxUs < p.Read.P99Us {
			t.Errorf("%s: read stats %+v are not plausible", s, p.Read)
		}
		if got := float64(p.Read.Ops) / p.Measured.Seconds(); math.Abs(got-p.Read.IOPS) > 1e-6*got {
			t.Errorf("%s: IOPS %v, want ops/measured = %v", s, p.Read.IOPS, got)
		}
		if s.Name == RandRW {
			if p.Write == nil || p.Write.Ops == 0 {
				t.Fatalf("%s: no writes", s)
			}
			share := float64(p.Read.Ops) / float64(p.Read.Ops+p.Write.Ops)
			if math.Abs(share-float64(s.ReadPct)/100) > 0.1 {
				t.Errorf("%s: %.2f of operations were reads, want about %.2f", s, share, float64(s.ReadPct)/100)
			}
		} else if p.Write != nil {
			t.Errorf("%s: has writes", s)
		}
	}
	if r.Ratio == nil {
		t.Error("no ratio")
	}
}

func TestProbeOnHost(t *testing.T) {
	dir := t.TempDir()
	c := smallConfig(dir)
	var seen []result.IOPattern
	r, err := Probe(context.Background(), c, func(p result.IOPattern) error { seen = append(seen, p); return nil })
	if err != nil {
		t.Fatal(err)
	}
	assertGone(t, dir)
	checkPatterns(t, r, c)
	if len(seen) != len(r.Patterns) {
		t.Errorf("each saw %d patterns, want %d", len(seen), len(r.Patterns))
	}
	if r.FSType != "tmpfs" && r.FSType != "ramfs" && !r.Direct {
		t.Logf("O_DIRECT not used on %s: %s", r.FSType, r.Buffered)
	}
	if r.Direct != (r.Buffered == "") {
		t.Errorf("Direct %v with Buffered %q", r.Direct, r.Buffered)
	}
	if r.FileSize != c.Size || r.Fill.Bytes != c.Size || r.Fill.MBps <= 0 {
		t.Errorf("file %d bytes, fill %+v", r.FileSize, r.Fill)
	}
}

func TestProbeBufferedFallbackOnRamfs(t *testing.T) {
	dir := mountTmpfs(t, "ramfs", "")
	c := smallConfig(dir)
	c.Depths, c.SeqSizes, c.MixQD = []int{1}, []int{1 << 20}, 2
	r, err := Probe(context.Background(), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	assertGone(t, dir)
	if r.Direct || r.Buffered != "page cache / RAM (ramfs: O_DIRECT not supported)" {
		t.Errorf("Direct %v, Buffered %q; want the ramfs label", r.Direct, r.Buffered)
	}
	for _, p := range r.Patterns {
		if p.Direct {
			t.Errorf("%s marked O_DIRECT", p.Name)
		}
	}
	if r.FreeBefore != -1 {
		t.Errorf("FreeBefore %d on ramfs, want -1 (not reported)", r.FreeBefore)
	}
	checkPatterns(t, r, c)
}

// TestProbeTmpfsIsRAM: a kernel may accept O_DIRECT on tmpfs, but the
// file is memory; the probe must not label RAM speed as O_DIRECT storage.
func TestProbeTmpfsIsRAM(t *testing.T) {
	dir := mountTmpfs(t, "tmpfs", "size=64m")
	c := smallConfig(dir)
	c.Depths, c.SeqSizes, c.MixQD = []int{1}, []int{1 << 20}, 0
	r, err := Probe(context.Background(), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	assertGone(t, dir)
	if r.Direct || r.Buffered != "page cache / RAM (tmpfs: O_DIRECT not supported)" {
		t.Errorf("Direct %v, Buffered %q; want the tmpfs label", r.Direct, r.Buffered)
	}
	for _, p := range r.Patterns {
		if p.Direct {
			t.Errorf("%s marked O_DIRECT on tmpfs", p.Name)
		}
	}
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil || strings.Contains(b.String(), "O_DIRECT,") ||
		!strings.Contains(b.String(), "page cache / RAM") {
		t.Errorf("text (%v) calls tmpfs O_DIRECT storage:\n%s", err, b.String())
	}
}

func TestProbeBufferedAskedFor(t *testing.T) {
	dir := t.TempDir()
	c := smallConfig(dir)
	c.Depths, c.SeqSizes, c.MixQD, c.Buffered = []int{2}, []int{256 << 10}, 0, true
	r, err := Probe(context.Background(), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Direct || r.Buffered != "buffered: asked for (--buffered)" {
		t.Errorf("Direct %v, Buffered %q", r.Direct, r.Buffered)
	}
	assertGone(t, dir)
}

func TestProbeInterruptedRemovesFile(t *testing.T) {
	dir := t.TempDir()
	c := smallConfig(dir)
	c.Duration = 5 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel)
	t0 := time.Now()
	r, err := Probe(ctx, c, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Probe = %v, want context.Canceled", err)
	}
	if el := time.Since(t0); el > 3*time.Second {
		t.Errorf("Probe took %s to stop after Ctrl-C", el)
	}
	if r == nil || !r.Interrupted || len(r.Patterns) != 0 {
		t.Errorf("result %+v, want interrupted with no finished pattern", r)
	}
	assertGone(t, dir)
}

func TestMeasureRefusesBadSpec(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(context.Background(), dir, MinSize, DefaultSize, 0, false, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, s := range []Spec{
		{Name: "scan", BlockSize: 8192, QD: 1},
		{Name: RandRead, BlockSize: 1000, QD: 1},
		{Name: RandRead, BlockSize: 8192, QD: 0},
		{Name: RandRW, BlockSize: 8192, QD: 1, ReadPct: 101},
	} {
		if _, err := f.Measure(context.Background(), s, time.Millisecond, 1); err == nil {
			t.Errorf("Measure(%+v) succeeded", s)
		}
	}
}

// sample is a fixed probe for the golden files.
func sample() *result.IOProbe {
	st := func(iops, mean, p50, p99, max float64, bs int) result.IOStats {
		return result.IOStats{Ops: int64(iops * 3), Bytes: int64(iops*3) * int64(bs), IOPS: iops,
			MBps: iops * float64(bs) / 1e6, MeanUs: mean, P50Us: p50, P99Us: p99, MaxUs: max}
	}
	ps := []result.IOPattern{
		{Name: RandRead, BlockSize: 8192, QD: 1, ReadPct: 100, Direct: true, Measured: 3 * time.Second,
			Read: st(9500, 104.2, 98.1, 210.5, 1800.2, 8192)},
		{Name: RandRead, BlockSize: 8192, QD: 64, ReadPct: 100, Direct: true, Measured: 3 * time.Second,
			Read: st(120000, 530.0, 480.3, 1500.7, 9000.1, 8192)},
		{Name: SeqRead, BlockSize: 1 << 20, QD: 1, ReadPct: 100, Direct: true, Measured: 3 * time.Second,
			Read: st(1500, 660.6, 650.0, 900.0, 1200.0, 1<<20)},
	}
	w := st(9000, 900, 850, 2500, 6000, 8192)
	ps = append(ps, result.IOPattern{Name: RandRW, BlockSize: 8192, QD: 16, ReadPct: 70, Direct: true,
		Measured: 3 * time.Second, Read: st(21000, 700, 650, 2000, 5000, 8192), Write: &w})
	return &result.IOProbe{
		Dir: "/var/lib/db", File: "/var/lib/db/numalab-iobench-4242.dat", FSType: "ext4",
		FileSize: 1 << 30, FreeBefore: 80 << 30, Direct: true, Engine: Engine,
		Fill:     result.IOFill{Bytes: 1 << 30, Elapsed: 1500 * time.Millisecond, MBps: float64(1<<30) / 1.5 / 1e6},
		Duration: 3 * time.Second, Seed: 1, Patterns: ps, Ratio: Ratio(ps),
		Started: time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC),
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

func TestWriteTextGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, sample()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "probe.txt", b.Bytes())

	r := sample()
	r.Direct, r.Buffered, r.FSType, r.Interrupted = false, "buffered: O_DIRECT refused by ramfs", "ramfs", true
	r.Patterns, r.Ratio = r.Patterns[:1], nil
	b.Reset()
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "probe-buffered.txt", b.Bytes())
}

func TestHeadline(t *testing.T) {
	want := "8 KiB random read QD1 9500 IOPS, best 120000 IOPS, 1 MiB sequential 1573 MB/s, " +
		"page-rate ratio 20.2 (model 4.2)"
	if got := Headline(sample()); got != want {
		t.Errorf("Headline =\n%s\nwant\n%s", got, want)
	}
	r := sample()
	r.Direct, r.Buffered, r.Patterns, r.Ratio = false, "buffered: O_DIRECT refused by ramfs", r.Patterns[2:3], nil
	if got, want := Headline(r), "1 MiB sequential 1573 MB/s, buffered: O_DIRECT refused by ramfs"; got != want {
		t.Errorf("Headline of a buffered sequential-only probe = %q, want %q", got, want)
	}
	if got := Headline(nil); got != "" {
		t.Errorf("Headline(nil) = %q", got)
	}
}

func TestJSONGolden(t *testing.T) {
	b, err := json.MarshalIndent(sample(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "probe.json", append(b, '\n'))
	var back result.IOProbe
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Ratio == nil || back.Ratio.Ratio != sample().Ratio.Ratio || len(back.Patterns) != 4 ||
		back.Patterns[3].Write == nil {
		t.Errorf("JSON does not round-trip: %+v", back)
	}
}

func TestValidBlockSize(t *testing.T) {
	for n, want := range map[int]bool{4096: true, 65536: true, 1 << 20: true, 0: false, -4096: false, 3000: false,
		12288: false, 2 << 20: false} {
		if got := ValidBlockSize(n); got != want {
			t.Errorf("ValidBlockSize(%d) = %v, want %v", n, got, want)
		}
	}
}
