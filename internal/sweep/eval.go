package sweep

import (
	"fmt"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
)

// EvalPlan is what eval's budget buys on a machine: a pure function of
// both.
type EvalPlan struct {
	ProbeQuick bool
	Warehouses int
	Streams    []int    // up to 2× the largest placement's logical CPUs
	Placements []string // SMT on and off, local and remote data, where the machine has them
	// StreamsPerCPU caps the streams of each placement (see Spec).
	StreamsPerCPU int
	OLTPWarmup    time.Duration
	OLTPCell      time.Duration
	Repeat        int
	// Neighbour runs the neighbour cells (Spec.Neighbour): on a machine
	// of one node and several CPUs, the model's held-out point.
	Neighbour bool
	Rows      int64
	DOPs      []int
	QueryWarm time.Duration
	QueryCell time.Duration
}

// ProbeTime is what the plan allows the memory probe.
func (p EvalPlan) ProbeTime() time.Duration {
	if p.ProbeQuick {
		return evalProbeQuick
	}
	return evalProbeFull
}

// Estimated fixed costs on a 2-vCPU guest, from measured runs: the quick
// probe, loading one warehouse, loading a million transtats rows on DuckDB
// (the 1.44M-row dimension included), and per-cell setup.
const (
	evalProbeQuick = 15 * time.Second
	evalProbeFull  = 90 * time.Second
	evalLoadWH     = 4 * time.Second
	evalLoadMRows  = 8 * time.Second
	evalCellSetup  = 500 * time.Millisecond
	// evalNeighbourSetup is a neighbour cell's extra: linking its chain,
	// timing it twice and starting the neighbour (4.5 to 6.7 s measured).
	evalNeighbourSetup = 6 * time.Second
	// EvalMinBudget and EvalMaxBudget bound the budget eval accepts.
	EvalMinBudget = 2 * time.Minute
	EvalMaxBudget = 7 * 24 * time.Hour
)

// evalRepeat is how often eval runs each OLTP cell when the budget allows.
const evalRepeat = 3

// evalStreamsPerCPU: beyond two streams per logical CPU a cell measures
// queueing, not the hardware.
const evalStreamsPerCPU = 2

