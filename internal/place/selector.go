package place

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/result"
)

// Sentinels wrapped by selector errors: ErrSelector for syntax,
// ErrUnsatisfiable for a selector this machine cannot satisfy.
var (
	ErrSelector      = errors.New("bad selector")
	ErrUnsatisfiable = errors.New("selector not satisfiable on this machine")
)

// SelectorError is the error of [Parse] and [Spec.Resolve]. Its message is
// the selector and what is wrong, with what exists or what to write instead.
type SelectorError struct {
	Selector string
	Msg      string
	Err      error // ErrSelector or ErrUnsatisfiable
}

func (e *SelectorError) Error() string { return fmt.Sprintf("selector %q: %s", e.Selector, e.Msg) }
func (e *SelectorError) Unwrap() error { return e.Err }

// SMT is a selector's smt= setting.
type SMT int

// SMT settings.
const (
	SMTAny SMT = iota // not given: keep what the other filters chose
	SMTOn             // smt=on: every sibling of the chosen cores
	SMTOff            // smt=off: one logical CPU per physical core
)

func (s SMT) String() string {
	switch s {
	case SMTOn:
		return "on"
	case SMTOff:
		return "off"
	}
	return ""
}

// Spec is a parsed selector, not yet checked against a machine.
type Spec struct {
	Selector string // as written
	CPUs     []int  // cpus=; nil when not given
	Nodes    []int  // node=; nil when not given
	Cores    int    // cores=; 0 when not given
	SMT      SMT
	DataNode int // data=nodeN; -1 when not given
}

// Placement is a selector resolved on one machine.
type Placement struct {
	Selector string `json:"selector"`
	CPUs     []int  `json:"cpus"` // sorted logical CPUs
	// Streams are the same CPUs in the order streams take them (stream i
	// on Streams[i mod len]): see [CoresFirst].
	Streams []int  `json:"streams"`
	Nodes   []int  `json:"nodes"` // NUMA nodes of those CPUs, sorted; -1 for CPUs with no node
	Cores   int    `json:"cores"` // physical cores those CPUs cover
	SMT     string `json:"smt,omitempty"`
	// DataNode is the node the data pages should live on (data=nodeN),
	// -1 when the selector does not say.
	DataNode int `json:"data_node"`
}

// String is a one-line description: "cpus 0-3 (2 cores, node 0)".
func (p Placement) String() string {
	var known []int
	for _, n := range p.Nodes {
		if n >= 0 {
			known = append(known, n)
		}
	}
	where := nodesPhrase(known)
	if len(known) < len(p.Nodes) {
		where += " and CPUs with no node"
		if len(known) == 0 {
			where = "CPUs with no node"
		}
	}
	cores := fmt.Sprintf("%d cores", p.Cores)
	if p.Cores == 1 {
		cores = "1 core"
	}
	s := fmt.Sprintf("cpus %s (%s, %s)", FormatCPUs(p.CPUs), cores, where)
	if p.DataNode >= 0 {
		s += fmt.Sprintf(", data on node %d", p.DataNode)
	}
	return s
}

const selectorKeys = "cpus=LIST, node=N, cores=N, smt=on|off, data=nodeN"

// Parse checks a selector's syntax. Terms are key=value separated by
// commas; a term without "=" continues the list of the cpus= or node= term
// before it, so "cpus=0-3,8,smt=off" is two terms. Each key may appear once.
func Parse(sel string) (Spec, error) {
	sp := Spec{Selector: sel, DataNode: -1}
	bad := func(format string, a ...any) (Spec, error) {
		return Spec{}, &SelectorError{Selector: sel, Msg: fmt.Sprintf(format, a...), Err: ErrSelector}
	}
	type term struct{ key, val string }
	var terms []term
	for tok := range strings.SplitSeq(sel, ",") {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			if strings.TrimSpace(sel) == "" {
				break
			}
			return bad("empty term (expected terms like %s, separated by commas)", selectorKeys)
		}
		key, val, ok := strings.Cut(tok, "=")
		if !ok {
			if n := len(terms); n > 0 && (terms[n-1].key == "cpus" || terms[n-1].key == "node") {
				terms[n-1].val += "," + tok
				continue
			}
			return bad("%q is not key=value (expected %s)", tok, selectorKeys)
		}
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		switch key { // accepted spellings
		case "cpu":
			key = "cpus"
		case "nodes":
			key = "node"
		}
		for _, t := range terms {
			if t.key == key {
				return bad("%s= given twice", key)
			}
		}
		terms = append(terms, term{key, val})
	}
	for _, t := range terms {
		switch t.key {
		case "cpus":
			ids, err := ParseCPUList(t.val)
			if err != nil || len(ids) == 0 {
				return bad("cpus=%s: expected a CPU list such as cpus=0-3,8", t.val)
			}
			sp.CPUs = ids
		case "node":
			ids, err := ParseCPUList(t.val)
			if err != nil || len(ids) == 0 {
				return bad("node=%s: expected a NUMA node number such as node=0 (or a list, node=0,1)", t.val)
			}
			sp.Nodes = ids
		case "cores":
			n, err := strconv.Atoi(t.val)
			if err != nil || n <= 0 {
				return bad("cores=%s: expected a positive number of physical cores such as cores=4", t.val)
			}
			sp.Cores = n
		case "smt":
			switch strings.ToLower(t.val) {
			case "on":
				sp.SMT = SMTOn
			case "off":
				sp.SMT = SMTOff
			default:
				return bad("smt=%s: expected smt=on or smt=off", t.val)
			}
		case "data":
			v := strings.TrimPrefix(strings.ToLower(t.val), "node")
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || v == "" || v[0] == '+' {
				return bad("data=%s: expected a NUMA node such as data=node0", t.val)
			}
			sp.DataNode = n
		default:
			return bad("unknown key %q (expected %s)", t.key, selectorKeys)
		}
	}
	return sp, nil
}

