package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

const runOLTPHelp = `Usage:
  numalab run oltp [flags]
  numalab run oltp -f sweep.toml [flags]

Runs tpcc-ro, the read-only TPC-C hardware evaluation
(docs/workloads/tpcc-ro.md), on SQLite (the default), DuckDB or
PostgreSQL (--engine): a TPC-C database of --warehouses W, loaded with the
specification's row counts and checked with its consistency conditions,
driven by streams that each run Order-Status and Stock-Level 50/50 in a
closed loop, with no think time, on fully cached data.

The database is --db (default numalab-tpcc-wW.db, or .duckdb, in the
working directory): loaded if the file does not exist, reused if it is a
complete numalab TPC-C database of W warehouses, refused otherwise (numalab
never overwrites a file it did not make). On PostgreSQL it lives in schema
numalab of --dsn, or of a throwaway server numalab starts (as an
unprivileged account when run as root) and always stops; each transaction
is one round trip to a PL/pgSQL function, and each stream's backend is
pinned to the stream's CPUs. Before the sweep every table and index
is read (prewarmed); each cell records disk reads and is flagged if it read
from disk.

Every cell of streams x placements x repeats runs --warmup, then
--duration. A row per cell is printed as it goes: streams, placement, tps,
tps per physical core, p95 latency, CPU busy % of the placement's CPUs,
and whether it read from disk. The run is stored (--store) with each cell
as it is measured: per-type count, errors, mean, stdev, p50..p99.9, max,
the per-second series, CPU per logical CPU and context switches.

Placement: each stream is a goroutine locked to an OS thread pinned to the
CPUs of a selector (see 'numalab topo --select'): cpus=0-3,8  node=1
cores=4  smt=off  and combinations such as node=1,smt=off,cores=4. Several
placements are separated by ';'. With --spread (the default) stream i runs
on the i-th CPU of the placement alone (round-robin), so the selector, not
the scheduler, decides which streams share a core.

Data placement: SQLite's pages are shared by all streams through the page
cache and memory maps; a page lives on the NUMA node of the thread that
first read it. --data-node N (or data=nodeN in a placement) drops the
file's cached pages and reads them back from a thread pinned to node N and
bound to its memory, then verifies where the pages are. Driving node-N
data from streams on another node is the local-versus-remote experiment.

A sweep file (TOML) holds the same settings; flags given on the command
line override it:

  # sweep.toml
  engine     = "sqlite"
  warehouses = 4
  streams    = [1, 2, 4, 8]
  placements = ["smt=on", "smt=off"]
  data_node  = 0
  duration   = "30s"
  warmup     = "5s"
  repeat     = 3

Examples:
  numalab run oltp --warehouses 1 --streams 1,2 --duration 5s --warmup 1s
  numalab run oltp --warehouses 4 --streams 1,2,4,8 --placement 'smt=on;smt=off' --repeat 3
  numalab run oltp --placement 'node=1' --data-node 0     # remote data
  numalab run oltp --engine postgres --streams 1,2,4       # managed server
  numalab run oltp --engine postgres --dsn 'postgres://me@db1/bench'
  numalab run oltp -f sweep.toml --json > cells.json
`

// oltpConfig is everything a tpcc-ro sweep needs; it is stored with the run.
type oltpConfig struct {
	Engine     string        `toml:"engine" json:"engine"`
	DB         string        `toml:"db" json:"db"`
	DSN        string        `toml:"dsn" json:"-"` // may hold a password: never stored
	Warehouses int           `toml:"warehouses" json:"warehouses"`
	Streams    []int         `toml:"streams" json:"streams"`
	Placements []string      `toml:"placements" json:"placements"`
	Spread     bool          `toml:"spread" json:"spread"`
	DataNode   int           `toml:"data_node" json:"data_node"` // -1: not controlled
	Duration   time.Duration `toml:"duration" json:"duration_ns"`
	Warmup     time.Duration `toml:"warmup" json:"warmup_ns"`
	Repeat     int           `toml:"repeat" json:"repeat"`
	Augmented  bool          `toml:"augmented" json:"augmented"`
	Trace      int           `toml:"trace" json:"trace"` // calls recorded per stream; 0 = none
	Seed       int64         `toml:"seed" json:"seed"`
}

