package evalplan

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/setting"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/workload/pages"
	"github.com/numalab/numalab/internal/workload/transtats"
)

// Plan is what eval's budget buys on a machine: a function of both and
// of whether a MariaDB server is installed.
type Plan struct {
	ProbeQuick bool
	Warehouses int
	Streams    []int    // up to 2× the largest placement's logical CPUs
	Placements []string // SMT on and off, local and remote data, where the machine has them
	// StreamsPerCPU caps the streams of each placement (see sweep.Spec).
	StreamsPerCPU int
	OLTPWarmup    time.Duration
	OLTPCell      time.Duration
	Repeat        int
	// Neighbour runs the neighbour cells (sweep.Spec.Neighbour): on a machine
	// of one node and several CPUs, a pair a repeat, one with a memory-
	// bandwidth neighbour and one with a control neighbour, the model's
	// held-out point at another latency.
	// NeighbourPairs keeps the pairs to the first that many repeats
	// (shrink); 0: every repeat.
	Neighbour      bool
	NeighbourPairs int
	Rows           int64
	DOPs           []int // transtats' and TPC-H's: 1, 2, 4, … and the logical CPUs
	// SMTDOP are the SMT × DOP step's DOPs (eval's smtdop.go): 1, the physical
	// cores and the logical CPUs; nil where the machine has no SMT.
	SMTDOP    []int
	SMTNoRoom bool // the machine has SMT, and the budget no room for that step
	QueryWarm time.Duration
	QueryCell time.Duration
	// QueryRepeat repeats every transtats cell: the DOP findings compare
	// DOP 1 with the best DOP over these repeats (see Repeats).
	QueryRepeat int
	// The null transaction: a prepared no-op on SQLite, and on PostgreSQL
	// every pairing the machine offers over NullTransports.
	NullTransports []string
	NullRepeat     int
	NullWarm       time.Duration
	NullCell       time.Duration
	// TPC-H on DuckDB: the power test of TPCHQueries at every DOP; none
	// when the budget left no room for it (shrink).
	TPCHSF      float64
	TPCHQueries []int
	TPCHRepeat  int
	TPCHWarm    time.Duration
	TPCHCell    time.Duration
	// PagePairs pairs of PageCell cells, the tpcc-ro image in 4 KiB then
	// in 2 MiB pages: the model's two latency points (run pages).
	PagePairs int
	PageCell  time.Duration
	// ServerPages is the server engine whose own buffers a second
	// page-size step maps in both page sizes, for its own fit (run pages
	// --engine). The plan gives it time where the budget has room beside
	// four repeats (ServerPagesPlanned; else ServerPagesBudget is the
	// least budget that has); unplanned, it runs when what is left of the
	// budget holds it.
	ServerPages        string
	ServerPagesPlanned bool
	ServerPagesBudget  time.Duration
	// Server is the steps of the server engine beside PostgreSQL
	// (MariaDB): where its server can be had (mariaserver.Installed) and
	// the budget has room (shrink), its null transaction as PostgreSQL's
	// (NullTransports, NullRepeat) and a short tpcc-ro step on a
	// throwaway server.
	Server ServerSteps
	// Server.Budget, SMTDOPBudget and TPCHBudget, when that step was left
	// out for want of budget, are the least whole-minute budget up to
	// RoomSearched (an hour, or twice the budget if more) that has room
	// for it on this machine (0: none has, or the step was not left out
	// for budget).
	SMTDOPBudget, TPCHBudget, RoomSearched time.Duration
}

// ServerSteps are a server engine's own steps in a plan: when On, its
// null transaction and tpcc-ro on a throwaway server with one warehouse,
// Streams, one repeat, Warm+Cell per cell.
type ServerSteps struct {
	Engine     string // the engine registry's name
	On         bool
	Streams    []int
	Warm, Cell time.Duration
	Budget     time.Duration // as SMTDOPBudget, for these steps
}

// ProbeTime is what the plan allows the memory probe.
func (p Plan) ProbeTime() time.Duration {
	if p.ProbeQuick {
		return probeQuick
	}
	return probeFull
}

