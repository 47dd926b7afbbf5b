package sweep

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/setting"
)

// MaxStreamsPerCPU bounds the streams a command accepts: beyond it a cell
// measures the scheduler.
const MaxStreamsPerCPU = 64

// TooManyStreams says what is wrong with stream counts above
// MaxStreamsPerCPU per logical CPU of a machine of cpus; "" when none is.
func TooManyStreams(streams []int, cpus int) string {
	maxS := MaxStreamsPerCPU * cpus
	if slices.Max(append([]int{0}, streams...)) <= maxS {
		return ""
	}
	return fmt.Sprintf("asks for more than %d streams (%d per logical CPU): beyond that a cell measures the scheduler",
		maxS, MaxStreamsPerCPU)
}

// Spec is a sweep as a user asks for it, before it meets a machine.
type Spec struct {
	Streams    []int    // stream counts
	Placements []string // selectors (see place.Parse); "" = every CPU, or not pinned (Unpinned)
	DOPs       []int    // degrees of parallelism of one query; nil = 1
	Types      []string // one cell per type, each running that type alone; nil = every type together
	Repeat     int      // repetitions of every cell, ≥ 1
	DataNode   int      // node to place the data on; -1 = leave it; a placement's data=nodeN wins
	// StreamsPerCPU, when positive, leaves out the cells whose streams
	// exceed that many per logical CPU of their placement.
	StreamsPerCPU int
	// Unpinned leaves the streams of an empty selector unpinned (the
	// scheduler places them) instead of pinning them to every CPU.
	Unpinned bool
	// OneDataNode refuses cells that ask for different data nodes (a
	// server whose memory is bound when it starts).
	OneDataNode bool
	// Neighbour adds to each repeat a pair of neighbour cells: one stream
	// on the first placement's first CPU while a memory-bandwidth
	// neighbour (memlat.StartNeighbour) reads on every other CPU, and
	// beside it the same stream while a control neighbour (place.Hog)
	// keeps those CPUs as busy without memory traffic; each is stored as
	// a memlat.NeighbourCell, never as an ordinary cell. NeighbourPairs,
	// when positive, keeps the pairs to the first that many repeats.
	Neighbour      bool
	NeighbourPairs int
}

// Cell is one planned cell with its placement resolved.
type Cell struct {
	drive.Point
	Place    place.Placement // CPUs nil: not pinned
	DataNode int             // -1: not controlled
	DOP      int             // parallelism of one query, ≥ 1
	Type     string          // the one type the cell runs; "" = every type
	Spread   bool            // stream i pinned to the i-th CPU alone
	// Cores are the physical cores the streams and their queries'
	// parallel workers run on: the divisor of tps per core (see
	// Topology.CoresUsed). At DOP d the workers run on the placement's CPUs too,
	// so a cell of s streams counts the cores of s×d threads.
	Cores int
	// Neighbour are the CPUs of a memory-bandwidth neighbour run during
	// the cell, or with Control of a control neighbour (busy, no memory
	// traffic); nil: none (see Spec.Neighbour).
	Neighbour []int
	Control   bool
}

// String says what the cell runs and on which CPUs, with the physical
// cores those CPUs are (a placement made by hand may not say: then the
// cores the cell uses): "P1, 2 streams, DOP 2 on cpus 0-1 (2 cores)".
func (c Cell) String() string {
	var parts []string
	if c.Type != "" {
		parts = append(parts, c.Type)
	}
	parts = append(parts, Count(c.Streams, "stream"))
	if c.DOP > 1 {
		parts = append(parts, "DOP "+strconv.Itoa(c.DOP))
	}
	s := strings.Join(parts, ", ")
	if len(c.Place.CPUs) > 0 {
		s += fmt.Sprintf(" on cpus %s (%s)", place.FormatCPUs(c.Place.CPUs), Count(max(c.Place.Cores, c.Cores), "core"))
	}
	if c.DataNode >= 0 {
		s += fmt.Sprintf(", data on node %d", c.DataNode)
	}
	if len(c.Neighbour) > 0 {
		s += fmt.Sprintf(", a %s on cpus %s", c.neighbourWord(), place.FormatCPUs(c.Neighbour))
	}
	return s
}