// maxStreamsPerCPU bounds streams: beyond it a cell measures the scheduler.
const maxStreamsPerCPU = 64

func defaultOLTPConfig() oltpConfig {
	return oltpConfig{
		Engine:     "sqlite",
		Warehouses: 1,
		Streams:    []int{1, 2, 4},
		Placements: []string{""},
		Spread:     true,
		DataNode:   -1,
		Duration:   10 * time.Second,
		Warmup:     2 * time.Second,
		Repeat:     1,
		Seed:       1,
	}
}

// oltpFlags parses run oltp's command line into a configuration: defaults,
// then the sweep file, then the flags given.
func oltpFlags(e *env, args []string) (cfg oltpConfig, storePath string, asJSON, done bool, err error) {
	cfg = defaultOLTPConfig()
	fs := newFlags(e, "run oltp", runOLTPHelp)
	file := fs.String("f", "", "sweep `file` (TOML); flags given override it")
	fs.String("engine", cfg.Engine, "engine: sqlite, duckdb or postgres")
	fs.String("db", "", "database `file` for sqlite or duckdb (default numalab-tpcc-wW.db or .duckdb)")
	fs.String("dsn", "", "PostgreSQL `DSN` to use (default: a throwaway server numalab starts and stops)")
	fs.Int("warehouses", cfg.Warehouses, "TPC-C warehouses W (about 500,000 rows and 80 MB each)")
	fs.String("streams", "1,2,4", "stream counts to sweep, e.g. 1,2,4,8")
	fs.String("placement", "", "placement selectors separated by ';', e.g. 'smt=on;smt=off' (default: all CPUs)")
	fs.Bool("spread", cfg.Spread, "pin stream i to the i-th CPU of the placement alone (false: every stream on all of them)")
	fs.Int("data-node", cfg.DataNode, "NUMA node to place the data pages on (-1: leave them where they are)")
	fs.Duration("duration", cfg.Duration, "measured window of each cell")
	fs.Duration("warmup", cfg.Warmup, "warm-up before each cell's window, excluded from every figure")
	fs.Int("repeat", cfg.Repeat, "repetitions of every cell")
	fs.Bool("augmented", false, "the augmented variant: each transaction also computes avg(i_price) over i_id < 15000")
	fs.Int("trace", 0, "record up to N calls per stream (start, end, type, stream, ok) in the store")
	fs.Int64("seed", cfg.Seed, "seed for the load and the streams' random numbers")
	sp := storeFlag(fs)
	js := fs.Bool("json", false, "print the cells as JSON on stdout (the table goes to stderr)")
	if done, err = parseFlags(e, fs, args); done {
		return cfg, "", false, true, err
	}
	if err = noArgs(fs); err != nil {
		return cfg, "", false, true, err
	}
	if *file != "" {
		md, err := toml.DecodeFile(*file, &cfg)
		if err != nil {
			return cfg, "", false, true, fmt.Errorf("-f: reading sweep file %s: %w", *file, err)
		}
		if un := md.Undecoded(); len(un) > 0 {
			return cfg, "", false, true, fmt.Errorf("-f: %s: unknown setting %q (see 'numalab run oltp --help' for the names)", *file, un[0].String())
		}
	}
	var ferr error
	fs.Visit(func(f *flag.Flag) {
		v := f.Value.String()
		var err error
		switch f.Name {
		case "engine":
			cfg.Engine = v
		case "db":
			cfg.DB = v
		case "dsn":
			cfg.DSN = v
		case "warehouses":
			cfg.Warehouses, err = strconv.Atoi(v)
		case "streams":
			cfg.Streams, err = intList("streams", v, 1)
		case "placement":
			cfg.Placements = strings.Split(v, ";")
		case "spread":
			cfg.Spread = v == "true"
		case "data-node":
			cfg.DataNode, err = strconv.Atoi(v)
		case "duration":
			cfg.Duration, err = time.ParseDuration(v)
		case "warmup":
			cfg.Warmup, err = time.ParseDuration(v)
		case "repeat":
			cfg.Repeat, err = strconv.Atoi(v)
		case "augmented":
			cfg.Augmented = v == "true"
		case "trace":
			cfg.Trace, err = strconv.Atoi(v)
		case "seed":
			cfg.Seed, err = strconv.ParseInt(v, 10, 64)
		}
		if err != nil && ferr == nil {
			ferr = err
		}
	})
	if ferr != nil {
		return cfg, "", false, true, ferr
	}
	if cfg.DB == "" && cfg.Engine != "postgres" {
		cfg.DB = fmt.Sprintf("numalab-tpcc-w%d.db", cfg.Warehouses)
		if cfg.Engine == "duckdb" {
			cfg.DB = fmt.Sprintf("numalab-tpcc-w%d.duckdb", cfg.Warehouses)
		}
	}
	return cfg, *sp, *js, false, cfg.check()
}

