package memlat

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// likwidTests are likwid-bench's kernels that do what the probe's do with
// the same register width: loads; non-temporal stores; copy and STREAM's
// triad (likwid's "stream", a = b·s + c) with non-temporal stores.
var likwidTests = map[string]string{OpRead: "load", OpWrite: "store_mem", OpCopy: "copy_mem", OpTriad: "stream_mem"}

// likwidWidth is likwid-bench's suffix for a kernel's register width.
var likwidWidth = map[string]string{"AVX-512": "_avx512", "AVX2": "_avx", "SSE2": "_sse"}

// likwidSize is likwid-bench's working set, all threads together.
const likwidSize = "512MB"

// BenchmarkBandwidthAgainstLikwid sets the probe's bandwidth beside
// likwid-bench's (Debian's likwid) on one thread and on all of them, per
// operation, likwid and numalab alternating which goes first each round:
// numalab as the probe measures a point (bwPoint with the full probe's
// window: the highest clean window of up to four), likwid-bench with the
// same register width over 512 MB on the same hardware threads, both in
// 4 KiB pages (the probe maps 2 MiB ones where it can). likwid
// times its run on the wall clock, so a neighbour taking its CPU lowers
// its figure, while the probe's clean windows do not see it: the ratio
// that compares is the best round of each (best/best); the median of the
// rounds' ratios is printed beside it. One round per b.N:
//
//	go test ./internal/memlat -run '^$' -bench BandwidthAgainstLikwid -benchtime 3x -v
func BenchmarkBandwidthAgainstLikwid(b *testing.B) {
	bin, err := exec.LookPath("likwid-bench")
	if err != nil {
		b.Skip("likwid-bench is not installed (Debian: apt-get install likwid): nothing to compare with")
	}
	k := widest()
	width, ok := likwidWidth[k.Name]
	if !ok {
		b.Skipf("likwid-bench has no kernels of the probe's width here (%s)", k.Label())
	}
	t := hostTopology(b)
	cpus := streamCPUs(t)
	// likwid-bench's arrays come from malloc: 4 KiB pages unless THP is
	// "always", and then so are these.
	rb, err := mapBuffer("/", bwBytes(t, len(cpus)), Pages4K, -1)
	if err != nil {
		b.Fatal(err)
	}
	defer rb.free()
	window := time.Duration(DefaultConfig(false).BWWindowMS) * time.Millisecond
	for _, op := range bwOps {
		test := likwidTests[op] + width
		b.Run(op, func(b *testing.B) {
			for _, n := range []int{1, len(cpus)} {
				var ours, theirs, ratios []float64
				for r := range b.N {
					var us, them, wall float64
					measure := []func(){
						func() { us = numalabGBps(b, k, op, cpus[:n], rb.mem, window) },
						func() { them, wall = likwidGBps(b, bin, test, n) },
					}
					if r%2 == 1 {
						slices.Reverse(measure)
					}
					for _, m := range measure {
						m()
					}
					ours, theirs, ratios = append(ours, us), append(theirs, them), append(ratios, us/them)
					b.Logf("%s, %d threads, round %d: numalab %.1f GB/s, likwid-bench %s %.1f GB/s (%.1f on the wall clock): %.2f",
						op, n, r+1, us, test, them, wall, us/them)
				}
				best := slices.Max(ours) / slices.Max(theirs)
				b.Logf("%s, %d threads: numalab/likwid best/best %.2f, median of %d rounds' ratios %.2f", op, n, best, len(ratios), median(ratios))
				b.ReportMetric(best, fmt.Sprintf("numalab/likwid-%dthr", n))
			}
		})
	}
}

func numalabGBps(b *testing.B, k kernel, op string, cpus []int, mem []byte, window time.Duration) float64 {
	pt, err := bwPoint(context.Background(), k, op, cpus, mem, window)
	if err != nil {
		b.Fatal(err)
	}
	return pt.GBps
}

var (
	likwidRate   = regexp.MustCompile(`MByte/s:\s+([0-9.]+)`)
	likwidVolume = regexp.MustCompile(`Data volume \(Byte\):\s+([0-9]+)`)
)

// Iteration counts of likwid-bench's two runs per figure.
const likwidLo, likwidHi = 10, 40

// likwidGBps runs likwid-bench's test on the first threads hardware
// threads of socket 0 twice, likwidLo and likwidHi iterations, and
// returns its rate in 10^9 B/s on its threads' CPU time: the extra bytes
// of the longer run over its extra CPU time per thread (setting up the
// arrays costs both runs alike and cancels), so that, as the probe's
// windows, it counts only time its threads ran. wall is likwid-bench's
// own figure (the longer run's MByte/s), timed on the wall clock.
func likwidGBps(b *testing.B, bin, test string, threads int) (cpu, wall float64) {
	run := func(iters int) (bytes, secs float64) {
		cmd := exec.Command(bin, "-t", test, "-i", strconv.Itoa(iters), "-w", fmt.Sprintf("S0:%s:%d", likwidSize, threads))
		out, err := cmd.CombinedOutput()
		v, r := likwidVolume.FindSubmatch(out), likwidRate.FindSubmatch(out)
		if err != nil || v == nil || r == nil {
			b.Fatalf("running likwid-bench -t %s: %v\n%s", test, err, out)
		}
		bytes, _ = strconv.ParseFloat(string(v[1]), 64)
		wall, _ = strconv.ParseFloat(string(r[1]), 64)
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		return bytes, time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	b0, s0 := run(likwidLo)
	b1, s1 := run(likwidHi)
	if s1 <= s0 {
		b.Fatalf("likwid-bench -t %s: %d iterations took %.3f s of CPU, %d took %.3f s: no difference to time", test, likwidHi, s1, likwidLo, s0)
	}
	return (b1 - b0) / ((s1 - s0) / float64(threads)) / 1e9, wall / 1000 // MByte/s are 10^6 B/s
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