// Estimated fixed costs on a 2-vCPU guest, from measured runs: the quick
// probe, loading one warehouse, loading a million transtats rows on DuckDB
// (the 1.44M-row dimension included), loading TPC-H at SF 0.1 on DuckDB
// (865,377 rows at 84,000 rows/s), starting a throwaway PostgreSQL server
// (initdb and boot: 4 s idle, 15 s under a load of 13), and per-cell setup.
const (
	probeQuick = 15 * time.Second
	probeFull  = 90 * time.Second
	loadWH     = 4 * time.Second
	loadMRows  = 8 * time.Second
	loadSF01   = 10 * time.Second
	pgStart    = 10 * time.Second
	// pgLoadWH is tpcc-ro's one warehouse loaded into a throwaway
	// PostgreSQL server and prewarmed: 'run pages --engine postgres
	// --pairs 1 --cell 100ms' (two servers, about a second of cells) took
	// 43 s here under a load of 16.
	pgLoadWH = 12 * time.Second
	// myStart is a throwaway MariaDB server's start (mariadb-install-db
	// and boot), myLoadWH tpcc-ro's one warehouse loaded into it: 'run
	// oltp --engine mariadb --warehouses 1 --streams 1,2' with two 1.5 s
	// cells took 34 s in all here (the load 599,011 rows at 21,000
	// rows/s, on a machine shared with other work).
	myStart  = 10 * time.Second
	myLoadWH = 25 * time.Second
	// CellSetup is what a cell takes beside its warm-up and window.
	CellSetup = 500 * time.Millisecond
	// neighbourSetup is a neighbour cell's extra, the control's as the
	// bandwidth neighbour's: linking its chain, timing it twice and
	// starting the neighbour (4.5 to 6.7 s measured with the bandwidth
	// neighbour).
	neighbourSetup = 6 * time.Second
	// MinBudget and MaxBudget bound the budget eval accepts.
	MinBudget = 2 * time.Minute
	MaxBudget = 7 * 24 * time.Hour
)

// minPairs is the fewest neighbour pairs shrink keeps before it takes
// repeats: two give the other latency's ratio a median of two.
const minPairs = 2

// Repeats is how often eval runs each OLTP and transtats cell when
// the budget allows, and each null cell always. The findings compare
// cells by a U test over their repeats (stream counts, DOP 1 against
// another DOP, one client/backend pairing against another), and with 3
// a side its smallest p is 0.10: it could never show a difference at
// p ≤ 0.05. With 4 a side it is 0.029.
const Repeats = 4

// streamsPerCPU: beyond two streams per logical CPU a cell measures
// queueing, not the hardware.
const streamsPerCPU = 2

// minCell is the shortest OLTP cell, warm-up included, that eval
// plans; minQueryCell the shortest transtats cell: P1 takes 0.75 s
// on an idle 2-vCPU guest (and 2 to 3 s under a load of 10), and a cell's
// queries per hour count the queries that finished in its window, so a
// window of fewer than about five says little.
const (
	minCell      = 3 * time.Second
	minQueryCell = 5 * time.Second
)

// tpchQueries are the TPC-H queries eval sweeps over DOP: the ones
// that take longest, so that parallelism has work to split, most telling
// first (a budget under 15 minutes takes the first three). Q21 reads
// lineitem three times with EXISTS and NOT EXISTS; Q9 joins six tables
// with a LIKE on part; Q1 scans and aggregates all of lineitem (the
// query whose speedup is closest to ideal where any is); Q18 groups all
// of lineitem for an IN subquery; Q13 is customer's outer join to orders
// with a NOT LIKE and two levels of grouping. Q9, Q13, Q18 and Q21 were
// among the six slowest of the 22 in both of two DOP-1 passes on DuckDB
// at SF 0.1 on the 2-vCPU guest (30 to 210 ms each), and they and Q1 are
// the long queries of published power tests.
var tpchQueries = []int{21, 9, 1, 18, 13}

// HaveMariaDB says whether a MariaDB server can be had here; nil when
// one can (a variable, so that eval's tests and these can stand in for
// a machine with or without one).
var HaveMariaDB = mariaserver.Installed