// check validates everything that does not need the machine.
func (c *oltpConfig) check() error {
	var errs []error
	if !slices.Contains(engine.Engines, c.Engine) {
		errs = append(errs, badFlag("engine", c.Engine, "is not an engine: want sqlite, duckdb or postgres"))
	}
	if c.DSN != "" && c.Engine != "postgres" {
		errs = append(errs, badFlag("dsn", result.Redact(c.DSN), "is for --engine postgres"))
	}
	if c.Warehouses <= 0 {
		errs = append(errs, badFlag("warehouses", strconv.Itoa(c.Warehouses), "is not a positive count: want 1 or more"))
	} else if err := tpcc.CheckFits(c.Engine, engine.Options{Path: c.DB, DSN: c.DSN}, c.Warehouses); err != nil {
		errs = append(errs, badFlag("warehouses", strconv.Itoa(c.Warehouses), "could never be loaded here: "+err.Error()))
	}
	if len(c.Streams) == 0 {
		errs = append(errs, badFlag("streams", "", "is empty: want e.g. 1,2,4"))
	}
	if maxS := maxStreamsPerCPU * runtime.NumCPU(); slices.Max(append([]int{0}, c.Streams...)) > maxS {
		errs = append(errs, badFlag("streams", fmt.Sprint(c.Streams), fmt.Sprintf("asks for more than %d streams (%d per logical CPU): beyond that a cell measures the scheduler", maxS, maxStreamsPerCPU)))
	}
	if slices.Min(append([]int{1}, c.Streams...)) < 1 {
		errs = append(errs, badFlag("streams", fmt.Sprint(c.Streams), "has a count below 1: want e.g. 1,2,4"))
	}
	if c.Duration <= 0 {
		errs = append(errs, badFlag("duration", c.Duration.String(), "is not positive: want e.g. 30s"))
	}
	if c.Warmup < 0 {
		errs = append(errs, badFlag("warmup", c.Warmup.String(), "is negative: want e.g. 5s or 0s"))
	}
	if c.Repeat < 1 {
		errs = append(errs, badFlag("repeat", strconv.Itoa(c.Repeat), "is not a positive count"))
	}
	if c.Trace < 0 {
		errs = append(errs, badFlag("trace", strconv.Itoa(c.Trace), "is negative: want a number of calls per stream, or 0"))
	}
	if len(c.Placements) == 0 {
		c.Placements = []string{""}
	}
	return errors.Join(errs...)
}

// oltpCell is one planned cell with its placement resolved.
type oltpCell struct {
	point    drive.Point
	place    place.Placement
	dataNode int
}

