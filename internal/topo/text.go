package topo

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
	"github.com/numalab/numalab/internal/units"
)

// WriteText prints the human view: a header, the map (packages, dies,
// nodes and shared caches nesting the cores below them), the NUMA table
// with distances, and offline CPUs.
func WriteText(w io.Writer, t *result.Topology) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("host", orDash(t.Host))
	row("cpu", orDash(t.CPUModel))
	row("shape", Shape(t))
	row("kernel", orDash(t.Kernel))
	hv := t.Hypervisor
	switch hv {
	case "":
		hv = "none detected"
	case "yes":
		hv = "yes (CPU flag; vendor unknown)"
	}
	row("hypervisor", hv)
	row("smt", orDash(t.SMT))
	row("thp", orDash(t.THP))
	if strings.HasPrefix(t.Source, "hwloc:") {
		row("frequency", "-")
	} else {
		row("frequency", frequency(t))
	}
	if len(t.Offline) > 0 {
		row("offline", sysfs.FormatCPUList(t.Offline)+" (offline, or outside this process's cpuset)")
	}
	row("source", t.Source)
	tw.Flush()

	fmt.Fprintln(w)
	writeMap(w, t)

	fmt.Fprintln(w)
	writeNodes(w, t)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Shape is the machine in one line: "2 packages, 2 nodes, 16 cores, 32
// logical CPUs (2 per core)".
func Shape(t *result.Topology) string {
	lo, hi := 0, 0
	for i, c := range t.Cores {
		if i == 0 || len(c.CPUs) < lo {
			lo = len(c.CPUs)
		}
		hi = max(hi, len(c.CPUs))
	}
	per := fmt.Sprint(hi)
	if lo != hi {
		per = fmt.Sprintf("%d-%d", lo, hi)
	}
	return fmt.Sprintf("%s, %s, %s, %s (%s per core)",
		plural(len(t.Packages), "package", "packages"), plural(len(t.Nodes), "node", "nodes"),
		plural(len(t.Cores), "core", "cores"), plural(len(t.CPUs), "logical CPU", "logical CPUs"), per)
}

func frequency(t *result.Topology) string {
	var cur, mx []float64
	var govs []string
	for _, c := range t.CPUs {
		if c.CurMHz > 0 {
			cur = append(cur, c.CurMHz)
		}
		if c.MaxMHz > 0 {
			mx = append(mx, c.MaxMHz)
		}
		if c.Governor != "" && !slices.Contains(govs, c.Governor) {
			govs = append(govs, c.Governor)
		}
	}
	if len(cur)+len(mx)+len(govs) == 0 {
		return "not exposed (no cpufreq; usual in guests)"
	}
	var parts []string
	span := func(v []float64) string {
		a, b := slices.Min(v), slices.Max(v)
		if a == b {
			return fmt.Sprintf("%.0f MHz", a)
		}
		return fmt.Sprintf("%.0f-%.0f MHz", a, b)
	}
	if len(cur) > 0 {
		parts = append(parts, span(cur)+" now")
	}
	if len(mx) > 0 {
		parts = append(parts, "max "+span(mx))
	}
	if len(govs) > 0 {
		slices.Sort(govs)
		parts = append(parts, "governor "+strings.Join(govs, "/"))
	}
	return strings.Join(parts, ", ")
}

func cacheName(c result.Cache) string {
	return fmt.Sprintf("L%d%s", c.Level, map[string]string{"Data": "d", "Instruction": "i"}[c.Type])
}

// mapObj is one box of the map: a package, die, node or shared cache,
// holding smaller boxes and cores.
type mapObj struct {
	label string
	rank  int // order among boxes with the same CPUs: package, die, node, caches from the outermost
	cpus  []int
	kids  []*mapObj
	cores []result.Core
}

func containsAll(outer, inner []int) bool {
	for _, c := range inner {
		if _, ok := slices.BinarySearch(outer, c); !ok {
			return false
		}
	}
	return true
}

