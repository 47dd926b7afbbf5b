package engine

import (
	"strings"
	"testing"
)

// TestPoolOnNode: a DuckDB pool is refused only when neither the new memory
// on the data node covers it nor the other nodes stayed quiet. The figures
// are measured ones: CI's two-node guest (18.4 MB pool, 18.7 MB new on
// node 0, 2.7 MB on node 1), a quiet guest run, and tpch's pool on one
// node under a CPU hog (1 MB of 4.7 MB new).
func TestPoolOnNode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pool   int64
		gained map[int]int64
		ok     bool
	}{
		{"covered, busy elsewhere", 18350080, map[int]int64{0: 18665472, 1: 2744320}, true},
		{"covered, quiet", 18350080, map[int]int64{0: 20992000, 1: 241664}, true},
		{"reused, one node", 4_700_000, map[int]int64{0: 1_000_000}, true},
		{"reused, quiet elsewhere", 18350080, map[int]int64{0: 9_000_000, 1: 1_100_000}, true},
		{"half elsewhere", 18350080, map[int]int64{0: 9_175_040, 1: 9_175_040}, false},
		{"all elsewhere", 18350080, map[int]int64{1: 18350080}, false},
	} {
		err := PoolOnNode(0, tc.pool, tc.gained)
		if (err == nil) != tc.ok {
			t.Errorf("%s: PoolOnNode(0, %d, %v) = %v, want ok %v", tc.name, tc.pool, tc.gained, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "on node 0") {
			t.Errorf("%s: %v does not name the node", tc.name, err)
		}
	}
}

// TestPlacedTextSaysReused: a pool larger than the new memory on its node
// is said to be partly reused memory of no known node; a covered one is not.
func TestPlacedTextSaysReused(t *testing.T) {
	short := PlacedText(PlacedData{Node: 0, BufferBytes: 4_700_000, GainedBytes: map[int]int64{0: 1_000_000}})
	if !strings.Contains(short, "3700000 bytes of the pool did not show as new memory on node 0") {
		t.Errorf("short pool: %q does not say how much was reused", short)
	}
	covered := PlacedText(PlacedData{Node: 0, BufferBytes: 18350080, GainedBytes: map[int]int64{0: 18665472, 1: 2744320}})
	if strings.Contains(covered, "did not show") {
		t.Errorf("covered pool: %q says some was reused", covered)
	}
}