// planOLTP resolves every placement on the machine before anything runs,
// so a selector the machine cannot satisfy fails at once.
func planOLTP(cfg oltpConfig, t *result.Topology) ([]oltpCell, []string, error) {
	points, err := drive.Sweep(cfg.Streams, cfg.Placements, cfg.Repeat)
	if err != nil {
		return nil, nil, err
	}
	resolved := map[string]place.Placement{}
	for _, sel := range cfg.Placements {
		p, err := place.Resolve(t, sel)
		if err != nil {
			return nil, nil, fmt.Errorf("-placement: %w", err)
		}
		resolved[sel] = p
	}
	if cfg.DataNode >= 0 && t.NodeIndex(cfg.DataNode) < 0 {
		var ids []string
		for _, n := range t.Nodes {
			ids = append(ids, strconv.Itoa(n.ID))
		}
		return nil, nil, badFlag("data-node", strconv.Itoa(cfg.DataNode), fmt.Sprintf("is not a NUMA node of this machine (it has node %s)", strings.Join(ids, ", ")))
	}
	cells := make([]oltpCell, len(points))
	for i, pt := range points {
		p := resolved[pt.Placement]
		dn := cfg.DataNode
		if p.DataNode >= 0 {
			dn = p.DataNode
		}
		cells[i] = oltpCell{point: pt, place: p, dataNode: dn}
		if cfg.Engine == "postgres" && dn != cells[0].dataNode {
			return nil, nil, fmt.Errorf("-placement: the PostgreSQL server's memory is bound to one node when it starts: give one data node per run (cells ask for %d and %d)", cells[0].dataNode, dn)
		}
	}
	var notes []string
	if len(t.Nodes) < 2 {
		notes = append(notes, "one NUMA node: local and remote data cannot be compared here; data stays on node "+strconv.Itoa(firstNode(t)))
	}
	if t.ThreadsPerCore() < 2 {
		notes = append(notes, "no SMT (one logical CPU per core): smt=off selects the same CPUs as smt=on")
	}
	return cells, notes, nil
}

func firstNode(t *result.Topology) int {
	if len(t.Nodes) == 0 {
		return 0
	}
	return t.Nodes[0].ID
}

func runOLTP(ctx context.Context, e *env, args []string) error {
	cfg, storePath, asJSON, done, err := oltpFlags(e, args)
	if done || err != nil {
		return err
	}
	machine, err := topo.FromSysfs("/")
	if err != nil {
		return fmt.Errorf("reading this machine's topology: %w", err)
	}
	cells, notes, err := planOLTP(cfg, machine)
	if err != nil {
		return err
	}
	prog := newProgress(e.stderr)
	defer prog.Done()
	for _, n := range notes {
		fmt.Fprintf(e.stderr, "note: %s\n", n)
	}

	rec, err := startRun(ctx, e, storePath, result.RunOLTP, cfg)
	if err != nil {
		return err
	}
	cellsDone, err := runOLTPSweep(ctx, e, prog, rec, cfg, cells, asJSON)
	headline := oltpHeadline(cellsDone)
	if ferr := rec.Finish(err, headline); ferr != nil {
		return errors.Join(err, ferr)
	}
	if asJSON {
		if cellsDone == nil {
			cellsDone = []*result.Cell{}
		}
		if jerr := writeJSON(e.stdout, cellsDone); jerr != nil {
			return errors.Join(err, jerr)
		}
	}
	return err
}