// writeMap prints the boxes nested by CPU containment, as lstopo nests
// them, with each box's cores on wrapped lines. Caches private to one core
// are not boxes: they are summarized on the cores' line ("each: L2 1 MiB").
func writeMap(w io.Writer, t *result.Topology) {
	var objs []*mapObj
	models := map[string]bool{}
	for _, p := range t.Packages {
		models[p.Model] = true
	}
	for _, p := range t.Packages {
		if len(p.CPUs) == 0 {
			continue
		}
		label := fmt.Sprintf("package %d", p.ID)
		if len(models) > 1 && p.Model != "" {
			label += "  " + p.Model
		}
		objs = append(objs, &mapObj{label: label, rank: 0, cpus: p.CPUs})
	}
	dies := map[[2]int][]int{}
	for _, c := range t.CPUs {
		k := [2]int{c.Package, c.Die}
		dies[k] = append(dies[k], c.ID)
	}
	perPkg := map[int]int{}
	for k := range dies {
		perPkg[k[0]]++
	}
	for _, k := range slices.SortedFunc(maps.Keys(dies), cmpPair) {
		if perPkg[k[0]] > 1 {
			objs = append(objs, &mapObj{label: fmt.Sprintf("die %d", k[1]), rank: 1, cpus: dies[k]})
		}
	}
	// Nodes with the same CPUs (DRAM and HBM behind the same cores) share
	// one box.
	var nodeBoxes []*mapObj
	for _, n := range t.Nodes {
		if len(n.CPUs) == 0 {
			continue
		}
		desc := fmt.Sprintf("%d  %s", n.ID, units.Bytes(n.MemBytes).String())
		if i := slices.IndexFunc(nodeBoxes, func(o *mapObj) bool { return slices.Equal(o.cpus, n.CPUs) }); i >= 0 {
			nodeBoxes[i].label = strings.Replace(nodeBoxes[i].label, "node ", "nodes ", 1) + ", " + desc
			continue
		}
		nodeBoxes = append(nodeBoxes, &mapObj{label: "node " + desc, rank: 2, cpus: n.CPUs})
	}
	objs = append(objs, nodeBoxes...)
	maxLevel := 0
	for _, c := range t.Caches {
		maxLevel = max(maxLevel, c.Level)
	}
	private := map[int][]result.Cache{} // core index -> caches within it
	for _, c := range t.Caches {
		if i, ok := coreHolding(t, c.CPUs); ok {
			private[i] = append(private[i], c)
			continue
		}
		objs = append(objs,
			&mapObj{label: cacheName(c) + " " + units.Bytes(c.SizeBytes).String(), rank: 3 + maxLevel - c.Level, cpus: c.CPUs})
	}
	slices.SortStableFunc(objs, func(a, b *mapObj) int {
		if len(a.cpus) != len(b.cpus) {
			return len(b.cpus) - len(a.cpus)
		}
		return a.rank - b.rank
	})
	root := &mapObj{cpus: nil}
	var placed []*mapObj
	parentOf := func(cpus []int) *mapObj {
		for i := len(placed) - 1; i >= 0; i-- {
			if containsAll(placed[i].cpus, cpus) {
				return placed[i]
			}
		}
		return root
	}
	for _, o := range objs {
		p := parentOf(o.cpus)
		p.kids = append(p.kids, o)
		placed = append(placed, o)
	}
	for _, c := range t.Cores {
		p := parentOf(c.CPUs)
		p.cores = append(p.cores, c)
	}
	signature := func(c result.Core) string {
		var parts []string
		idx := slices.IndexFunc(t.Cores, func(x result.Core) bool { return slices.Equal(x.CPUs, c.CPUs) })
		cs := slices.Clone(private[idx])
		slices.SortStableFunc(cs, func(a, b result.Cache) int { return b.Level - a.Level })
		for _, pc := range cs {
			s := cacheName(pc) + " " + units.Bytes(pc.SizeBytes).String()
			if len(pc.CPUs) < len(c.CPUs) {
				s += " per CPU"
			}
			if !slices.Contains(parts, s) {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ", ")
	}
	const width = 100
	var lines [][2]string // indented label, cpus
	var walk func(o *mapObj, depth int)
	walk = func(o *mapObj, depth int) {
		ind := strings.Repeat("  ", depth)
		type item struct {
			first int
			obj   *mapObj
			core  *result.Core
		}
		var items []item
		for _, k := range o.kids {
			items = append(items, item{first: k.cpus[0], obj: k})
		}
		for i := range o.cores {
			items = append(items, item{first: o.cores[i].CPUs[0], core: &o.cores[i]})
		}
		slices.SortStableFunc(items, func(a, b item) int { return a.first - b.first })
		for i := 0; i < len(items); {
			if it := items[i]; it.obj != nil {
				lines = append(lines, [2]string{ind + it.obj.label, sysfs.FormatCPUList(it.obj.cpus)})
				walk(it.obj, depth+1)
				i++
				continue
			}
			sig := signature(*items[i].core)
			var names []string
			var cpus []int
			for i < len(items) && items[i].core != nil && signature(*items[i].core) == sig {
				c := items[i].core
				names = append(names, joinInts(c.CPUs, "+"))
				cpus = append(cpus, c.CPUs...)
				i++
			}
			slices.Sort(cpus)
			suffix := ""
			if sig != "" {
				suffix = "   (each: " + sig + ")"
			}
			head := ind + "cores "
			cur := head
			for j, n := range names {
				if j > 0 && len(cur)+1+len(n) > width {
					lines = append(lines, [2]string{cur, ""})
					cur = strings.Repeat(" ", len(head))
				} else if j > 0 {
					cur += " "
				}
				cur += n
			}
			lines = append(lines, [2]string{cur + suffix, ""})
		}
	}
	walk(root, 0)
	col := 0
	for _, l := range lines {
		if l[1] != "" {
			col = max(col, len(l[0]))
		}
	}
	for _, l := range lines {
		if l[1] == "" {
			fmt.Fprintln(w, l[0])
			continue
		}
		fmt.Fprintf(w, "%-*s  cpus %s\n", col, l[0], l[1])
	}
	for _, p := range t.Packages {
		if len(p.CPUs) == 0 {
			fmt.Fprintf(w, "package %d  no usable CPUs (its memory is usable)\n", p.ID)
		}
	}
}

// coreHolding returns the index of the core whose CPUs include all of cpus.
func coreHolding(t *result.Topology, cpus []int) (int, bool) {
	for i, c := range t.Cores {
		if containsAll(c.CPUs, cpus) {
			return i, true
		}
	}
	return -1, false
}

func joinInts(v []int, sep string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, sep)
}

