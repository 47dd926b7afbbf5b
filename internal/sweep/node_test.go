package sweep

import (
	"testing"

	"github.com/numalab/numalab/internal/topo/topotest"
)

func TestFarNode(t *testing.T) {
	m := topotest.Fixture(t, "64amd64-4s2n4ca2co.tar.bz2")
	for from, want := range map[int]int{0: 3, 1: 2, 2: 1} {
		if got := FarNode(m, from); got != want {
			t.Errorf("FarNode(%d) = %d; want %d", from, got, want)
		}
	}
	one := topotest.Fixture(t, "16em64t-4s2c2t.tar.bz2")
	if got := FarNode(one, 0); got != 0 {
		t.Errorf("one node: FarNode(0) = %d; want 0 itself", got)
	}
}
