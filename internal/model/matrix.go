package model

import (
	"errors"
	"fmt"
	"math"
)

// RowMeanLatency is the latency seen by a thread on node i when its
// accesses go evenly to the nodes in set (indices into the matrix): the
// mean of row i over set. An empty set means every node.
func RowMeanLatency(m [][]float64, i int, set []int) float64 {
	set = all(m, set)
	var sum float64
	for _, j := range set {
		sum += m[i][j]
	}
	return sum / float64(len(set))
}

// LocalityRowLatency is the latency seen by a thread on node i when a
// fraction p of its accesses are local (m[i][i]) and the rest spread evenly
// over the other nodes in set: p·m[i][i] + (1 − p)·mean(m[i][j], j ≠ i).
// With p = 1/len(set) it equals RowMeanLatency. i must be in set.
func LocalityRowLatency(m [][]float64, i int, set []int, p float64) float64 {
	set = all(m, set)
	if len(set) == 1 {
		return m[i][i]
	}
	var sum float64
	for _, j := range set {
		if j != i {
			sum += m[i][j]
		}
	}
	return p*m[i][i] + (1-p)*sum/float64(len(set)-1)
}

// SetLatency is the average latency of threads spread evenly over the
// nodes in set: the mean over i in set of the row latency (the row mean, or
// the locality-weighted mean when p ≥ 0).
func SetLatency(m [][]float64, set []int, p float64) float64 {
	set = all(m, set)
	var sum float64
	for _, i := range set {
		if p >= 0 {
			sum += LocalityRowLatency(m, i, set, p)
		} else {
			sum += RowMeanLatency(m, i, set)
		}
	}
	return sum / float64(len(set))
}

func all(m [][]float64, set []int) []int {
	if len(set) > 0 {
		return set
	}
	set = make([]int, len(m))
	for i := range set {
		set[i] = i
	}
	return set
}

// DistanceMatrix turns firmware NUMA distances (ACPI SLIT, 10 = local) into
// latencies scaled to a measured local latency: Lij = local·dij/10.
func DistanceMatrix(d [][]int, localNS float64) [][]float64 {
	m := make([][]float64, len(d))
	for i, row := range d {
		m[i] = make([]float64, len(row))
		for j, v := range row {
			m[i][j] = localNS * float64(v) / 10
		}
	}
	return m
}

// CheckMatrix reports a latency matrix that is not square or holds a
// latency that is not positive.
func CheckMatrix(m [][]float64) error {
	if len(m) == 0 {
		return fmt.Errorf("latency matrix is empty: %w", ErrInput)
	}
	for i, row := range m {
		if len(row) != len(m) {
			return fmt.Errorf("latency matrix row %d has %d entries, want %d (a square matrix): %w",
				i, len(row), len(m), ErrInput)
		}
		for j, v := range row {
			if !(v > 0) || math.IsInf(v, 0) {
				return fmt.Errorf("latency matrix [%d][%d] = %v ns: want a positive latency: %w", i, j, v, ErrInput)
			}
		}
	}
	return nil
}

// Machine is where latencies and core counts come from: either
// docs/model.md's uniform local/remote model, or a node-to-node matrix
// grouped by socket.
type Machine struct {
	// Source says where the numbers came from, for the output.
	Source string `json:"source"`
	// LocalNS and RemoteNS are the uniform model's latencies (used when
	// Matrix is nil); OneSocketNS, when above 0, is one socket's latency,
	// below a multi-socket server's LocalNS by its coherency check (Joe
	// Chang: 76 ns against 89 to 93 ns), else one socket has LocalNS.
	LocalNS     float64 `json:"local_ns,omitempty"`
	RemoteNS    float64 `json:"remote_ns,omitempty"`
	OneSocketNS float64 `json:"one_socket_ns,omitempty"`
	// TwoHopNS, when above 0, is the remote latency two hops away: the
	// uniform model then takes up to MaxHopSockets sockets, three of them
	// one hop (RemoteNS) from each socket and the rest two hops away.
	// Without it the uniform model stops at PublishedSockets.
	TwoHopNS float64 `json:"two_hop_ns,omitempty"`
	// Matrix is a node-to-node latency matrix in ns, and Sockets the
	// matrix indices of each socket's nodes, in order: S sockets use the
	// first S groups.
	Matrix  [][]float64 `json:"matrix_ns,omitempty"`
	Sockets [][]int     `json:"sockets,omitempty"`
	// BufferNS is added to every access on configurations of at least
	// BufferMinSockets sockets.
	BufferNS         float64 `json:"buffer_ns,omitempty"`
	BufferMinSockets int     `json:"buffer_min_sockets,omitempty"`
	// Locality, when ≥ 0, is the fraction of accesses that are local;
	// < 0 means none (every node equally likely).
	Locality float64 `json:"locality"`
	// CoresPerSocket is the number of physical cores on each socket.
	CoresPerSocket int `json:"cores_per_socket"`
}

// MaxSockets is the largest socket count the machine can model: unlimited
// (0) for the uniform model, the number of socket groups for a matrix.
func (mc Machine) MaxSockets() int {
	if mc.Matrix == nil {
		return 0
	}
	return len(mc.Sockets)
}

