package topo

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

// cacheClaim is one CPU's view of one of its caches.
type cacheClaim struct {
	level     int
	typ       string
	size      int64
	line      int
	ways      int
	cpus      []int // usable CPUs sharing it, as this CPU reports them
	claimedBy []int
}

// buildCaches reads every usable CPU's cache/indexN directories and turns
// the per-CPU views into cache instances. Each CPU reports which CPUs share
// each of its caches; an instance is accepted when more than half of the
// CPUs it names report that same set. This keeps a single corrupt
// shared_cpu_map (seen in real captures) from inventing an overlapping
// cache; the CPUs it named still get the instance their neighbours agree on.
func buildCaches(f sysfs.FS, t *result.Topology, cpus map[int]*sysCPU, usable []int) {
	claims := make(map[string]*cacheClaim)
	var order []string
	for _, id := range usable {
		c := cpus[id]
		if c.dir == "" {
			continue
		}
		idx, _ := f.Numbered(c.dir+"/cache", "index")
		for _, i := range idx {
			d := fmt.Sprintf("%s/cache/index%d/", c.dir, i)
			level, err := f.Int(d + "level")
			if err != nil {
				continue
			}
			typ, _ := f.String(d + "type")
			switch typ {
			case "Data", "Instruction", "Unified":
			default:
				continue
			}
			shared, err := f.CPUs(d+"shared_cpu_map", d+"shared_cpu_list")
			if err != nil || len(shared) == 0 {
				shared = []int{id}
			}
			shared = intersect(shared, usable)
			if !contains(shared, id) {
				continue // a view that leaves out its own CPU says nothing
			}
			var size int64
			if b, err := f.Bytes(d + "size"); err == nil {
				size, _ = sysfs.ParseSize(b)
			}
			line, _ := f.Int(d + "coherency_line_size")
			ways, _ := f.Int(d + "ways_of_associativity")
			k := fmt.Sprintf("%d/%s/%s", level, typ, sysfs.FormatCPUList(shared))
			cl, ok := claims[k]
			if !ok {
				cl = &cacheClaim{level: level, typ: typ, size: size, line: line, ways: ways, cpus: shared}
				claims[k] = cl
				order = append(order, k)
			}
			cl.claimedBy = append(cl.claimedBy, id)
		}
	}
	// Accept majority-backed instances, best-backed first, refusing any
	// that overlaps an accepted one of the same level and type.
	slices.SortStableFunc(order, func(a, b string) int {
		return cmp.Compare(len(claims[b].claimedBy), len(claims[a].claimedBy))
	})
	taken := make(map[string][]int) // level/type -> CPUs already in an instance
	for _, k := range order {
		cl := claims[k]
		if 2*len(cl.claimedBy) <= len(cl.cpus) {
			continue
		}
		lt := fmt.Sprintf("%d/%s", cl.level, cl.typ)
		if len(intersect(taken[lt], cl.cpus)) > 0 {
			continue
		}
		taken[lt] = append(taken[lt], cl.cpus...)
		slices.Sort(taken[lt])
		t.Caches = append(t.Caches, result.Cache{
			Level: cl.level, Type: cl.typ, SizeBytes: cl.size,
			LineBytes: max(cl.line, 0), Ways: max(cl.ways, 0), CPUs: cl.cpus,
		})
	}
	sortCaches(t.Caches)
}

var typeOrder = map[string]int{"Data": 0, "Instruction": 1, "Unified": 2}

func sortCaches(cs []result.Cache) {
	slices.SortFunc(cs, func(a, b result.Cache) int {
		return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(typeOrder[a.Type], typeOrder[b.Type]),
			cmp.Compare(first(a.CPUs), first(b.CPUs)))
	})
}

// readFrequencies fills each usable CPU's current and maximum frequency and
// governor from cpufreq, where the kernel exposes it (guests often do not).
func readFrequencies(f sysfs.FS, t *result.Topology, cpus map[int]*sysCPU) {
	for i := range t.CPUs {
		c := cpus[t.CPUs[i].ID]
		if c.dir == "" {
			continue
		}
		d := c.dir + "/cpufreq/"
		if !f.Exists(d) {
			d = fmt.Sprintf("sys/devices/system/cpu/cpufreq/policy%d/", c.id)
		}
		if khz, err := f.Int(d + "scaling_cur_freq"); err == nil && khz > 0 {
			t.CPUs[i].CurMHz = float64(khz) / 1000
		}
		if khz, err := f.Int(d + "cpuinfo_max_freq"); err == nil && khz > 0 {
			t.CPUs[i].MaxMHz = float64(khz) / 1000
		}
		t.CPUs[i].Governor, _ = f.String(d + "scaling_governor")
	}
}

// contains reports whether sorted s holds v.
func contains(s []int, v int) bool {
	_, ok := slices.BinarySearch(s, v)
	return ok
}

// intersect returns the elements of sorted a that are in sorted b.
func intersect(a, b []int) []int {
	out := []int{}
	for _, v := range a {
		if contains(b, v) {
			out = append(out, v)
		}
	}
	return out
}

func first(s []int) int {
	if len(s) == 0 {
		return -1
	}
	return s[0]
}

func atois(ws []string) []int {
	out := make([]int, 0, len(ws))
	for _, w := range ws {
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil {
			return nil
		}
		out = append(out, n)
	}
	return out
}
