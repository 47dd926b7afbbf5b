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
// within half a second: the C, memlat.PingPong as 'probe mem --quick' calls
// it (40 clean windows of 2 ms, the lowest), the C again. A virtual
// machine's vCPUs can change placement between two runs, so only the
// rounds whose two C runs agree within 15% compare; the benchmark
// reports the median ratio of those (probe over the mean of the two C)
// and how many agreed. One round per b.N: go test ./internal/memlat
// -run '^$' -bench C2CAgainstC -benchtime 20x -v
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
	lowest := regexp.MustCompile(`thread-cpu median [0-9.]+ min ([0-9.]+)`)
	c := func() float64 {
		out, err := exec.Command(bin, "0", "1").Output()
		m := lowest.FindSubmatch(out)
		if err != nil || m == nil {
			b.Fatalf("running the C ping-pong: %v\n%s", err, out)
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		return v
	}
	var ratios []float64
	for r := range b.N {
		before := c()
		s, err := PingPong(context.Background(), 0, 1, 40, 2*time.Millisecond)
		if err != nil {
			b.Fatal(err)
		}
		after := c()
		agree := max(before, after)/min(before, after) < 1.15
		b.Logf("round %d: C %.1f ns, probe %.1f ns, C %.1f ns: ratio %.2f, C runs agree %v", r+1, before, s.Min, after, s.Min/((before+after)/2), agree)
		if agree {
			ratios = append(ratios, s.Min/((before+after)/2))
		}
	}
	b.ReportMetric(float64(len(ratios)), "rounds-agreed")
	if len(ratios) > 0 {
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "probe/C")
	}
}