// NewPlan plans eval for budget on machine t, with MariaDB's steps where
// its server is installed (HaveMariaDB) and the budget has room for them;
// where it has not, MariaDBBudget says which would (and so for the
// other steps left out for budget). Where t has several
// NUMA nodes with CPUs the data lives on the first, and streams run on it
// (local) and on the node farthest from it (remote, see sweep.FarNode).
func NewPlan(budget time.Duration, t *result.Topology) (Plan, error) {
	p, err := planFor(budget, t)
	if errors.Is(err, errTooSmall) {
		if least := LeastBudget(t); least > budget {
			return p, fmt.Errorf("%w (--budget %v is the least that has room on this machine)", err, least)
		}
	}
	if err != nil {
		return p, err
	}
	// A step left out for want of budget gets the least whole-minute
	// budget up to an hour (or twice this one) that has room for it, to
	// say so.
	p.RoomSearched = max(time.Hour, 2*budget).Truncate(time.Minute)
	least := func(has func(Plan) bool) time.Duration {
		for b := budget.Truncate(time.Minute) + time.Minute; b <= p.RoomSearched; b += time.Minute {
			if q, err := planFor(b, t); err == nil && has(q) {
				return b
			}
		}
		return 0
	}
	if !p.Server.On && HaveMariaDB() == nil {
		p.Server.Budget = least(func(q Plan) bool { return q.Server.On })
	}
	if !p.ServerPagesPlanned {
		p.ServerPagesBudget = least(func(q Plan) bool { return q.ServerPagesPlanned })
	}
	if p.SMTNoRoom {
		p.SMTDOPBudget = least(func(q Plan) bool { return len(q.SMTDOP) > 0 })
	}
	if len(p.TPCHQueries) == 0 {
		p.TPCHBudget = least(func(q Plan) bool { return len(q.TPCHQueries) > 0 })
	}
	return p, nil
}

// errTooSmall is planFor's error for a budget that fits no plan on the
// machine.
var errTooSmall = errors.New("give a larger budget")

// LeastBudget is the least budget, in steps of 10 s from MinBudget up to
// an hour, that eval can plan on machine t; 0 when none can.
func LeastBudget(t *result.Topology) time.Duration {
	for b := MinBudget; b <= time.Hour; b += 10 * time.Second {
		if _, err := planFor(b, t); err == nil {
			return b
		}
	}
	return 0
}