// DefaultSockets are the socket counts to model when none are asked for:
// 1 up to the machine's sockets, or 1, 2 and 4 for the uniform model (the
// published figures stop at 4).
func (mc Machine) DefaultSockets() []int {
	n := mc.MaxSockets()
	if n == 0 {
		return []int{1, 2, 4}
	}
	ss := make([]int, n)
	for i := range ss {
		ss[i] = i + 1
	}
	return ss
}

// Latencies are a machine's memory latencies as given (--local-ns,
// --one-socket-ns, --remote-ns), read one way by every command: LocalNS is
// the local node's latency on a multi-socket server, and one socket's too
// unless OneSocketNS gives one socket's own (docs/model.md: without it
// L1 = Lloc); RemoteNS is one hop's remote latency and TwoHopNS two
// hops' (--remote-ns ONE,TWO), which alone lets the uniform model go
// beyond PublishedSockets. 0 is not given.
type Latencies struct {
	LocalNS, OneSocketNS, RemoteNS, TwoHopNS float64
}

// OneSocket is one socket's latency: OneSocketNS when given, else LocalNS.
func (l Latencies) OneSocket() float64 {
	if l.OneSocketNS > 0 {
		return l.OneSocketNS
	}
	return l.LocalNS
}

// Latencies are the uniform model's latencies of mc.
func (mc Machine) Latencies() Latencies {
	return Latencies{LocalNS: mc.LocalNS, OneSocketNS: mc.OneSocketNS, RemoteNS: mc.RemoteNS, TwoHopNS: mc.TwoHopNS}
}

// MaxHopSockets is the most sockets the per-hop uniform model takes: each
// socket linked to three others (as on the published four-socket
// servers), every other socket two hops away, reaches seven others.
const MaxHopSockets = 8

// ErrBeyond is wrapped when a socket count above PublishedSockets has no
// topology, and no per-hop latencies, to give its hops.
var ErrBeyond = errors.New("beyond the published figures without the hops")

// BeyondHint says what gives the hops beyond PublishedSockets sockets.
const BeyondHint = "give a topology whose node distances give the hops (--topology FILE: a captured machine " +
	"or hwloc XML; --from-run ID), or the remote latency per hop (--remote-ns ONE_HOP,TWO_HOPS: three sockets " +
	"one hop away, the rest two hops, up to 8 sockets)"

// Latency is the average memory latency (ns) of a system of S sockets.
// The uniform model takes one socket at its one-socket latency
// (Latencies.OneSocket), whatever the locality. Above PublishedSockets it
// needs the hops: a matrix (a topology's), or TwoHopNS, three sockets one
// hop away at RemoteNS and the rest two hops away at TwoHopNS, up to
// MaxHopSockets; without them it refuses (ErrBeyond), as it does nothing
// the published figures or the inputs do not give.
func (mc Machine) Latency(sockets int) (float64, error) {
	if sockets < 1 {
		return 0, fmt.Errorf("%d sockets: want at least 1: %w", sockets, ErrInput)
	}
	b := 0.0
	if mc.BufferMinSockets > 0 && sockets >= mc.BufferMinSockets {
		b = mc.BufferNS
	}
	if mc.Matrix == nil {
		if sockets == 1 {
			// No remote latency is needed (or may be known) for one
			// socket, and every access is local.
			return mc.Latencies().OneSocket() + b, nil
		}
		remote := mc.RemoteNS // the mean remote latency
		switch {
		case sockets <= PublishedSockets:
		case mc.TwoHopNS == 0:
			return 0, fmt.Errorf("%d sockets: the published figures stop at %d and one remote latency does not give "+
				"the hops between more sockets: %s: %w", sockets, PublishedSockets, BeyondHint, ErrBeyond)
		case sockets > MaxHopSockets:
			return 0, fmt.Errorf("%d sockets: the remote latency per hop gives at most %d (three sockets one hop away, "+
				"the rest two hops): give a topology whose node distances give the hops (--topology FILE, --from-run ID): %w",
				sockets, MaxHopSockets, ErrBeyond)
		default:
			s := float64(sockets)
			remote = (3*mc.RemoteNS + (s-4)*mc.TwoHopNS) / (s - 1)
		}
		if mc.Locality >= 0 {
			return LocalityLatency(mc.LocalNS, remote, b, sockets, mc.Locality), nil
		}
		return AverageLatency(mc.LocalNS, remote, b, sockets), nil
	}
	if sockets > len(mc.Sockets) {
		return 0, fmt.Errorf("%d sockets do not fit a topology of %d: %w", sockets, len(mc.Sockets), ErrInput)
	}
	var set []int
	for _, g := range mc.Sockets[:sockets] {
		set = append(set, g...)
	}
	return SetLatency(mc.Matrix, set, mc.Locality) + b, nil
}

// HopSource says where the latency of a row beyond PublishedSockets comes
// from: the matrix's source, or the remote latency per hop.
func (mc Machine) HopSource() string {
	if mc.Matrix != nil {
		return mc.Source
	}
	return fmt.Sprintf(
		"the remote latency per hop (--remote-ns): three sockets one hop away at %s ns, the rest two hops away at %s ns",
		Num(mc.RemoteNS), Num(mc.TwoHopNS))
}

// BeyondNote is the flag on the rows of mc's predictions for more than
// PublishedSockets sockets: what the published figures say there, and
// where those rows' latency comes from.
func (mc Machine) BeyondNote() string {
	return "beyond the published figures, which stop at 4 sockets (4 to 8 sockets gave about 1.5× before NUMA, " +
		"Joe Chang): the latency comes from " + mc.HopSource()
}