// Count is n and the noun, plural unless n is 1: "1 core", "2 cores".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Resolve lists the cells of spec on machine t, in the order to run them.
// Repetitions are the outer loop, so that every cell is measured once
// before any is measured again and slow drift (a noisy neighbour, a
// warming machine) spreads over all cells instead of biasing one; within
// a repetition: placements in the order given, then types, streams and
// DOPs (so DOP 1 comes before the speedups measured against it). Every
// placement is resolved before anything runs, so a selector the machine
// cannot satisfy fails at once. The notes are worth telling the user.
func Resolve(t *result.Topology, spec Spec, spread bool) ([]Cell, []string, error) {
	if err := spec.check(); err != nil {
		return nil, nil, err
	}
	placements := spec.Placements
	if len(placements) == 0 {
		placements = []string{""}
	}
	dops := spec.DOPs
	if len(dops) == 0 {
		dops = []int{1}
	}
	types := spec.Types
	if len(types) == 0 {
		types = []string{""}
	}
	resolved := map[string]place.Placement{}
	var notes []string
	for _, sel := range placements {
		p := place.Placement{Selector: sel, DataNode: -1}
		if sel != "" || !spec.Unpinned {
			var err error
			if p, err = place.Resolve(t, sel); err != nil {
				return nil, nil, setting.Wrap("placement", err)
			}
		}
		resolved[sel] = p
		if d := slices.Max(dops); len(p.CPUs) > 0 && d > len(p.CPUs) {
			notes = append(notes,
				fmt.Sprintf("DOP %d is more than the placement's %s: its parallel workers share them (oversubscribed)",
					d, Count(len(p.CPUs), "CPU")))
		}
	}
	if spec.DataNode >= 0 && t.NodeIndex(spec.DataNode) < 0 {
		var ids []string
		for _, n := range t.Nodes {
			ids = append(ids, strconv.Itoa(n.ID))
		}
		return nil, nil, setting.Errorf("data-node",
			"\"%d\" is not a NUMA node of this machine (it has node %s)", spec.DataNode, strings.Join(ids, ", "))
	}
	var cells []Cell
	skipped := 0
	for r := range spec.Repeat {
		for _, sel := range placements {
			p := resolved[sel]
			dn := spec.DataNode
			if p.DataNode >= 0 {
				dn = p.DataNode
			}
			for _, typ := range types {
				for _, s := range spec.Streams {
					if spec.StreamsPerCPU > 0 && len(p.CPUs) > 0 && s > spec.StreamsPerCPU*len(p.CPUs) {
						skipped++
						continue
					}
					for _, d := range dops {
						c := Cell{
							Point:    drive.Point{Index: len(cells), Streams: s, Placement: sel, Repeat: r},
							Place:    p,
							DataNode: dn,
							DOP:      d,
							Type:     typ,
							Spread:   spread,
							Cores:    t.CoresUsed(p.Streams, spread, s*d),
						}
						if spec.OneDataNode && len(cells) > 0 && dn != cells[0].DataNode {
							return nil, nil, setting.Errorf("placement", "the PostgreSQL server's memory is bound to one node when "+
								"it starts: give one data node per run (cells ask for %d and %d)", cells[0].DataNode, dn)
						}
						cells = append(cells, c)
					}
				}
			}
		}
		if spec.Neighbour && (spec.NeighbourPairs == 0 || r < spec.NeighbourPairs) {
			first, dn := resolved[placements[0]], spec.DataNode
			if first.DataNode >= 0 {
				dn = first.DataNode
			}
			cells = append(cells, neighbourCells(t,
				Cell{Place: first, DataNode: dn, DOP: 1, Point: drive.Point{Placement: placements[0]}}, r, len(cells))...)
		}
	}
	if skipped > 0 {
		notes = append(notes, fmt.Sprintf("%s left out: more than %d streams per logical CPU of their placement",
			Count(skipped/spec.Repeat, "stream count and placement pair"), spec.StreamsPerCPU))
	}
	if len(cells) == 0 {
		return nil, nil, fmt.Errorf(
			"planning sweep: every stream count exceeds %d per logical CPU of every placement (try lower --streams)",
			spec.StreamsPerCPU)
	}
	return cells, notes, nil
}

func (s Spec) check() error {
	var errs []error
	if len(s.Streams) == 0 {
		errs = append(errs, errors.New("planning sweep: no stream counts (try --streams 1,2,4)"))
	}
	for _, n := range s.Streams {
		if n < 1 {
			errs = append(errs, fmt.Errorf("planning sweep: %d streams is not a positive count (try --streams 1,2,4)", n))
			break
		}
	}
	for _, d := range s.DOPs {
		if d < 1 {
			errs = append(errs, fmt.Errorf("planning sweep: DOP %d is not a positive count (try --dop 1,2)", d))
			break
		}
	}
	if s.Repeat < 1 {
		errs = append(errs, fmt.Errorf("planning sweep: %d repeats is not a positive count (try --repeat 1)", s.Repeat))
	}
	if s.DataNode < -1 {
		errs = append(errs, setting.Errorf("data-node",
			"\"%d\" is not a NUMA node (want a node number, or -1 to leave the pages where they are)", s.DataNode))
	}
	seen := map[string]bool{}
	for _, p := range s.Placements {
		if seen[p] {
			name := strconv.Quote(p)
			if p == "" {
				name = "the empty selector (all CPUs)"
			}
			errs = append(errs,
				setting.Errorf("placement", "%q names %s more than once (want selectors separated by ';', e.g. 'smt=on;smt=off')",
					strings.Join(s.Placements, ";"), name))
			break
		}
		seen[p] = true
	}
	return errors.Join(errs...)
}

// MachineNotes say what a machine cannot show: local against remote data
// with one node, SMT on against off without SMT.
func MachineNotes(t *result.Topology) []string {
	var notes []string
	if len(t.Nodes) < 2 {
		first := 0
		if len(t.Nodes) > 0 {
			first = t.Nodes[0].ID
		}
		notes = append(notes, "one NUMA node: local and remote data cannot be compared here; data stays on node "+
			strconv.Itoa(first))
	}
	if t.ThreadsPerCore() < 2 {
		notes = append(notes, "no SMT (one logical CPU per core): smt=off selects the same CPUs as smt=on")
	}
	return notes
}
