package memlat

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/topo"
)

// TestC2CPairs: the pairs come from the topology, one per class the
// machine has, and the classes it lacks are named.
func TestC2CPairs(t *testing.T) {
	for _, tc := range []struct {
		machine string
		pairs   [][2]int
		classes []string
		missing []string
	}{
		// One node, four packages of two cores of two threads, one L3 per package.
		{"16em64t-4s2c2t.tar.bz2", [][2]int{{0, 8}, {0, 4}, {0, 1}}, []string{PairSMT, PairSameLLC, PairOtherLLC},
			[]string{PairOtherNode}},
		// One node per L3 of eight cores, no SMT.
		{"64amd64-4s2n4ca2co.tar.bz2", [][2]int{{0, 1}, {0, 8}}, []string{PairSameLLC, PairOtherNode},
			[]string{PairSMT, PairOtherLLC}},
		// This machine as captured: two vCPUs sharing an L3.
		{"kvm-2vcpu-zen.tar.gz", [][2]int{{0, 1}}, []string{PairSameLLC}, []string{PairSMT, PairOtherLLC, PairOtherNode}},
	} {
		m, _, err := topo.Load(filepath.Join("..", "..", "testdata", "topology", tc.machine), "")
		if err != nil {
			t.Fatal(err)
		}
		pairs, classes, missing := C2CPairs(m)
		if !slices.Equal(pairs, tc.pairs) || !slices.Equal(classes, tc.classes) || !slices.Equal(missing, tc.missing) {
			t.Errorf("%s: pairs %v classes %q missing %q, want %v %q %q",
				tc.machine, pairs, classes, missing, tc.pairs, tc.classes, tc.missing)
		}
		for i, p := range pairs {
			if got := ClassifyPair(m, p[1], p[0]); got != classes[i] {
				t.Errorf("%s: CPUs %d,%d classed %q one way and %q the other", tc.machine, p[0], p[1], classes[i], got)
			}
		}
	}
}

// TestPingPongHost bounces a line between this machine's first two CPUs:
// every window is a positive round trip, and a pair of one CPU is refused.
func TestPingPongHost(t *testing.T) {
	m := hostTopology(t)
	if len(m.CPUs) < 2 {
		t.Skip("this machine has one usable CPU: no pair to bounce a line between")
	}
	a, b := m.CPUs[0].ID, m.CPUs[1].ID
	st, err := PingPong(context.Background(), a, b, 5, 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CPUs %d,%d (%s): round trip %.1f ns [%.1f-%.1f], %d samples, %d dropped",
		a, b, ClassifyPair(m, a, b), st.Median, st.Min, st.Max, st.Samples, st.Dropped)
	if st.Samples == 0 || !(st.Min > 0 && st.Min <= st.Median && st.Median <= st.Max) {
		t.Errorf("round trip %+v: want positive windows", st)
	}
	if _, err := PingPong(context.Background(), a, a, 5, time.Millisecond); err == nil {
		t.Error("a line bounced between a CPU and itself was measured")
	}
}

// TestC2CVerdict: windows of one pair that spread beyond C2CSpreadBound,
// or in most of which the timing thread was preempted, are judged no
// cache latency and say who moved or shared the CPUs (the hypervisor when
// there is one); windows of one placement keep their figure.
func TestC2CVerdict(t *testing.T) {
	for _, tc := range []struct {
		name             string
		clean, preempted []float64
		hypervisor       string
		want             string // in Unsteady; "" for a steady pair
	}{
		{"one placement", []float64{64.1, 65.0, 66.3, 64.8, 67.0}, nil, "KVM", ""},
		{"one slow placement", []float64{448, 452, 455, 470, 460}, []float64{9000}, "KVM", ""},
		{"at the bound", []float64{100, 150, 150, 151, 160}, nil, "", ""},
		{"moved between placements", []float64{101, 450, 460, 900, 470}, nil, "KVM",
			"the host (KVM) moved or shared the vCPUs: windows 101-900 ns, the median 4.6x the lowest"},
		{"two placements, mostly the slower", []float64{65, 66, 100, 101, 102}, nil, "Xen",
			"the host (Xen) moved or shared the vCPUs"},
		{"bare metal, shared", []float64{70, 300, 400}, nil, "",
			"other work shared the CPUs or the scheduler moved the threads"},
		{"timing thread preempted", []float64{65}, []float64{66, 67, 70, 68}, "KVM",
			"the timing thread was preempted in most windows (65-70 ns)"},
	} {
		st := summarise(tc.clean, tc.preempted, len(tc.clean)+len(tc.preempted), 2)
		p := newC2CPair(PairSameLLC, [2]int{0, 1}, st, 3.0, tc.hypervisor)
		if tc.want == "" && p.Unsteady != "" || tc.want != "" && !strings.Contains(p.Unsteady, tc.want) {
			t.Errorf("%s: spread %.2f, unsteady %q, want %q", tc.name, p.Spread, p.Unsteady, tc.want)
		}
		var b strings.Builder
		writeC2C(&b, &C2C{GHz: 3, Pairs: []C2CPair{p}})
		shown := strings.Contains(b.String(), fmt.Sprintf(" %.1f ", p.BestNS))
		if shown == (tc.want != "") {
			t.Errorf("%s: lowest window %.1f ns shown %v, unsteady %q:\n%s", tc.name, p.BestNS, shown, p.Unsteady, b.String())
		}
	}
}