// PlanEval plans eval for budget on machine t. Where t has several NUMA
// nodes with CPUs the data lives on the first, and streams run on it
// (local) and on the node farthest from it (remote, see FarNode).
func PlanEval(budget time.Duration, t *result.Topology) (EvalPlan, error) {
	if budget < EvalMinBudget {
		return EvalPlan{}, fmt.Errorf("-budget: %q is too short: eval needs at least %v (try --budget 5m)", budget, EvalMinBudget)
	}
	if budget > EvalMaxBudget {
		return EvalPlan{}, fmt.Errorf("-budget: %q is more than eval can plan: at most %v (cells are capped at 2m each; try --budget 1h)", budget, EvalMaxBudget)
	}
	n := len(t.CPUs)
	p := EvalPlan{ProbeQuick: budget < 15*time.Minute, Warehouses: 1, Rows: 1_000_000, StreamsPerCPU: evalStreamsPerCPU,
		Neighbour: len(t.Nodes) < 2 && n > 1}
	switch {
	case budget >= time.Hour:
		p.Warehouses, p.Rows = 8, 20_000_000
	case budget >= 15*time.Minute:
		p.Warehouses, p.Rows = 2, 5_000_000
	}
	for d := 1; d <= n; d *= 2 {
		p.DOPs = append(p.DOPs, d)
	}
	if p.DOPs[len(p.DOPs)-1] != n {
		p.DOPs = append(p.DOPs, n)
	}
	smt := []string{""}
	if t.ThreadsPerCore() > 1 {
		smt = []string{"smt=on", "smt=off"}
	}
	data := []string{""}
	if local, ok := firstNodeWithCPUs(t); ok {
		if remote := FarNode(t, local); remote != local {
			data = []string{fmt.Sprintf("node=%d,data=node%d", local, local), fmt.Sprintf("node=%d,data=node%d", remote, local)}
		}
	}
	widest := 0
	for _, d := range data {
		for _, s := range smt {
			sel := strings.Trim(d+","+s, ",")
			pl, err := place.Resolve(t, sel)
			if err != nil {
				return EvalPlan{}, fmt.Errorf("planning eval: %w", err)
			}
			widest = max(widest, len(pl.CPUs))
			p.Placements = append(p.Placements, sel)
		}
	}
	for s := 1; s <= evalStreamsPerCPU*widest; s *= 2 {
		p.Streams = append(p.Streams, s)
	}
	// Split what is left after the fixed costs: 55% OLTP, 45% reporting.
	left := budget/100*85 - evalProbeQuick - time.Duration(p.Warehouses)*evalLoadWH - time.Duration(p.Rows/1_000_000)*evalLoadMRows
	if !p.ProbeQuick {
		left -= evalProbeFull - evalProbeQuick
	}
	// Every OLTP cell is repeated evalRepeat times, so that the findings
	// compare medians over repeats with their spread; where the budget
	// cannot give that many cells 3 s each, fewer repeats.
	var oltpCells int
	var perOLTP time.Duration
	for p.Repeat = evalRepeat; p.Repeat >= 1; p.Repeat-- {
		cells, _, err := Resolve(t, p.OLTPSpec(), true)
		if err != nil {
			return EvalPlan{}, fmt.Errorf("planning eval: %w", err)
		}
		oltpCells = len(cells)
		setup := time.Duration(0)
		if p.Neighbour {
			setup = time.Duration(p.Repeat) * evalNeighbourSetup
		}
		perOLTP = (left/100*55-setup)/time.Duration(oltpCells) - evalCellSetup
		if perOLTP >= 3*time.Second || p.Repeat == 1 {
			break
		}
	}
	queryCells := 2 * len(p.DOPs)
	perQuery := left/100*45/time.Duration(queryCells) - evalCellSetup
	if perOLTP < 3*time.Second || perQuery < 3*time.Second {
		return EvalPlan{}, fmt.Errorf("-budget: %q leaves %v per OLTP cell and %v per query cell on this machine (%d and %d cells): give a larger budget",
			budget, perOLTP.Round(time.Second), perQuery.Round(time.Second), oltpCells, queryCells)
	}
	p.OLTPWarmup = min(max(perOLTP/6, time.Second), 10*time.Second).Round(time.Second)
	p.OLTPCell = min(perOLTP-p.OLTPWarmup, 2*time.Minute).Round(time.Second)
	p.QueryWarm = min(max(perQuery/6, time.Second), 10*time.Second).Round(time.Second)
	p.QueryCell = min(perQuery-p.QueryWarm, 2*time.Minute).Round(time.Second)
	return p, nil
}

// OLTPSpec is the OLTP step's sweep.
func (p EvalPlan) OLTPSpec() Spec {
	return Spec{Streams: p.Streams, Placements: p.Placements, Repeat: p.Repeat, DataNode: -1, StreamsPerCPU: p.StreamsPerCPU, Neighbour: p.Neighbour}
}

func firstNodeWithCPUs(t *result.Topology) (int, bool) {
	for _, n := range t.Nodes {
		if len(n.CPUs) > 0 {
			return n.ID, true
		}
	}
	return 0, false
}

// FarNode is the node with CPUs farthest from node by the firmware's
// distances (the first of equals, in t.Nodes order): on 2 sockets of 2
// nodes each, a node on the other socket, not the near neighbour. Without
// distances it is the first other node with CPUs; with none, node itself.
func FarNode(t *result.Topology, node int) int {
	from := t.NodeIndex(node)
	far, farDist := node, -1
	for j, n := range t.Nodes {
		if n.ID == node || len(n.CPUs) == 0 {
			continue
		}
		d := 0
		if from >= 0 && from < len(t.Distances) && j < len(t.Distances[from]) {
			d = t.Distances[from][j]
		}
		if d > farDist {
			far, farDist = n.ID, d
		}
	}
	return far
}
