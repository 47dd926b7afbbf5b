package topo

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

const fixtures = "../../testdata/topology"

// oracleException is a documented, exact disagreement between a capture
// and hwloc's lstopo, with the reason. Everything not named here must
// agree.
type oracleException struct {
	reason string
	// structureFiltered: lstopo ran with --filter all:structure
	// --no-icaches, which drops every core and cache whose CPU set equals
	// that of its parent or only child; ours must then be a superset whose
	// extra objects are all such duplicates.
	structureFiltered bool
	// Objects numalab finds that lstopo dropped, written as lsObj.String.
	extraPackages []string
	extraCaches   []string
}

var oracleExceptions = map[string]oracleException{
	"16amd64-4n4c-cgroup-distance-merge": {
		reason: "hwloc's test ran lstopo with `--filter all:structure --no-icaches` " +
			"(tests/hwloc/linux/16amd64-4n4c-cgroup-distance-merge.test), so its output has no Core, " +
			"L1 or L2 objects: with the cgroup leaving CPUs 0-3 each of those covers exactly one PU",
		structureFiltered: true,
	},
	"40intel64-4n10c+pci-conflicts": {
		reason: "the capture is deliberately corrupt (hwloc's .test: \"4th socket conflicts, ignored; 3rd L3 " +
			"conflicts, ignored\"): cpu3's core_siblings says 0-3 and cpu2's L3 shared_cpu_map says 0-3. " +
			"hwloc drops package 3 and package 2's L3; numalab groups packages by physical_package_id (which " +
			"is consistent: 10 CPUs in each of 4 packages) and takes the L3 that 9 of its 10 CPUs report",
		extraPackages: []string{"Package P#3 cpus=3,7,11,15,19,23,27,31,35,39"},
		extraCaches:   []string{"L3Cache size=30MiB linesize=64 ways=24 cpus=2,6,10,14,18,22,26,30,34,38"},
	},
}

// captures lists the captured machines in testdata: every .tar.bz2 and
// .tar.gz that has an .lstopo.txt beside it.
func captures(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, pat := range []string{"*.tar.bz2", "*.tar.gz"} {
		ms, err := filepath.Glob(filepath.Join(fixtures, pat))
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, ms...)
	}
	if len(names) == 0 {
		t.Fatalf("no captures in %s", fixtures)
	}
	slices.Sort(names)
	return names
}

func captureName(archive string) string {
	b := filepath.Base(archive)
	return strings.TrimSuffix(strings.TrimSuffix(b, ".tar.bz2"), ".tar.gz")
}

// extracted caches unpacked captures for the whole test binary: several
// tests read the same capture, and unpacking is most of their time.
var (
	extractedMu  sync.Mutex
	extracted    = map[string]string{}
	extractedDir string
)