// planFor is NewPlan without the search for the budgets of the steps
// left out.
func planFor(budget time.Duration, t *result.Topology) (Plan, error) {
	if budget < MinBudget {
		return Plan{},
			setting.Errorf("budget", "%q is too short: eval needs at least %v (try --budget 5m)", budget, MinBudget)
	}
	if budget > MaxBudget {
		return Plan{}, setting.Errorf("budget",
			"%q is more than eval can plan: at most %v (cells are capped at 2m each; try --budget 1h)", budget, MaxBudget)
	}
	n := len(t.CPUs)
	p := Plan{ProbeQuick: budget < 15*time.Minute, Warehouses: 1, Rows: 1_000_000, StreamsPerCPU: streamsPerCPU,
		Neighbour: len(t.Nodes) < 2 && n > 1,
		// Below 15 minutes: the unix socket only, 1 s cells; TPC-H at
		// SF 0.05 (three 122,880-row groups of lineitem, DuckDB's unit of
		// parallel work: a smaller SF has one and cannot run in parallel).
		NullTransports: []string{"unix"}, NullWarm: 500 * time.Millisecond, NullCell: time.Second,
		TPCHSF: 0.05, TPCHQueries: tpchQueries[:3], TPCHRepeat: 1,
		PagePairs: 4, PageCell: 650 * time.Millisecond, ServerPages: "postgres", ServerPagesPlanned: true,
		Server: ServerSteps{Engine: "mariadb", On: HaveMariaDB() == nil, Streams: []int{1},
			Warm: 500 * time.Millisecond, Cell: time.Second}}
	if n > 1 {
		p.Server.Streams = append(p.Server.Streams, n)
	}
	switch {
	case budget >= time.Hour:
		p.Warehouses, p.Rows, p.TPCHSF, p.TPCHQueries, p.TPCHRepeat = 8, 20_000_000, 1, tpchQueries, 3
		p.NullTransports, p.NullWarm, p.NullCell = []string{"unix", "tcp"}, time.Second, 5*time.Second
	case budget >= 15*time.Minute:
		p.Warehouses, p.Rows, p.TPCHSF, p.TPCHQueries, p.TPCHRepeat = 2, 5_000_000, 0.1, tpchQueries, 3
		p.NullTransports, p.NullWarm, p.NullCell = []string{"unix", "tcp"}, time.Second, 2*time.Second
	}
	// A TPC-H query of these at SF s takes up to about s × 2 s on one
	// core (Q21 at SF 0.1: 0.1 to 0.2 s): a window of five of the
	// slowest, at least a second.
	p.TPCHCell = max(time.Second, time.Duration(p.TPCHSF*10*float64(time.Second)))
	p.TPCHWarm = p.TPCHCell / 2
	for d := 1; d <= n; d *= 2 {
		p.DOPs = append(p.DOPs, d)
	}
	if p.DOPs[len(p.DOPs)-1] != n {
		p.DOPs = append(p.DOPs, n)
	}
	smtDOP, err := transtats.SMTDOPs(t)
	if err != nil {
		return Plan{}, err
	}
	p.SMTDOP = smtDOP
	smt := []string{""}
	if t.ThreadsPerCore() > 1 {
		smt = []string{"smt=on", "smt=off"}
	}
	data := []string{""}
	if local, ok := firstNodeWithCPUs(t); ok {
		if remote := sweep.FarNode(t, local); remote != local {
			data = []string{fmt.Sprintf("node=%d,data=node%d", local, local), fmt.Sprintf("node=%d,data=node%d", remote, local)}
		}
	}
	widest := 0
	for _, d := range data {
		for _, s := range smt {
			sel := strings.Trim(d+","+s, ",")
			pl, err := place.Resolve(t, sel)
			if err != nil {
				return Plan{}, fmt.Errorf("planning eval: %w", err)
			}
			widest = max(widest, len(pl.CPUs))
			p.Placements = append(p.Placements, sel)
		}
	}
	for s := 1; s <= streamsPerCPU*widest; s *= 2 {
		p.Streams = append(p.Streams, s)
	}
	// The null and TPC-H steps have cells of fixed length; OLTP and
	// reporting share what is left after them and the fixed costs.
	fixed := func() time.Duration {
		f := probeQuick + time.Duration(p.Warehouses)*loadWH + time.Duration(p.Rows/1_000_000)*loadMRows +
			pgStart + p.PageTime()
		if !p.ProbeQuick {
			f += probeFull - probeQuick
		}
		if len(p.TPCHQueries) > 0 {
			f += time.Duration(p.TPCHSF*10*float64(loadSF01)) + p.tpchTime()
		}
		if p.ServerPagesPlanned {
			f += p.ServerPageTime()
		}
		if p.Server.On {
			f += 2*myStart + myLoadWH + time.Duration(len(p.Server.Streams))*(p.Server.Warm+p.Server.Cell+CellSetup)
		}
		return f
	}
	// Every OLTP, transtats and null cell is repeated Repeats times,
	// so that the findings compare repeats by a test, with their spread;
	// where the budget cannot give that many OLTP and transtats cells
	// their least length, less (shrink).
	p.Repeat, p.QueryRepeat, p.NullRepeat = Repeats, Repeats, Repeats
	var left time.Duration
	var oltpCells, queryCells int
	var oltpNeed, queryNeed time.Duration
	for {
		left = budget/100*85 - fixed() - p.nullTime(t)
		cells, _, err := sweep.Resolve(t, p.OLTPSpec(), true)
		if err != nil {
			return Plan{}, fmt.Errorf("planning eval: %w", err)
		}
		oltpCells, queryCells = len(cells), 2*len(p.DOPs)*p.QueryRepeat+p.smtDOPCells()
		oltpNeed = time.Duration(oltpCells) * (minCell + CellSetup)
		oltpNeed += p.neighbourSetups()
		queryNeed = time.Duration(queryCells) * (minQueryCell + CellSetup)
		if oltpNeed+queryNeed <= left || !p.shrink() {
			break
		}
	}
	if oltpNeed+queryNeed > left {
		return Plan{}, setting.Errorf("budget", "%q leaves %v for %d OLTP and %d query cells on this machine, after "+
			"the fixed costs and the null and TPC-H steps; they need %v at least: %w",
			budget, max(left, 0).Round(time.Second), oltpCells, queryCells,
			(oltpNeed + queryNeed).Round(time.Second), errTooSmall)
	}
	// What is left over lengthens the cells, half to each step.
	spare := (left - oltpNeed - queryNeed) / 2
	perOLTP := minCell + spare/time.Duration(oltpCells)
	perQuery := minQueryCell + spare/time.Duration(queryCells)
	// Rounded down (a tenth of a second for the window), so that the
	// cells never add up to more than was planned.
	p.OLTPWarmup = min(max(perOLTP/6, time.Second), 10*time.Second).Truncate(time.Second)
	p.OLTPCell = min(perOLTP-p.OLTPWarmup, 2*time.Minute).Truncate(100 * time.Millisecond)
	p.QueryWarm = min(max(perQuery/6, time.Second), 10*time.Second).Truncate(time.Second)
	p.QueryCell = min(perQuery-p.QueryWarm, 2*time.Minute).Truncate(100 * time.Millisecond)
	return p, nil
}

