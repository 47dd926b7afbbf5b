package report

import (
	"fmt"
	"html"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/units"
)

// The machine as a tree: packages → NUMA nodes → cores → logical CPUs,
// each cache attached to the smallest of them that holds all its CPUs.
type pkgView struct {
	ID     int
	Model  string
	Caches []string // shared by more than one node
	Nodes  []nodeView
}

type nodeView struct {
	ID       int // -1: CPUs without a node
	MemBytes int64
	Caches   []string // shared by more than one core
	Cores    []coreView
}

type coreView struct {
	ID     int
	CPUs   []int
	Caches []string // private to the core
}

func cacheLabel(c result.Cache) string {
	kind := ""
	switch c.Type {
	case "Data":
		kind = "d"
	case "Instruction":
		kind = "i"
	}
	return fmt.Sprintf("L%d%s %s", c.Level, kind, units.Bytes(c.SizeBytes))
}

func subset(a, b []int) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return len(a) > 0
}

// machineTree arranges t for drawing; caches are listed largest level first.
func machineTree(t *result.Topology) (pkgs []pkgView, loose []string) {
	caches := slices.Clone(t.Caches)
	slices.SortStableFunc(caches, func(a, b result.Cache) int {
		if a.Level != b.Level {
			return b.Level - a.Level
		}
		return strings.Compare(a.Type, b.Type)
	})
	placed := make([]bool, len(caches))
	coreCaches := func(cpus []int) []string {
		var out []string
		for i, c := range caches {
			if !placed[i] && subset(c.CPUs, cpus) {
				placed[i] = true
				out = append(out, cacheLabel(c))
			}
		}
		return out
	}
	// Cores first, so that private caches go to cores.
	coreOf := map[int][]string{}
	for i, c := range t.Cores {
		coreOf[i] = coreCaches(c.CPUs)
	}
	nodeOf := func(cpu int) int {
		if c, ok := t.CPU(cpu); ok {
			return c.Node
		}
		return -1
	}
	for _, p := range t.Packages {
		pv := pkgView{ID: p.ID, Model: p.Model}
		var nodeIDs []int
		for i, c := range t.Cores {
			if c.Package != p.ID || len(c.CPUs) == 0 {
				continue
			}
			n := nodeOf(c.CPUs[0])
			k := slices.Index(nodeIDs, n)
			if k < 0 {
				nodeIDs = append(nodeIDs, n)
				nv := nodeView{ID: n}
				if idx := t.NodeIndex(n); idx >= 0 {
					nv.MemBytes = t.Nodes[idx].MemBytes
				}
				pv.Nodes = append(pv.Nodes, nv)
				k = len(pv.Nodes) - 1
			}
			pv.Nodes[k].Cores = append(pv.Nodes[k].Cores, coreView{ID: c.ID, CPUs: c.CPUs, Caches: coreOf[i]})
		}
		for k := range pv.Nodes {
			var cpus []int
			for _, c := range pv.Nodes[k].Cores {
				cpus = append(cpus, c.CPUs...)
			}
			pv.Nodes[k].Caches = coreCaches(cpus)
		}
		pv.Caches = coreCaches(p.CPUs)
		pkgs = append(pkgs, pv)
	}
	for i, c := range caches {
		if !placed[i] {
			loose = append(loose, cacheLabel(c)+" (CPUs "+cpuList(c.CPUs)+")")
		}
	}
	return pkgs, loose
}

// cpuList writes sorted CPU numbers as ranges: 0-3,8.
// StreamCPUs says which CPUs each stream of a cell ran on: with spread,
// stream i was pinned to cpus[i mod len(cpus)] alone ("per stream 0,2,1,3",
// the first 16 streams listed); otherwise every stream could run on all of
// cpus ("all share 0-3"), or nothing was pinned ("not pinned").
func StreamCPUs(cpus []int, spread bool, streams int) string {
	if len(cpus) == 0 {
		return "not pinned"
	}
	if !spread {
		return "all share " + cpuList(cpus)
	}
	var each []string
	for i := 0; i < streams && i < 16; i++ {
		each = append(each, strconv.Itoa(cpus[i%len(cpus)]))
	}
	more := ""
	if streams > 16 {
		more = ",…"
	}
	return "per stream " + strings.Join(each, ",") + more
}