func TestMain(m *testing.M) {
	dir, err := TempDir("topo-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	extractedDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// memDir is a directory for one test, on a memory filesystem where there
// is one (TempDir): unpacking a capture on this machine's disk takes 50
// times longer.
func memDir(t testing.TB) string {
	t.Helper()
	dir, err := TempDir("topo-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// extract unpacks a capture (once per test binary) and returns its root.
// Tests must not write below it.
func extract(t testing.TB, archive string) string {
	t.Helper()
	extractedMu.Lock()
	defer extractedMu.Unlock()
	if root, ok := extracted[archive]; ok {
		return root
	}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir, err := os.MkdirTemp(extractedDir, "x")
	if err != nil {
		t.Fatal(err)
	}
	root, err := Extract(f, dir)
	if err != nil {
		t.Fatalf("%s: %v", archive, err)
	}
	extracted[archive] = root
	return root
}

// TestFromSysfsMatchesLstopo is the oracle test: for every captured
// machine, what FromSysfs finds must be what hwloc's lstopo printed for the
// same capture.
func TestFromSysfsMatchesLstopo(t *testing.T) {
	for _, archive := range captures(t) {
		name := captureName(archive)
		t.Run(name, func(t *testing.T) {
			oracleFile := filepath.Join(fixtures, name+".lstopo.txt")
			of, err := os.Open(oracleFile)
			if err != nil {
				t.Fatalf("every capture needs its lstopo output: %v", err)
			}
			defer of.Close()
			want, err := parseLstopo(of)
			if err != nil {
				t.Fatalf("parsing %s: %v", oracleFile, err)
			}
			if len(want.pus) == 0 {
				t.Fatalf("%s lists no PU", oracleFile)
			}
			got, err := FromSysfs(extract(t, archive))
			if err != nil {
				t.Fatal(err)
			}
			checkConsistent(t, got)
			compareWithLstopo(t, got, want, oracleExceptions[name])
		})
	}
}

func compareWithLstopo(t *testing.T, got *result.Topology, want *lstopo, ex oracleException) {
	t.Helper()
	if ex.reason != "" {
		t.Logf("known difference from lstopo: %s", ex.reason)
	}
	var ids []int
	for _, c := range got.CPUs {
		ids = append(ids, c.ID)
	}
	if !slices.Equal(ids, want.pus) {
		t.Errorf("logical CPUs: got %s, lstopo %s", sysfs.FormatCPUList(ids), sysfs.FormatCPUList(want.pus))
	}
	if !slices.Equal(got.Offline, want.offline) {
		t.Errorf("offline or disallowed CPUs: got %s, lstopo %s",
			sysfs.FormatCPUList(got.Offline), sysfs.FormatCPUList(want.offline))
	}

	// Packages: P# and PUs.
	var gotPkgs, wantPkgs []string
	for _, p := range got.Packages {
		gotPkgs = append(gotPkgs, lsObj{typ: "Package", pnum: p.ID, cpus: p.CPUs}.String())
	}
	for _, p := range want.packages {
		wantPkgs = append(wantPkgs, lsObj{typ: "Package", pnum: p.pnum, cpus: p.cpus}.String())
	}
	wantPkgs = append(wantPkgs, ex.extraPackages...)
	sameSet(t, "packages", gotPkgs, wantPkgs)

	// NUMA nodes: P#, PUs and memory size as lstopo rounds it.
	printed := func(objs []lsObj, attr string) string { // a sample of how lstopo printed sizes
		for _, o := range objs {
			if v, ok := o.attrs[attr]; ok {
				return v
			}
		}
		return ""
	}
	var gotNodes, wantNodes []string
	for _, n := range got.Nodes {
		o := lsObj{typ: "NUMANode", pnum: n.ID, cpus: n.CPUs, attrs: map[string]string{}}
		o.attrs["local"] = hwlocSizeLike(n.MemBytes, printed(want.nodes, "local"))
		gotNodes = append(gotNodes, o.String())
	}
	for _, n := range want.nodes {
		o := lsObj{typ: "NUMANode", pnum: n.pnum, cpus: n.cpus, attrs: map[string]string{}}
		if v, ok := n.attrs["local"]; ok {
			o.attrs["local"] = v
		} else {
			o.attrs["local"] = hwlocSize(0)
		}
		wantNodes = append(wantNodes, o.String())
	}
	sameSet(t, "NUMA nodes", gotNodes, wantNodes)

	// Distances, by node P# (lstopo prints them by logical index).
	if want.distances != nil {
		if len(got.Distances) != len(want.nodes) {
			t.Errorf("distances: got %v, lstopo %v", got.Distances, want.distances)
		} else {
			for li, a := range want.nodes {
				for lj, b := range want.nodes {
					gi, gj := got.NodeIndex(a.pnum), got.NodeIndex(b.pnum)
					if gi < 0 || gj < 0 || got.Distances[gi][gj] != want.distances[li][lj] {
						t.Errorf("distance node %d to node %d: got %v, lstopo %d", a.pnum, b.pnum, got.Distances, want.distances[li][lj])
					}
				}
			}
		}
	}

	// Cores: P# (core_id) and the PUs sharing each.
	var gotCores, wantCores []string
	for _, c := range got.Cores {
		gotCores = append(gotCores, lsObj{typ: "Core", pnum: c.ID, cpus: c.CPUs}.String())
	}
	for _, c := range want.cores {
		wantCores = append(wantCores, lsObj{typ: "Core", pnum: c.pnum, cpus: c.cpus}.String())
	}

	// Caches: level, type, size, line size, ways and the PUs sharing each.
	var gotCaches, wantCaches []string
	for _, c := range got.Caches {
		gotCaches = append(gotCaches, cacheString(c, printed(want.caches, "size")))
	}
	for _, c := range want.caches {
		o := lsObj{typ: c.typ, pnum: -1, cpus: c.cpus, attrs: map[string]string{}}
		for _, k := range []string{"size", "linesize", "ways"} {
			if v, ok := c.attrs[k]; ok {
				o.attrs[k] = v
			}
		}
		wantCaches = append(wantCaches, o.String())
	}
	wantCaches = append(wantCaches, ex.extraCaches...)

	if !ex.structureFiltered {
		sameSet(t, "cores", gotCores, wantCores)
		sameSet(t, "caches", gotCaches, wantCaches)
		return
	}
	// Structure-filtered oracle: all it shows must be ours; what it hid
	// must duplicate the CPU set of a PU or of an object it shows.
	shown := map[string]bool{}
	for _, p := range want.pus {
		shown[fmt.Sprint(p)] = true
	}
	for _, o := range slices.Concat(want.packages, want.caches, want.cores) {
		shown[sysfs.FormatCPUList(o.cpus)] = true
	}
	hidden := func(what string, gotS, wantS []string, sets [][]int) {
		for _, w := range wantS {
			if !slices.Contains(gotS, w) {
				t.Errorf("%s: lstopo shows %s, numalab has no such object", what, w)
			}
		}
		for i, g := range gotS {
			if !slices.Contains(wantS, g) && !shown[sysfs.FormatCPUList(sets[i])] {
				t.Errorf("%s: numalab has %s, which lstopo's structure filter would not have hidden", what, g)
			}
		}
	}
	var coreSets, cacheSets [][]int
	for _, c := range got.Cores {
		coreSets = append(coreSets, c.CPUs)
	}
	for _, c := range got.Caches {
		cacheSets = append(cacheSets, c.CPUs)
	}
	hidden("cores", gotCores, wantCores, coreSets)
	hidden("caches", gotCaches, wantCaches, cacheSets)
}

func cacheString(c result.Cache, printedSize string) string {
	typ := fmt.Sprintf("L%d", c.Level) + map[string]string{"Data": "d", "Instruction": "i"}[c.Type] + "Cache"
	o := lsObj{typ: typ, pnum: -1, cpus: c.CPUs, attrs: map[string]string{"size": hwlocSizeLike(c.SizeBytes, printedSize)}}
	if c.LineBytes > 0 {
		o.attrs["linesize"] = fmt.Sprint(c.LineBytes)
	}
	if c.Ways > 0 {
		o.attrs["ways"] = fmt.Sprint(c.Ways)
	}
	return o.String()
}

// sameSet compares two lists as multisets and reports what each lacks.
func sameSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	if slices.Equal(g, w) {
		return
	}
	var missing, extra []string
	for _, x := range w {
		if i := slices.Index(g, x); i >= 0 {
			g = slices.Delete(g, i, i+1)
		} else {
			missing = append(missing, x)
		}
	}
	extra = g
	t.Errorf(
		"%s differ from lstopo (%d vs %d):\n  lstopo has, numalab lacks:\n    %s\n  numalab has, lstopo lacks:\n    %s",
		what, len(got), len(want), strings.Join(missing, "\n    "), strings.Join(extra, "\n    "))
}