// Select parses sel and resolves it on t, returning the sorted CPUs.
func Select(t *result.Topology, sel string) ([]int, error) {
	p, err := Resolve(t, sel)
	if err != nil {
		return nil, err
	}
	return p.CPUs, nil
}

// Resolve parses sel and resolves it on t.
func Resolve(t *result.Topology, sel string) (Placement, error) {
	sp, err := Parse(sel)
	if err != nil {
		return Placement{}, err
	}
	return sp.Resolve(t)
}

// Resolve applies the selector to t: cpus= and node= first, then smt=, then
// cores=. A CPU, node or count the machine does not have is an error that
// says what the machine has.
func (sp Spec) Resolve(t *result.Topology) (Placement, error) {
	unsat := func(format string, a ...any) (Placement, error) {
		return Placement{}, &SelectorError{Selector: sp.Selector, Msg: fmt.Sprintf(format, a...), Err: ErrUnsatisfiable}
	}
	if t == nil || len(t.CPUs) == 0 {
		return unsat("the topology has no usable CPUs")
	}
	usable := make([]int, 0, len(t.CPUs))
	byID := make(map[int]result.CPU, len(t.CPUs))
	for _, c := range t.CPUs {
		usable = append(usable, c.ID)
		byID[c.ID] = c
		if (sp.SMT != SMTAny || sp.Cores > 0) && (c.Core < 0 || c.Core >= len(t.Cores)) {
			return unsat("the topology does not say which core CPU %d belongs to, so smt= and cores= cannot be applied", c.ID)
		}
	}
	slices.Sort(usable)
	chosen := map[int]bool{}
	for _, id := range usable {
		chosen[id] = true
	}

	// cpus=
	if sp.CPUs != nil {
		for _, id := range sp.CPUs {
			if _, ok := byID[id]; ok {
				continue
			}
			if slices.Contains(t.Offline, id) {
				return unsat("CPU %d is offline or outside this process's cpuset (usable CPUs: %s)", id, FormatCPUs(usable))
			}
			return unsat("no CPU %d (this machine's usable CPUs: %s)", id, FormatCPUs(usable))
		}
		chosen = map[int]bool{}
		for _, id := range sp.CPUs {
			chosen[id] = true
		}
	}

	// node=
	if sp.Nodes != nil {
		var all, withCPUs []int
		for _, n := range t.Nodes {
			all = append(all, n.ID)
			if len(n.CPUs) > 0 {
				withCPUs = append(withCPUs, n.ID)
			}
		}
		in := map[int]bool{}
		for _, id := range sp.Nodes {
			i := t.NodeIndex(id)
			if i < 0 {
				return unsat("no NUMA node %d (this machine has %s)", id, nodesPhrase(all))
			}
			if len(t.Nodes[i].CPUs) == 0 {
				return unsat("node %d has memory but no CPUs (nodes with CPUs: %s)", id, FormatCPUs(withCPUs))
			}
			in[id] = true
		}
		before := sorted(chosen)
		for id := range chosen {
			if !in[byID[id].Node] {
				delete(chosen, id)
			}
		}
		if len(chosen) == 0 {
			var nodeCPUs []int
			for _, c := range t.CPUs {
				if in[c.Node] {
					nodeCPUs = append(nodeCPUs, c.ID)
				}
			}
			return unsat("no CPU is both in cpus=%s and in %s (whose CPUs are %s)",
				FormatCPUs(before), nodesPhrase(sp.Nodes), FormatCPUs(nodeCPUs))
		}
	}

	// smt=off: the lowest-numbered chosen sibling of each core.
	if sp.SMT == SMTOff {
		seen := map[int]bool{}
		for _, id := range sorted(chosen) {
			core := byID[id].Core
			if seen[core] {
				delete(chosen, id)
			}
			seen[core] = true
		}
	}

	// cores=N: cores ordered by node (CPUs with no node last), package, die
	// and core ID.
	var cores []coreRef
	if sp.SMT != SMTAny || sp.Cores > 0 {
		cores = coresOf(t, chosen, byID) // core indexes were checked above
	}
	if sp.Cores > 0 {
		if len(cores) < sp.Cores {
			var per []string
			var nodes []int
			count := map[int]int{}
			for _, c := range cores {
				if count[c.node] == 0 {
					nodes = append(nodes, c.node)
				}
				count[c.node]++
			}
			for _, n := range nodes {
				if n < 0 {
					per = append(per, fmt.Sprintf("no node: %d", count[n]))
				} else {
					per = append(per, fmt.Sprintf("node %d: %d", n, count[n]))
				}
			}
			where := ""
			if sp.CPUs != nil || sp.Nodes != nil {
				where = " in the selection"
			}
			return unsat("only %d physical cores%s (in %s)", len(cores), where, strings.Join(per, ", "))
		}
		keep := map[int]bool{}
		for _, c := range cores[:sp.Cores] {
			for _, id := range t.Cores[c.index].CPUs {
				if chosen[id] {
					keep[id] = true
				}
			}
		}
		chosen = keep
		cores = cores[:sp.Cores]
	}

	if sp.DataNode >= 0 {
		i := t.NodeIndex(sp.DataNode)
		if i < 0 {
			var all []int
			for _, n := range t.Nodes {
				all = append(all, n.ID)
			}
			return unsat("data=node%d: no NUMA node %d (this machine has %s)", sp.DataNode, sp.DataNode, nodesPhrase(all))
		}
		if t.Nodes[i].MemBytes == 0 && len(t.Nodes[i].CPUs) > 0 {
			return unsat("data=node%d: node %d has no memory of its own", sp.DataNode, sp.DataNode)
		}
	}

	p := Placement{Selector: sp.Selector, CPUs: sorted(chosen), SMT: sp.SMT.String(), DataNode: sp.DataNode}
	nodes := map[int]bool{}
	for _, id := range p.CPUs {
		nodes[byID[id].Node] = true
	}
	p.Nodes = sorted(nodes)
	p.Streams = CoresFirst(t, p.CPUs)
	if sp.SMT == SMTAny && sp.Cores == 0 {
		// Count cores without demanding core information.
		seen := map[int]bool{}
		for _, id := range p.CPUs {
			seen[byID[id].Core] = true
		}
		p.Cores = len(seen)
	} else {
		p.Cores = len(cores)
	}
	return p, nil
}

