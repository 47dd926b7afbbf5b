package null

import (
	"fmt"
	"slices"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// The placements of a client and its backend, nearest first.
const (
	SameCPU    = "same-cpu"    // both on one logical CPU: every call is two context switches
	SMTSibling = "smt-sibling" // the other hardware thread of the client's core
	OtherCore  = "other-core"  // another core of the client's NUMA node
	OtherNode  = "other-node"  // a CPU of the node farthest from the client's
)

// Pairings are the placements in the matrix's order.
var Pairings = []string{SameCPU, SMTSibling, OtherCore, OtherNode}

// Pairing is one placement of a client and its backend on a machine: each
// pinned to one logical CPU. Unavailable says why the machine cannot offer
// it; the CPUs are then -1.
type Pairing struct {
	Name        string `json:"name"`
	Client      int    `json:"client_cpu"`
	Backend     int    `json:"backend_cpu"`
	Unavailable string `json:"unavailable,omitempty"`
}

func (p Pairing) String() string {
	if p.Unavailable != "" {
		return p.Name + ": unavailable (" + p.Unavailable + ")"
	}
	if p.Backend < 0 {
		return fmt.Sprintf("%s: on cpu %d", p.Name, p.Client)
	}
	return fmt.Sprintf("%s: client on cpu %d, backend on cpu %d", p.Name, p.Client, p.Backend)
}

// Matrix is every pairing on t, the client on t's first usable CPU. A
// pairing t cannot offer is in the matrix with the reason, never left out.
func Matrix(t *result.Topology) []Pairing {
	if len(t.CPUs) == 0 {
		out := make([]Pairing, len(Pairings))
		for i, n := range Pairings {
			out[i] = Pairing{Name: n, Client: -1, Backend: -1, Unavailable: "no usable CPU"}
		}
		return out
	}
	c0 := t.CPUs[0]
	pair := func(name string, backend int, why string) Pairing {
		if backend < 0 {
			return Pairing{Name: name, Client: -1, Backend: -1, Unavailable: why}
		}
		return Pairing{Name: name, Client: c0.ID, Backend: backend}
	}
	sibling, other := -1, -1
	for _, c := range t.CPUs[1:] {
		switch {
		case c.Core == c0.Core && sibling < 0:
			sibling = c.ID
		case c.Core != c0.Core && c.Node == c0.Node && other < 0:
			other = c.ID
		}
	}
	smtWhy := "one thread per core"
	if t.SMT == "off" || t.SMT == "forceoff" {
		smtWhy = "SMT is " + t.SMT
	}
	if n := len(t.Cores); c0.Core >= 0 && c0.Core < n && len(t.Cores[c0.Core].CPUs) > 1 && sibling < 0 {
		smtWhy = "the sibling is not usable (offline or outside this process's cpuset)"
	}
	far, farWhy := -1, "one NUMA node"
	if len(t.Nodes) > 1 {
		farWhy = "no other node has usable CPUs"
		if n := sweep.FarNode(t, c0.Node); n != c0.Node {
			far = t.Nodes[t.NodeIndex(n)].CPUs[0]
		}
	}
	return []Pairing{
		pair(SameCPU, c0.ID, ""),
		pair(SMTSibling, sibling, smtWhy),
		pair(OtherCore, other, fmt.Sprintf("no other core on node %d", c0.Node)),
		pair(OtherNode, far, farWhy),
	}
}

// Select is the matrix's pairings named in names, in the matrix's order.
func Select(m []Pairing, names []string) []Pairing {
	var out []Pairing
	for _, p := range m {
		if slices.Contains(names, p.Name) {
			out = append(out, p)
		}
	}
	return out
}
