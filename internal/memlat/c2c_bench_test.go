package memlat

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkC2CAgainstC sets the probe's cache-to-cache figure beside an
// independent C ping-pong (testdata/pingpong.c) on CPUs 0 and 1, A-B-A
// within half a second on a quiet machine: the C, memlat.PingPong as
// 'probe mem --quick' calls it (40 clean windows of 2 ms, the lowest), the
// C again. A virtual machine's host can move its vCPUs between placements
// or run other work on them: a round compares only when the host held
// them still, both C runs' windows within C2CSpreadBound (median over
// lowest) and the two C runs within 15% of each other. The benchmark
// reports how many rounds were still, the median ratio of those (probe
// over the mean of the two C), and in how many rounds the probe's verdict
// (newC2CPair: steady or not) matched the C's. One round per b.N:
//
//	go test ./internal/memlat -run '^$' -bench C2CAgainstC -benchtime 20x -v
func BenchmarkC2CAgainstC(b *testing.B) {
	var cpus unix.CPUSet
	if err := unix.SchedGetaffinity(0, &cpus); err != nil || !cpus.IsSet(0) || !cpus.IsSet(1) {
		b.Skip("the ping-pong runs on CPUs 0 and 1, and this process may not run on both")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		b.Skip("no C compiler (cc) to build the independent ping-pong with")
	}
	bin := filepath.Join(b.TempDir(), "pingpong")
	if out, err := exec.Command(cc, "-O2", "-pthread", "-o", bin, "testdata/pingpong.c").CombinedOutput(); err != nil {
		b.Fatalf("building testdata/pingpong.c: %v\n%s", err, out)
	}
	window := regexp.MustCompile(`thread-cpu median ([0-9.]+) min ([0-9.]+)`)
	c := func() (low, spread float64) {
		out, err := exec.Command(bin, "0", "1").Output()
		m := window.FindSubmatch(out)
		if err != nil || m == nil {
			b.Fatalf("running the C ping-pong: %v\n%s", err, out)
		}
		med, _ := strconv.ParseFloat(string(m[1]), 64)
		low, _ = strconv.ParseFloat(string(m[2]), 64)
		return low, med / low
	}
	var ratios []float64
	still, judged := 0, 0
	for r := range b.N {
		before, sb := c()
		s, err := PingPong(context.Background(), 0, 1, 40, 2*time.Millisecond)
		if err != nil {
			b.Fatal(err)
		}
		after, sa := c()
		p := newC2CPair(PairSameLLC, [2]int{0, 1}, s, 0, "")
		// The host held the vCPUs still when both C runs' windows stayed
		// within the probe's bound and the two agree within 15%.
		steady := max(sb, sa) <= C2CSpreadBound && max(before, after)/min(before, after) < 1.15
		verdict := "steady"
		if p.Unsteady != "" {
			verdict = "unsteady"
		}
		if (p.Unsteady == "") == steady {
			judged++
		}
		ratio := p.BestNS / ((before + after) / 2)
		b.Logf("round %d: C %.1f ns (median/min %.2f), probe %.1f ns (%.2f, %s), C %.1f ns (%.2f): ratio %.2f, host still %v",
			r+1, before, sb, p.BestNS, p.Spread, verdict, after, sa, ratio, steady)
		if steady {
			still++
			ratios = append(ratios, ratio)
		}
	}
	b.ReportMetric(float64(still), "rounds-still")
	b.ReportMetric(float64(judged), "verdicts-as-C")
	if len(ratios) > 0 {
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "probe/C")
	}
}