type coreRef struct {
	index int // into Topology.Cores
	node  int // node of the core's lowest chosen CPU
}

// coresOf lists the cores with at least one chosen CPU, ordered node by
// node, then by package, die and core ID (Topology.Cores order).
func coresOf(t *result.Topology, chosen map[int]bool, byID map[int]result.CPU) []coreRef {
	node := map[int]int{}
	for _, id := range sorted(chosen) {
		c := byID[id]
		if _, ok := node[c.Core]; !ok {
			node[c.Core] = c.Node
		}
	}
	var refs []coreRef
	for idx, n := range node {
		refs = append(refs, coreRef{idx, n})
	}
	slices.SortFunc(refs, func(a, b coreRef) int {
		if c := cmp.Compare(nodeKey(a.node), nodeKey(b.node)); c != 0 {
			return c
		}
		ca, cb := t.Cores[a.index], t.Cores[b.index]
		if c := cmp.Compare(ca.Package, cb.Package); c != 0 {
			return c
		}
		if c := cmp.Compare(ca.Die, cb.Die); c != 0 {
			return c
		}
		if c := cmp.Compare(ca.ID, cb.ID); c != 0 {
			return c
		}
		return cmp.Compare(a.index, b.index)
	})
	return refs
}

// nodeKey orders CPUs with no known node (-1) after every node.
func nodeKey(n int) int {
	if n < 0 {
		return math.MaxInt
	}
	return n
}

func sorted(set map[int]bool) []int {
	s := make([]int, 0, len(set))
	for id, ok := range set {
		if ok {
			s = append(s, id)
		}
	}
	slices.Sort(s)
	return s
}

// nodesPhrase is "node 0" or "nodes 0-1".
func nodesPhrase(ids []int) string {
	switch len(ids) {
	case 0:
		return "no NUMA nodes"
	case 1:
		return fmt.Sprintf("node %d", ids[0])
	}
	return "nodes " + FormatCPUs(ids)
}