func runOLTPSweep(ctx context.Context, e *env, prog *progress, rec *recorder, cfg oltpConfig, cells []oltpCell, asJSON bool) ([]*result.Cell, error) {
	w, closeDB, ld, err := openTPCC(ctx, prog, cfg, cells[0].dataNode)
	if err != nil {
		return nil, err
	}
	defer closeDB()
	ld.Meta = w.Meta()
	if eng := w.Engine(); eng != nil {
		if info, err := eng.Describe(ctx); err == nil {
			if err := rec.Add(engine.KindInfo.Of(info)); err != nil {
				return nil, err
			}
		}
	}

	table := e.stdout
	if asJSON {
		table = e.stderr
	}
	fmt.Fprintf(table, oltpRowFormat, "cell", "streams", "placement", "data", "tps", "tps/core", "p95 ms", "CPU %", "disk")

	workloadName := "tpcc-ro"
	if cfg.Augmented {
		workloadName = "tpcc-ro-augmented"
	}
	var out []*result.Cell
	warmNode := -2 // no prewarm yet
	for i, c := range cells {
		if c.dataNode != warmNode {
			prog.Say(fmt.Sprintf("prewarming %s%s", ld.Where, nodePhrase(c.dataNode)))
			pw, err := prewarmOn(ctx, w, cfg.Engine, c.dataNode)
			if err != nil {
				return out, err
			}
			ld.Prewarm = append(ld.Prewarm, pw)
			warmNode = c.dataNode
			if err := rec.Add(tpcc.KindLoad.Of(*ld)); err != nil {
				return out, err
			}
		}
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		prog.Say(fmt.Sprintf("cell %d/%d: %d streams on %s, %v warm-up + %v", i+1, len(cells), c.point.Streams,
			c.place.String(), cfg.Warmup, cfg.Duration))
		cell, err := drive.Run(ctx, drive.Config{
			Types:      tpcc.TxNames,
			Streams:    c.point.Streams,
			CPUs:       c.place.CPUs,
			Spread:     cfg.Spread,
			Cores:      c.place.Cores,
			Warmup:     cfg.Warmup,
			Duration:   cfg.Duration,
			TraceLimit: cfg.Trace,
			Monitor:    drive.SysMonitor("/"),
			Point:      c.point,
			Procs:      cellProcs(cfg.Engine, c.point.Streams),
		}, func(ctx context.Context, stream int) (drive.Stream, error) {
			return w.OpenStream(ctx, rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(stream)+uint64(c.point.Index)<<32)))
		})
		if cell == nil {
			return out, err
		}
		cell.Engine, cell.Workload, cell.DOP, cell.DataNode = cfg.Engine, workloadName, 1, c.dataNode
		out = append(out, cell)
		if aerr := rec.Add(result.KindCell.Of(*cell)); aerr != nil {
			return out, errors.Join(err, aerr)
		}
		prog.Done()
		writeOLTPRow(table, cell)
		if err != nil {
			return out, err
		}
		if cell.Interrupted {
			return out, ctx.Err()
		}
	}
	return out, nil
}

// cellProcs is GOMAXPROCS for a cell of run oltp or run report: spare Ps
// for the embedded engines, whose streams wait in cgo; the default for
// PostgreSQL's, which wait in socket reads (see drive.Config.Procs).
func cellProcs(engineName string, streams int) int {
	if engineName == "postgres" {
		return 0
	}
	return drive.ProcsForCgo(streams)
}

func nodePhrase(n int) string {
	if n < 0 {
		return ""
	}
	return fmt.Sprintf(" onto node %d", n)
}

// openTPCC opens the run's TPC-C database, loading it first where needed
// (tpcc.Prepare). dataNode binds a managed PostgreSQL server's memory. The
// returned func closes what was opened (and stops a managed server).
func openTPCC(ctx context.Context, prog *progress, cfg oltpConfig, dataNode int) (*tpcc.Workload, func() error, *tpcc.LoadRecord, error) {
	ld := &tpcc.LoadRecord{Engine: cfg.Engine, Where: cfg.DB}
	start := time.Now()
	src := tpcc.Source{
		Engine: cfg.Engine,
		Where:  engine.Options{Path: cfg.DB, DSN: cfg.DSN},
		Load: tpcc.LoadConfig{
			Warehouses: cfg.Warehouses,
			Seed:       cfg.Seed,
			Progress: func(done, total int64) {
				el := time.Since(start).Seconds()
				prog.Say(fmt.Sprintf("loading %d warehouses into %s: %d/%d rows (%.0f%%), %.0f rows/s",
					cfg.Warehouses, ld.Where, done, total, 100*float64(done)/float64(total), float64(done)/max(el, 1e-9)))
			},
		},
		Run:    tpcc.Options{Augmented: cfg.Augmented, Seed: cfg.Seed},
		Opened: func(info engine.Info) { ld.Where = info.Where },
	}
	if dataNode >= 0 {
		src.Where.PG.MemPolicy = place.Policy{Mode: place.Bind, Nodes: []int{dataNode}}
	}
	prog.Say("opening " + cfg.Engine)
	w, st, err := tpcc.Prepare(ctx, src)
	var we *tpcc.WarehousesError
	switch {
	case errors.As(err, &we):
		return nil, nil, nil, fmt.Errorf("%w (use --warehouses %d, or another --db)", err, we.Have)
	case errors.Is(err, tpcc.ErrNotTPCC):
		return nil, nil, nil, fmt.Errorf("%w (choose another --db, or remove the file if numalab made it)", err)
	case err != nil:
		return nil, nil, nil, err
	}
	if st != nil {
		prog.Done()
		ld.Loaded, ld.Stats, ld.RowsPerSec = true, st, st.RowsPerSecond()
	}
	return w, w.Engine().Close, ld, nil
}

