package place

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/topo/topotest"
)

// captured reads a captured machine from the repository's topology
// fixtures.
func captured(t *testing.T, name string) *result.Topology {
	t.Helper()
	if _, err := os.Stat(filepath.Join("../../testdata/topology", name+".tar.bz2")); err == nil {
		return topotest.Fixture(t, name+".tar.bz2")
	}
	return topotest.Fixture(t, name+".tar.gz")
}

// renumbered is t with every logical CPU renamed by perm, the way another
// BIOS or kernel would number the same machine.
func renumbered(t *result.Topology, perm map[int]int) *result.Topology {
	r := *t
	mapAll := func(ids []int) []int {
		out := make([]int, len(ids))
		for i, id := range ids {
			out[i] = perm[id]
		}
		slices.Sort(out)
		return out
	}
	r.CPUs = slices.Clone(t.CPUs)
	for i := range r.CPUs {
		r.CPUs[i].ID = perm[r.CPUs[i].ID]
	}
	slices.SortFunc(r.CPUs, func(a, b result.CPU) int { return a.ID - b.ID })
	r.Cores = slices.Clone(t.Cores)
	for i := range r.Cores {
		r.Cores[i].CPUs = mapAll(r.Cores[i].CPUs)
	}
	r.Nodes = slices.Clone(t.Nodes)
	for i := range r.Nodes {
		r.Nodes[i].CPUs = mapAll(r.Nodes[i].CPUs)
	}
	r.Packages = slices.Clone(t.Packages)
	for i := range r.Packages {
		r.Packages[i].CPUs = mapAll(r.Packages[i].CPUs)
	}
	r.Offline = mapAll(t.Offline)
	return &r
}

// siblingsApart renumbers t so that the k-th sibling of every core is
// numbered after all (k-1)-th siblings (Intel's 0,N), and siblingsTogether
// so that a core's siblings are consecutive (AMD's 0,1). Offline CPUs keep
// numbers above every usable one.
func siblingsApart(t *result.Topology) map[int]int {
	perm := map[int]int{}
	next := 0
	for round := 0; ; round++ {
		added := false
		for _, c := range t.Cores {
			if round < len(c.CPUs) {
				perm[c.CPUs[round]] = next
				next++
				added = true
			}
		}
		if !added {
			break
		}
	}
	return withOffline(t, perm, next)
}

func siblingsTogether(t *result.Topology) map[int]int {
	perm := map[int]int{}
	next := 0
	for _, c := range t.Cores {
		for _, id := range c.CPUs {
			perm[id] = next
			next++
		}
	}
	return withOffline(t, perm, next)
}

func withOffline(t *result.Topology, perm map[int]int, next int) map[int]int {
	for _, id := range t.Offline {
		if _, ok := perm[id]; !ok {
			perm[id] = next
			next++
		}
	}
	return perm
}

// coreKey names a physical core whatever the CPU numbering.
type coreKey struct{ pkg, die, id int }

// coreSeq is the physical core of each stream CPU.
func coreSeq(t *testing.T, tp *result.Topology, cpus []int) []coreKey {
	t.Helper()
	var out []coreKey
	for _, id := range cpus {
		c, ok := tp.CPU(id)
		if !ok {
			t.Fatalf("stream CPU %d is not a usable CPU", id)
		}
		k := tp.Cores[c.Core]
		out = append(out, coreKey{k.Package, k.Die, k.ID})
	}
	return out
}

// TestStreamsIndependentOfNumbering: on the SMT, hybrid and offline-CPU
// captures, and on each renumbered so that siblings are 0,N or 0,1, the
// streams of a selector fill every physical core once before any core's
// second thread, and stream i lands on the same physical core whatever the
// numbering.
func TestStreamsIndependentOfNumbering(t *testing.T) {
	for _, name := range []string{"16em64t-4s2c2t", "20em64t-hybrid-1p6c2t+2ca4co1t", "offline-cpu0-node0"} {
		t.Run(name, func(t *testing.T) {
			orig := captured(t, name)
			for _, sel := range []string{"", "smt=on", "smt=off", "cores=2"} {
				base, err := Resolve(orig, sel)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(sortedCopy(base.Streams), sortedCopy(base.CPUs)) {
					t.Errorf("%q: streams %v are not the placement's CPUs %v", sel, base.Streams, base.CPUs)
				}
				seq := coreSeq(t, orig, base.Streams)
				seen := map[coreKey]bool{}
				for i, c := range seq {
					if i < base.Cores && seen[c] {
						t.Errorf("%q: stream %d (CPU %d) shares a core before all %d cores have a stream: %v",
							sel, i, base.Streams[i], base.Cores, base.Streams)
					}
					seen[c] = true
				}
				for _, how := range []struct {
					name string
					perm map[int]int
				}{{"siblings 0,N", siblingsApart(orig)}, {"siblings 0,1", siblingsTogether(orig)}} {
					tp := renumbered(orig, how.perm)
					p, err := Resolve(tp, sel)
					if err != nil {
						t.Fatalf("%s, %q: %v", how.name, sel, err)
					}
					if got := coreSeq(t, tp, p.Streams); !slices.Equal(got, seq) {
						t.Errorf("%s, %q: streams on cores %v, want %v as numbered by the capture", how.name, sel, got, seq)
					}
				}
			}
		})
	}
}

// sortedCopy is ids sorted, for comparing orders as sets.
func sortedCopy(ids []int) []int {
	s := slices.Clone(ids)
	slices.Sort(s)
	return s
}