func cmpPair(a, b [2]int) int {
	if a[0] != b[0] {
		return a[0] - b[0]
	}
	return a[1] - b[1]
}

// writeNodes prints the NUMA table: memory, CPUs and the distance matrix
// (and the latency matrix where the source declares one).
func writeNodes(w io.Writer, t *result.Topology) {
	hasDist := len(t.Distances) == len(t.Nodes) && len(t.Nodes) > 0
	title := "NUMA nodes"
	if hasDist {
		title += " (distances as the firmware reports them; 10 = local)"
	}
	fmt.Fprintln(w, title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "node\tmemory\tcpus\t"
	if hasDist {
		for _, n := range t.Nodes {
			header += fmt.Sprintf("%d\t", n.ID)
		}
	}
	fmt.Fprintln(tw, header)
	for i, n := range t.Nodes {
		cpus := sysfs.FormatCPUList(n.CPUs)
		if cpus == "" {
			cpus = "none (memory only)"
		}
		line := fmt.Sprintf("%d\t%s\t%s\t", n.ID, units.Bytes(n.MemBytes).String(), cpus)
		if hasDist {
			for _, d := range t.Distances[i] {
				line += fmt.Sprintf("%d\t", d)
			}
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	if len(t.LatencyNS) == len(t.Nodes) && len(t.Nodes) > 0 {
		fmt.Fprintln(w, "\nmemory latency, ns (row: CPUs of node, column: memory of node; 0 = not given)")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		header := "node\t"
		for _, n := range t.Nodes {
			header += fmt.Sprintf("%d\t", n.ID)
		}
		fmt.Fprintln(tw, header)
		for i, n := range t.Nodes {
			line := fmt.Sprintf("%d\t", n.ID)
			for _, v := range t.LatencyNS[i] {
				line += fmt.Sprintf("%g\t", v)
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
	}
}