// prewarmOn reads the whole database from a thread pinned to node's CPUs
// and bound to its memory (node < 0: from any thread, keeping pages where
// they are), then finds where the data is: the SQLite file's page-cache
// pages, or PostgreSQL's shared memory. DuckDB's buffers cannot be located.
func prewarmOn(ctx context.Context, w *tpcc.Workload, engineName string, node int) (tpcc.PrewarmRecord, error) {
	pw := tpcc.PrewarmRecord{DataNode: node}
	start := time.Now()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with its pinning and policy
		if node >= 0 {
			if err := placeOnNode(node); err != nil {
				errc <- err
				return
			}
		}
		var err error
		pw.Stats, err = w.Prewarm(ctx, node >= 0)
		errc <- err
	}()
	if err := <-errc; err != nil {
		return pw, fmt.Errorf("prewarming tpcc on %s: %w", engineName, err)
	}
	pw.Seconds = time.Since(start).Seconds()
	switch {
	case engineName == "sqlite":
		pages, err := place.FilePageNodes(w.Path())
		if err != nil {
			return pw, err
		}
		pw.Pages = &pages
		if on := pages.PerNode[node]; node >= 0 && on < pages.Pages {
			return pw, fmt.Errorf("placing %s on node %d: only %d of %d pages landed there (%s); pages still mapped elsewhere cannot move: stop other users of the file and retry",
				w.Path(), node, on, pages.Pages, pages)
		}
	case node >= 0 && pw.Stats.Placement != nil:
		if f := pw.Stats.Placement.Local(node); f < 0.99 {
			return pw, fmt.Errorf("placing PostgreSQL's shared memory on node %d: only %.1f%% landed there", node, 100*f)
		}
	}
	return pw, nil
}

// placeOnNode pins the calling thread to node's CPUs (if it has any) and
// binds its memory to the node.
func placeOnNode(node int) error {
	t, err := topo.FromSysfs("/")
	if err != nil {
		return err
	}
	p, err := place.Resolve(t, "node="+strconv.Itoa(node))
	if err == nil {
		if err := place.Pin(p.CPUs); err != nil {
			return err
		}
	}
	return place.SetMemPolicy(place.Policy{Mode: place.Bind, Nodes: []int{node}})
}

// oltpRowFormat lays out the table printed as cells finish (rows are
// printed one at a time, so widths are fixed).
const oltpRowFormat = "%4v %7v  %-16v %-7v %9v %9v %8v %5v  %v\n"

func writeOLTPRow(w io.Writer, c *result.Cell) {
	sel := c.Placement
	if sel == "" {
		sel = "all"
	}
	data := "-"
	if c.DataNode >= 0 {
		data = "node " + strconv.Itoa(c.DataNode)
	}
	cpu, disk := "-", "-"
	if c.Usage != nil {
		cpu = fmt.Sprintf("%.0f", c.Usage.BusyPct(c.CPUs))
		disk = "cached"
		if c.Usage.ReadFromDisk {
			disk = "READ"
		}
	}
	cut := ""
	if c.Interrupted {
		cut = " (cut short)"
	}
	fmt.Fprintf(w, oltpRowFormat, c.Index, c.Streams, sel, data, fmt.Sprintf("%.0f", c.TPS), fmt.Sprintf("%.0f", c.TPSPerCore),
		fmt.Sprintf("%.3f", c.Total.P95US/1000), cpu, disk+cut)
}

// oltpHeadline is the best cell, for 'numalab runs'.
func oltpHeadline(cells []*result.Cell) string {
	var best *result.Cell
	for _, c := range cells {
		if best == nil || c.TPS > best.TPS {
			best = c
		}
	}
	if best == nil {
		return ""
	}
	return fmt.Sprintf("%.0f tps (%.0f tpm) at %d streams, %.0f tps/core", best.TPS, best.TPM, best.Streams, best.TPSPerCore)
}