// shrink makes the plan one step smaller and says whether it could:
// first MariaDB's steps are left out (they never cost the other steps a
// repeat), then the server's page-size step's time (it still runs when
// what is left of the budget holds it), then the neighbour pairs go down to minPairs (the other
// latency's ratio is a median over pairs; the findings' U tests need
// every repeat), then one repeat fewer, OLTP's fourth, transtats', the null
// cells' down to 3, then one of OLTP and transtats each in turn, then
// the null cells' down to 1; last, at the smallest budgets on machines of
// many cells, the SMT × DOP step and then the TPC-H step are left out
// (SMTDOP and TPCHQueries empty), and then the neighbour pairs.
func (p *Plan) shrink() bool {
	switch {
	case p.Server.On:
		p.Server.On = false
	case p.ServerPagesPlanned:
		p.ServerPagesPlanned = false
	case p.Pairs() > minPairs:
		p.NeighbourPairs = p.Pairs() - 1
	case p.Repeat > 3:
		p.Repeat--
	case p.QueryRepeat > 3:
		p.QueryRepeat--
	case p.NullRepeat > 3:
		p.NullRepeat--
	case p.Repeat >= p.QueryRepeat && p.Repeat > 1:
		p.Repeat--
	case p.QueryRepeat > 1:
		p.QueryRepeat--
	case p.NullRepeat > 1:
		p.NullRepeat--
	case len(p.SMTDOP) > 0:
		p.SMTDOP, p.SMTNoRoom = nil, true
	case len(p.TPCHQueries) > 0:
		p.TPCHQueries = nil
	case p.Neighbour:
		p.Neighbour = false
	default:
		return false
	}
	return true
}

// nullTime is what the null steps' cells take on t: SQLite's, and
// PostgreSQL's (and MariaDB's) for every pairing t offers over every
// transport (the servers' starts are fixed costs).
func (p Plan) nullTime(t *result.Topology) time.Duration {
	pairs := 1 // same-cpu
	if t.ThreadsPerCore() > 1 {
		pairs++
	}
	if len(t.Cores) > 1 {
		pairs++
	}
	if len(t.Nodes) > 1 {
		pairs++
	}
	servers := 1
	if p.Server.On {
		servers++
	}
	cells := p.NullRepeat * (1 + servers*pairs*len(p.NullTransports))
	return time.Duration(cells) * p.nullCell()
}

// nullCell is one null cell with its setup.
func (p Plan) nullCell() time.Duration { return p.NullWarm + p.NullCell + CellSetup }

// queryCell is one transtats cell with its setup.
func (p Plan) queryCell() time.Duration { return p.QueryWarm + p.QueryCell + CellSetup }

// The steps' times as planned (planFor fits them into the budget): what
// eval sets against what is left before each step (budget.go).

// NullSQLiteTime is the null step on SQLite: a cell a repeat.
func (p Plan) NullSQLiteTime() time.Duration { return time.Duration(p.NullRepeat) * p.nullCell() }

// NullPGTime is the null step on PostgreSQL: its server's start and its
// cells.
func (p Plan) NullPGTime(t *result.Topology) time.Duration { return p.nullServerTime(t, pgStart) }

// NullMyTime is the null step on MariaDB, as PostgreSQL's; 0 when the
// plan left it out.
func (p Plan) NullMyTime(t *result.Topology) time.Duration {
	return p.ifMariaDB(p.nullServerTime(t, myStart))
}

