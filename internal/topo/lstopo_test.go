package topo

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/sysfs"
)

// lstopo is what `lstopo -v` printed for a machine: the oracle the
// topology readers are checked against.
type lstopo struct {
	pus       []int
	offline   []int // "N processors not represented in topology: 0x..."
	packages  []lsObj
	nodes     []lsObj // in logical (L#) order
	cores     []lsObj
	caches    []lsObj
	distances [][]int // by logical node index; nil when not printed
}

// lsObj is one object of the tree with the PUs below it.
type lsObj struct {
	typ   string // Package, NUMANode, Core, L2Cache, ...
	pnum  int    // P#, -1 if none printed
	attrs map[string]string
	cpus  []int
	// cache level and type, for caches
	level    int
	cacheTyp string
}

func (o lsObj) String() string {
	s := o.typ
	if o.pnum >= 0 {
		s += fmt.Sprintf(" P#%d", o.pnum)
	}
	for _, k := range []string{"size", "linesize", "ways", "local"} {
		if v, ok := o.attrs[k]; ok {
			s += " " + k + "=" + v
		}
	}
	return s + " cpus=" + sysfs.FormatCPUList(o.cpus)
}

var (
	lsObjLine   = regexp.MustCompile(`^( *)([A-Za-z0-9]+) L#(\d+)(?: \((.*)\))?`)
	lsCache     = regexp.MustCompile(`^L(\d)([di]?)Cache$`)
	lsNotShown  = regexp.MustCompile(`^(\d+) processors not represented in topology: (\S+)`)
	lsMatrixHdr = regexp.MustCompile(`^Relative latency matrix .* between (\d+) NUMANodes`)
)

// parseLstopo reads lstopo's verbose console output.
func parseLstopo(r io.Reader) (*lstopo, error) {
	type node struct {
		obj    lsObj
		indent int
		kids   []*node
	}
	root := &node{indent: -1}
	stack := []*node{root}
	var all []*node
	ls := &lstopo{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := lsNotShown.FindStringSubmatch(line); m != nil {
			cpus, err := sysfs.ParseCPUMask([]byte(m[2]))
			if err != nil {
				return nil, err
			}
			ls.offline = cpus
			continue
		}
		if m := lsMatrixHdr.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			sc.Scan() // " index  0  1 ..."
			for range n {
				if !sc.Scan() {
					return nil, fmt.Errorf("distance matrix cut short")
				}
				f := strings.Fields(sc.Text())
				row := make([]int, 0, n)
				for _, w := range f[1:] {
					v, err := strconv.Atoi(w)
					if err != nil {
						return nil, fmt.Errorf("distance %q: %v", w, err)
					}
					row = append(row, v)
				}
				ls.distances = append(ls.distances, row)
			}
			continue
		}
		m := lsObjLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n := &node{indent: len(m[1]), obj: lsObj{typ: m[2], pnum: -1, attrs: map[string]string{}}}
		for _, tok := range attrTokens(m[4]) {
			if p, ok := strings.CutPrefix(tok, "P#"); ok {
				n.obj.pnum, _ = strconv.Atoi(p)
			} else if k, v, ok := strings.Cut(tok, "="); ok {
				n.obj.attrs[k] = strings.Trim(v, `"`)
			}
		}
		for stack[len(stack)-1].indent >= n.indent {
			stack = stack[:len(stack)-1]
		}
		parent := stack[len(stack)-1]
		parent.kids = append(parent.kids, n)
		stack = append(stack, n)
		all = append(all, n)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var pus func(n *node) []int
	pus = func(n *node) []int {
		if n.obj.typ == "PU" {
			return []int{n.obj.pnum}
		}
		var out []int
		for _, k := range n.kids {
			out = append(out, pus(k)...)
		}
		slices.Sort(out)
		return out
	}
	var parentOf func(n, want *node) *node
	parentOf = func(n, want *node) *node {
		for _, k := range n.kids {
			if k == want {
				return n
			}
			if p := parentOf(k, want); p != nil {
				return p
			}
		}
		return nil
	}
	for _, n := range all {
		o := n.obj
		o.cpus = pus(n)
		switch {
		case o.typ == "PU":
			ls.pus = append(ls.pus, o.pnum)
		case o.typ == "Package":
			ls.packages = append(ls.packages, o)
		case o.typ == "NUMANode":
			// A memory object hangs beside the CPUs it is local to.
			o.cpus = pus(parentOf(root, n))
			ls.nodes = append(ls.nodes, o)
		case o.typ == "Core":
			ls.cores = append(ls.cores, o)
		case lsCache.MatchString(o.typ):
			cm := lsCache.FindStringSubmatch(o.typ)
			o.level, _ = strconv.Atoi(cm[1])
			o.cacheTyp = map[string]string{"d": "Data", "i": "Instruction", "": "Unified"}[cm[2]]
			ls.caches = append(ls.caches, o)
		}
	}
	slices.Sort(ls.pus)
	return ls, nil
}

