package sweep

import (
	"slices"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/topo/topotest"
)

type cellKey struct {
	index, streams, repeat, dop int
	placement, typ              string
}

func keys(cells []Cell) []cellKey {
	var out []cellKey
	for _, c := range cells {
		out = append(out, cellKey{c.Index, c.Streams, c.Repeat, c.DOP, c.Placement, c.Type})
	}
	return out
}

func TestResolveOrder(t *testing.T) {
	m := topotest.Fixture(t, "16em64t-4s2c2t.tar.bz2") // 4 sockets x 2 cores x 2 threads
	cells, _, err := Resolve(m,
		Spec{Streams: []int{1, 2}, Placements: []string{"smt=on", "smt=off"}, Repeat: 2, DataNode: -1}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []cellKey{
		{0, 1, 0, 1, "smt=on", ""}, {1, 2, 0, 1, "smt=on", ""}, {2, 1, 0, 1, "smt=off", ""}, {3, 2, 0, 1, "smt=off", ""},
		{4, 1, 1, 1, "smt=on", ""}, {5, 2, 1, 1, "smt=on", ""}, {6, 1, 1, 1, "smt=off", ""}, {7, 2, 1, 1, "smt=off", ""},
	}
	if got := keys(cells); !equal(got, want) {
		t.Errorf("cells = %v\nwant %v", got, want)
	}
	cells, _, err = Resolve(m, Spec{Streams: []int{1}, DOPs: []int{1, 2}, Types: []string{"P1", "P2"}, Repeat: 1,
		DataNode: -1, Unpinned: true}, false)
	if err != nil {
		t.Fatal(err)
	}
	want = []cellKey{{0, 1, 0, 1, "", "P1"}, {1, 1, 0, 2, "", "P1"}, {2, 1, 0, 1, "", "P2"}, {3, 1, 0, 2, "", "P2"}}
	if got := keys(cells); !equal(got, want) {
		t.Errorf("types x DOP cells = %v\nwant %v", got, want)
	}
	if cells[0].Place.CPUs != nil || cells[0].Cores != 0 {
		t.Errorf("unpinned cell has CPUs %v, %d cores; want none", cells[0].Place.CPUs, cells[0].Cores)
	}
}

func equal(a, b []cellKey) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestResolveBadInput(t *testing.T) {
	m := topotest.Fixture(t, "16em64t-4s2c2t.tar.bz2")
	for _, c := range []struct {
		spec Spec
		msg  string
	}{
		{Spec{Repeat: 1, DataNode: -1}, "no stream counts"},
		{Spec{Streams: []int{0}, Repeat: 1, DataNode: -1}, "not a positive count"},
		{Spec{Streams: []int{1}, Repeat: 0, DataNode: -1}, "repeats"},
		{Spec{Streams: []int{1}, Repeat: 1, DataNode: 5}, "is not a NUMA node"},
		{Spec{Streams: []int{1}, Repeat: 1, DataNode: -1, Placements: []string{"node=3"}}, "-placement"},
		{Spec{Streams: []int{64}, Repeat: 1, DataNode: -1, StreamsPerCPU: 2}, "exceeds 2 per logical CPU"},
		{Spec{Streams: []int{1}, Repeat: 1, DataNode: -5}, `-data-node: "-5" is not a NUMA node`},
		{Spec{Streams: []int{1}, Repeat: 1, DataNode: -1, Placements: []string{"", "", ""}},
			`-placement: ";;" names the empty selector (all CPUs) more than once`},
		{Spec{Streams: []int{1}, Repeat: 1, DataNode: -1, Placements: []string{"smt=on", "node=0", "smt=on"}},
			`names "smt=on" more than once`},
	} {
		if _, _, err := Resolve(m, c.spec, true); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Resolve(%+v) = %v; want an error with %q", c.spec, err, c.msg)
		}
	}
}

// TestCoresUsed: tps per core divides by the cores the streams ran on.
// On 4 sockets x 2 cores x 2 threads, CPUs 0 and 8 are siblings.
func TestCoresUsed(t *testing.T) {
	m := topotest.Fixture(t, "16em64t-4s2c2t.tar.bz2")
	all := []int{}
	for _, c := range m.CPUs {
		all = append(all, c.ID)
	}
	c0 := m.CPUs[0]
	sib := -1
	for _, id := range m.Cores[c0.Core].CPUs {
		if id != c0.ID {
			sib = id
		}
	}
	if sib < 0 {
		t.Fatal("fixture has no SMT sibling of the first CPU")
	}
	for _, c := range []struct {
		cpus    []int
		spread  bool
		streams int
		want    int
	}{
		{all, true, 1, 1},               // one stream on one CPU of a 16-CPU placement: one core, not 8
		{all, false, 1, 1},              // not spread, but one stream runs on one core at a time
		{all, false, 32, 8},             // every core of the placement
		{[]int{c0.ID, sib}, true, 2, 1}, // two siblings: one physical core
		{[]int{c0.ID, sib}, true, 8, 1}, // more streams than CPUs wrap onto them
		{nil, true, 4, 0},               // not pinned: unknown
	} {
		if got := m.CoresUsed(c.cpus, c.spread, c.streams); got != c.want {
			t.Errorf("m.CoresUsed(%v, spread %v, %d streams) = %d; want %d", c.cpus, c.spread, c.streams, got, c.want)
		}
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 streams", 1: "1 stream", 2: "2 streams"} {
		if got := Count(n, "stream"); got != want {
			t.Errorf("Count(%d) = %q; want %q", n, got, want)
		}
	}
	c := Cell{Cores: 1, Place: place.Placement{CPUs: []int{3}, Cores: 1, DataNode: -1}, DataNode: -1}
	c.Streams = 1
	if got := c.String(); got != "1 stream on cpus 3 (1 core)" {
		t.Errorf("Cell.String() = %q; want singular nouns", got)
	}
}