// nullServerTime is a server's null step: its start (start) and a cell
// per pairing, transport and repeat.
func (p Plan) nullServerTime(t *result.Topology, start time.Duration) time.Duration {
	return start + (p.nullTime(t)-time.Duration(p.NullRepeat)*p.nullCell())/time.Duration(1+b2i(p.Server.On))
}

// OLTPTime is the tpcc-ro step on SQLite: its load and cells.
func (p Plan) OLTPTime(t *result.Topology) time.Duration {
	d := time.Duration(p.Warehouses) * loadWH
	if cells, _, err := sweep.Resolve(t, p.OLTPSpec(), true); err == nil {
		d += time.Duration(len(cells)) * (p.OLTPWarmup + p.OLTPCell + CellSetup)
	}
	return d + p.neighbourSetups()
}

// neighbourSetups are the neighbour cells' extras: a pair a repeat
// (sweep.Spec.Neighbour), each cell with its setup.
func (p Plan) neighbourSetups() time.Duration {
	if !p.Neighbour {
		return 0
	}
	return time.Duration(2*p.Pairs()) * neighbourSetup
}

// Pairs is how many repeats have a neighbour pair.
func (p Plan) Pairs() int {
	if !p.Neighbour {
		return 0
	}
	if p.NeighbourPairs > 0 {
		return min(p.NeighbourPairs, p.Repeat)
	}
	return p.Repeat
}

// MyOLTPTime is the tpcc-ro step on MariaDB: its server, load and
// cells; 0 when the plan left it out.
func (p Plan) MyOLTPTime() time.Duration {
	return p.ifMariaDB(myStart + myLoadWH + time.Duration(len(p.Server.Streams))*(p.Server.Warm+p.Server.Cell+CellSetup))
}

// ifMariaDB is d where the plan has MariaDB's steps, else 0: a step the
// plan left out says why itself (eval's mariaDBStep).
func (p Plan) ifMariaDB(d time.Duration) time.Duration {
	if p.Server.On {
		return d
	}
	return 0
}

// QueryTime is the transtats step: its load and cells.
func (p Plan) QueryTime() time.Duration {
	return time.Duration(p.Rows/1_000_000)*loadMRows + time.Duration(2*len(p.DOPs)*p.QueryRepeat)*p.queryCell()
}

// TPCHStepTime is the TPC-H step: its load and cells; 0 when the plan
// left it out (the step says why itself).
func (p Plan) TPCHStepTime() time.Duration {
	if len(p.TPCHQueries) == 0 {
		return 0
	}
	return time.Duration(p.TPCHSF*10*float64(loadSF01)) + p.tpchTime()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// PageTime is what the page-size step takes as planned (its repeats
// left out: pages.RunConfig.Time).
func (p Plan) PageTime() time.Duration {
	return pages.RunConfig{Pairs: p.PagePairs, Cell: p.PageCell}.Time()
}

// ServerPageTime is what the server's page-size step takes: two servers
// started and loaded, and the cells.
func (p Plan) ServerPageTime() time.Duration { return 2*(pgStart+pgLoadWH) + p.PageTime() }

// tpchTime is what the TPC-H step's cells take: each also captures its
// plan, within the cell's setup.
func (p Plan) tpchTime() time.Duration {
	cells := len(p.TPCHQueries) * len(p.DOPs) * p.TPCHRepeat
	return time.Duration(cells) * (p.TPCHWarm + p.TPCHCell + CellSetup)
}

// OLTPSpec is the OLTP step's sweep.
func (p Plan) OLTPSpec() sweep.Spec {
	return sweep.Spec{Streams: p.Streams, Placements: p.Placements, Repeat: p.Repeat, DataNode: -1,
		StreamsPerCPU: p.StreamsPerCPU, Neighbour: p.Neighbour, NeighbourPairs: p.NeighbourPairs}
}

// smtDOPCells is how many cells the SMT × DOP step runs.
func (p Plan) smtDOPCells() int {
	return len(transtats.SMTPlacements) * len(p.SMTDOP) * p.QueryRepeat
}

func firstNodeWithCPUs(t *result.Topology) (int, bool) {
	for _, n := range t.Nodes {
		if len(n.CPUs) > 0 {
			return n.ID, true
		}
	}
	return 0, false
}