// attrTokens splits "P#0 size=32KiB CPUModel="Intel(R) Xeon"" on spaces
// outside quotes.
func attrTokens(s string) []string {
	var out []string
	var b strings.Builder
	quoted := false
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
			b.WriteRune(r)
		case r == ' ' && !quoted:
			if b.Len() > 0 {
				out = append(out, b.String())
				b.Reset()
			}
		default:
			b.WriteRune(r)
		}
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

// hwlocSize formats bytes as lstopo does: KiB below 10 MiB, MiB below 10
// GiB, then GiB (then TiB), rounded to nearest.
func hwlocSize(b int64) string {
	u := uint64(b)
	switch {
	case u < 10<<20:
		return fmt.Sprintf("%dKiB", ((u>>9)+1)>>1)
	case u < 10<<30:
		return fmt.Sprintf("%dMiB", ((u>>19)+1)>>1)
	case u < 10<<40:
		return fmt.Sprintf("%dGiB", ((u>>29)+1)>>1)
	}
	return fmt.Sprintf("%dTiB", ((u>>39)+1)>>1)
}

// hwlocSizeLike formats bytes the way an lstopo value was printed: older
// and test-suite lstopo -v round to KiB/MiB/GiB, hwloc 2.9's lstopo -v
// prints exact kilobytes ("32768KB").
func hwlocSizeLike(b int64, printed string) string {
	if strings.HasSuffix(printed, "KB") || strings.HasSuffix(printed, "MB") || strings.HasSuffix(printed, "GB") {
		return fmt.Sprintf("%dKB", ((uint64(b)>>9)+1)>>1)
	}
	return hwlocSize(b)
}

func TestParseLstopo(t *testing.T) {
	in := `Machine (P#0 total=16GiB)
  Package L#0 (P#0 total=8GiB CPUModel="Intel(R) Xeon(R) CPU  E5345 @ 2.33GHz")
    NUMANode L#0 (P#1 local=8192MiB total=8192MiB)
    L2Cache L#0 (size=4096KiB linesize=64 ways=16)
      L1dCache L#0 (size=32KiB linesize=64 ways=8)
        Core L#0 (P#0)
          PU L#0 (P#0)
          PU L#1 (P#4)
  Package L#1 (P#1)
    Core L#1 (P#0)
      PU L#2 (P#1)
depth 0:           1 Machine (type #0)
Relative latency matrix (name NUMALatency kind 5) between 1 NUMANodes (depth -3) by logical indexes:
 index     0
     0    10
3 processors not represented in topology: 0x000000e0
`
	ls, err := parseLstopo(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := "pus=[0 1 4] offline=[5 6 7] packages=[Package P#0 cpus=0,4 Package P#1 cpus=1] " +
		"nodes=[NUMANode P#1 local=8192MiB cpus=0,4] cores=[Core P#0 cpus=0,4 Core P#0 cpus=1] " +
		"caches=[L2Cache size=4096KiB linesize=64 ways=16 cpus=0,4 L1dCache size=32KiB linesize=64 ways=8 " +
		"cpus=0,4] distances=[[10]]"
	got := fmt.Sprintf("pus=%v offline=%v packages=%v nodes=%v cores=%v caches=%v distances=%v",
		ls.pus, ls.offline, ls.packages, ls.nodes, ls.cores, ls.caches, ls.distances)
	if got != want {
		t.Errorf("parsed\n got %s\nwant %s", got, want)
	}
	if ls.packages[0].attrs["CPUModel"] != "Intel(R) Xeon(R) CPU  E5345 @ 2.33GHz" {
		t.Errorf("quoted attribute: %q", ls.packages[0].attrs["CPUModel"])
	}
	if ls.caches[1].level != 1 || ls.caches[1].cacheTyp != "Data" || ls.caches[0].cacheTyp != "Unified" {
		t.Errorf("cache kinds: %+v", ls.caches)
	}
}

func TestHwlocSize(t *testing.T) {
	for b, want := range map[int64]string{
		32 << 10:          "32KiB",
		4096 << 10:        "4096KiB",
		30 << 20:          "30MiB",
		8387892 * 1024:    "8191MiB",
		16 << 30:          "16GiB",
		1280 << 10:        "1280KiB",
		(46 << 30) + 5e8:  "46GiB",
		(263 << 20) + 1e6: "264MiB",
	} {
		if got := hwlocSize(b); got != want {
			t.Errorf("hwlocSize(%d) = %s, want %s", b, got, want)
		}
	}
}