func cpuList(cpus []int) string {
	s := slices.Clone(cpus)
	slices.Sort(s)
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		} else {
			parts = append(parts, strconv.Itoa(s[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// machineText describes the tree in text, one line per package, node and
// core (cores with the same caches share a line).
func machineText(t *result.Topology) []string {
	pkgs, loose := machineTree(t)
	var out []string
	for _, p := range pkgs {
		line := fmt.Sprintf("package %d", p.ID)
		if len(p.Caches) > 0 {
			line += ": " + strings.Join(p.Caches, ", ")
		}
		out = append(out, line)
		for _, n := range p.Nodes {
			line := "  " + nodeName(n.ID)
			if n.MemBytes > 0 {
				line += ", " + units.Bytes(n.MemBytes).String()
			}
			if len(n.Caches) > 0 {
				line += ": " + strings.Join(n.Caches, ", ")
			}
			out = append(out, line)
			var ids []string
			for _, c := range n.Cores {
				ids = append(ids, fmt.Sprintf("%d(%s)", c.ID, cpuList(c.CPUs)))
			}
			each := ""
			if len(n.Cores) > 0 && len(n.Cores[0].Caches) > 0 {
				each = "; each " + strings.Join(n.Cores[0].Caches, ", ")
			}
			out = append(out, fmt.Sprintf("    cores(CPUs) %s%s", strings.Join(ids, " "), each))
		}
	}
	for _, l := range loose {
		out = append(out, "cache "+l)
	}
	return out
}

func nodeName(id int) string {
	if id < 0 {
		return "no NUMA node"
	}
	return fmt.Sprintf("node %d", id)
}

// machineHTML draws the tree as nested boxes (CSS, no script): a package
// box holds node boxes, which hold core boxes, which hold a box per
// logical CPU; cache bars sit in the box that shares them (on machines of
// more than 16 cores, a core's own caches are listed once per node).
func machineHTML(t *result.Topology) string {
	pkgs, loose := machineTree(t)
	// Past 16 cores, private caches are listed once per node, not per core.
	compact := len(t.Cores) > 16
	var b strings.Builder
	esc := html.EscapeString
	b.WriteString(`<div class="topo">`)
	for _, p := range pkgs {
		fmt.Fprintf(&b, `<div class="pkg"><div class="lbl">Package %d`, p.ID)
		if p.Model != "" {
			fmt.Fprintf(&b, ` <span class="dim">%s</span>`, esc(p.Model))
		}
		b.WriteString(`</div>`)
		for _, c := range p.Caches {
			fmt.Fprintf(&b, `<div class="cache">%s</div>`, esc(c))
		}
		b.WriteString(`<div class="row">`)
		for _, n := range p.Nodes {
			fmt.Fprintf(&b, `<div class="node"><div class="lbl">NUMA %s`, esc(nodeName(n.ID)))
			if n.MemBytes > 0 {
				fmt.Fprintf(&b, ` <span class="dim">%s</span>`, esc(units.Bytes(n.MemBytes).String()))
			}
			b.WriteString(`</div>`)
			for _, c := range n.Caches {
				fmt.Fprintf(&b, `<div class="cache">%s</div>`, esc(c))
			}
			if compact && len(n.Cores) > 0 && len(n.Cores[0].Caches) > 0 {
				fmt.Fprintf(&b, `<div class="cache small">each core: %s</div>`, esc(strings.Join(n.Cores[0].Caches, ", ")))
			}
			b.WriteString(`<div class="row">`)
			for _, c := range n.Cores {
				fmt.Fprintf(&b, `<div class="core"><div class="lbl">Core %d</div>`, c.ID)
				for _, cc := range c.Caches {
					if !compact {
						fmt.Fprintf(&b, `<div class="cache small">%s</div>`, esc(cc))
					}
				}
				b.WriteString(`<div class="row">`)
				for _, cpu := range c.CPUs {
					fmt.Fprintf(&b, `<div class="pu">CPU %d</div>`, cpu)
				}
				b.WriteString(`</div></div>`)
			}
			b.WriteString(`</div></div>`)
		}
		b.WriteString(`</div></div>`)
	}
	for _, l := range loose {
		fmt.Fprintf(&b, `<div class="cache">%s</div>`, esc(l))
	}
	b.WriteString(`</div>`)
	return b.String()
}