// TestCellCores: a cell names the cores its CPUs are, and at DOP > 1 it
// counts the cores its parallel workers run on, on this kind of VM (two
// vCPUs, two cores) and on a machine with SMT. Before, one stream at DOP 2
// on two cores printed "(1 core)" and divided tps by 1.
func TestCellCores(t *testing.T) {
	for _, c := range []struct {
		fixture, sel string
		dop          int
		text         string
		cores        int
	}{
		{"kvm-2vcpu-zen.tar.gz", "cpus=0-1", 1, "1 stream on cpus 0-1 (2 cores)", 1},
		{"kvm-2vcpu-zen.tar.gz", "cpus=0-1", 2, "1 stream, DOP 2 on cpus 0-1 (2 cores)", 2},
		{"16em64t-4s2c2t.tar.bz2", "smt=off,cores=2", 2, "1 stream, DOP 2 on cpus 0,4 (2 cores)", 2},
		{"16em64t-4s2c2t.tar.bz2", "cores=2", 4, "1 stream, DOP 4 on cpus 0,4,8,12 (2 cores)", 2},
		{"16em64t-4s2c2t.tar.bz2", "cores=2", 2, "1 stream, DOP 2 on cpus 0,4,8,12 (2 cores)", 2}, // cores first
		{"16em64t-4s2c2t.tar.bz2", "cores=1", 2, "1 stream, DOP 2 on cpus 0,8 (1 core)", 1},       // two siblings
	} {
		m := topotest.Fixture(t, c.fixture)
		cells, _, err := Resolve(m,
			Spec{Streams: []int{1}, DOPs: []int{c.dop}, Placements: []string{c.sel}, Repeat: 1, DataNode: -1}, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := cells[0].String(); got != c.text || cells[0].Cores != c.cores {
			t.Errorf("%s, %s, DOP %d: %q, %d cores; want %q, %d", c.fixture, c.sel, c.dop, got, cells[0].Cores, c.text, c.cores)
		}
	}
}

func TestTooManyStreams(t *testing.T) {
	if why := TooManyStreams([]int{1, 128}, 2); why != "" {
		t.Errorf("128 streams on 2 CPUs: %q; want accepted", why)
	}
	if why := TooManyStreams([]int{1, 129}, 2); !strings.Contains(why, "more than 128 streams") {
		t.Errorf("129 streams on 2 CPUs: %q; want refused", why)
	}
}

// TestResolveNeighbourPairs: each repeat ends with a pair, one stream on
// the first placement's first CPU with a bandwidth neighbour and with a
// control neighbour on every other CPU, the bandwidth neighbour first in
// even repeats and the control first in odd ones; indices run on.
func TestResolveNeighbourPairs(t *testing.T) {
	m := topotest.Fixture(t, "16em64t-4s2c2t.tar.bz2")
	cells, _, err := Resolve(m,
		Spec{Streams: []int{1, 2}, Placements: []string{"smt=off"}, Repeat: 3, DataNode: -1, Neighbour: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 3*4 {
		t.Fatalf("%d cells, want 2 plain cells and a pair in each of 3 repeats", len(cells))
	}
	first := cells[0].Place.Streams[0]
	for r := range 3 {
		rep := cells[4*r : 4*r+4]
		for i, c := range rep {
			if c.Index != 4*r+i || c.Repeat != r {
				t.Errorf("repeat %d cell %d: index %d, repeat %d", r, i, c.Index, c.Repeat)
			}
		}
		a, b := rep[2], rep[3]
		if want := r%2 == 1; a.Control != want || b.Control == want {
			t.Errorf("repeat %d: control first %v, second %v; want the control first in odd repeats only",
				r, a.Control, b.Control)
		}
		for _, c := range []Cell{a, b} {
			if c.Streams != 1 || c.Place.Streams[0] != first || len(c.Neighbour) != len(m.CPUs)-1 ||
				slices.Contains(c.Neighbour, first) || c.Cores != 1 {
				t.Errorf("repeat %d neighbour cell %+v: want 1 stream on cpu %d (1 core), the neighbour on the other %d CPUs",
					r, c, first, len(m.CPUs)-1)
			}
		}
		if !slices.Equal(a.Neighbour, b.Neighbour) {
			t.Errorf("repeat %d: neighbour on %v, control on %v", r, a.Neighbour, b.Neighbour)
		}
		if s := rep[3].String(); !strings.Contains(s, "neighbour on cpus") {
			t.Errorf("cell string %q names no neighbour", s)
		}
	}
	if s := cells[3].String(); !strings.Contains(s, "a control neighbour on cpus") {
		t.Errorf("repeat 0's control cell is %q", s)
	}
	// NeighbourPairs 2 keeps the pairs to the first two repeats.
	cells, _, err = Resolve(m, Spec{Streams: []int{1, 2}, Placements: []string{"smt=off"}, Repeat: 3, DataNode: -1,
		Neighbour: true, NeighbourPairs: 2}, true)
	if err != nil {
		t.Fatal(err)
	}
	var pairs []int
	for _, c := range cells {
		if len(c.Neighbour) > 0 {
			pairs = append(pairs, c.Repeat)
		}
	}
	if !slices.Equal(pairs, []int{0, 0, 1, 1}) || len(cells) != 10 {
		t.Errorf(
			"NeighbourPairs 2: neighbour cells in repeats %v of %d cells; want two in each of repeats 0 and 1, 10 cells",
			pairs, len(cells))
	}
}
