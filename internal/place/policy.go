package place

import (
	"fmt"
	"strings"
)

// Mode is a NUMA memory policy mode (set_mempolicy(2)); the values are
// Linux's MPOL_* constants.
type Mode int

// Memory policy modes.
const (
	Default       Mode = 0 // the process's default: allocate on the node the thread runs on
	Preferred     Mode = 1 // try one node first, fall back to others
	Bind          Mode = 2 // only these nodes
	Interleave    Mode = 3 // page by page across these nodes
	Local         Mode = 4 // the node of the CPU that allocates
	PreferredMany Mode = 5 // try these nodes first (Linux 5.15+)
)

var modeNames = map[Mode]string{
	Default: "default", Preferred: "preferred", Bind: "bind", Interleave: "interleave",
	Local: "local", PreferredMany: "preferred-many",
}

func (m Mode) String() string {
	if s, ok := modeNames[m]; ok {
		return s
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// ParseMode parses a mode name as [Mode.String] writes it.
func ParseMode(s string) (Mode, error) {
	for m, name := range modeNames {
		if strings.EqualFold(s, name) {
			return m, nil
		}
	}
	return 0,
		fmt.Errorf("parsing memory policy %q: expected default, preferred, bind, interleave, local or preferred-many", s)
}

// Policy is a memory policy: a mode over a set of nodes.
type Policy struct {
	Mode  Mode  `json:"mode"`
	Nodes []int `json:"nodes,omitempty"`
}

func (p Policy) String() string {
	if len(p.Nodes) == 0 {
		return p.Mode.String()
	}
	return p.Mode.String() + ":" + FormatCPUs(p.Nodes)
}

// maxNode is the number of nodes a nodemask here can name; the kernel
// accepts larger masks as long as the bits beyond its own limit are clear.
const maxNode = 1024

type nodemask [maxNode / 64]uint64

func (p Policy) mask(doing string) (*nodemask, error) {
	var m nodemask
	switch p.Mode {
	case Default, Local:
		if len(p.Nodes) > 0 {
			return nil, fmt.Errorf("%s: policy %s takes no nodes (got %s)", doing, p.Mode, FormatCPUs(p.Nodes))
		}
		return &m, nil
	case Preferred:
		if len(p.Nodes) > 1 {
			return nil,
				fmt.Errorf("%s: policy preferred takes one node (got %s; use preferred-many or interleave for several)",
					doing, FormatCPUs(p.Nodes))
		}
	case Bind, Interleave, PreferredMany:
		if len(p.Nodes) == 0 {
			return nil, fmt.Errorf("%s: policy %s needs at least one node", doing, p.Mode)
		}
	default:
		return nil, fmt.Errorf("%s: unknown policy mode %d", doing, int(p.Mode))
	}
	for _, n := range p.Nodes {
		if n < 0 || n >= maxNode {
			return nil, fmt.Errorf("%s: node %d is outside 0-%d", doing, n, maxNode-1)
		}
		m[n/64] |= 1 << (n % 64)
	}
	return &m, nil
}

func (m *nodemask) ids() []int {
	var ids []int
	for n := range maxNode {
		if m[n/64]&(1<<(n%64)) != 0 {
			ids = append(ids, n)
		}
	}
	return ids
}

// MarshalText writes the mode's name, so stored configurations read "bind".
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads a name written by MarshalText.
func (m *Mode) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}
