package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/workload/transtats"
)

const runReportHelp = `Usage: numalab run report --engine sqlite|duckdb|postgres [--dsn DSN | --db FILE] [--rows N]
         [--streams 1,2,4,8] [--dop 1,2,4] [--query P1|P2|P1,P2] [--duration 30s] [--warmup 5s]
         [--placement SEL] [--json] [--store FILE]

Runs the transtats reporting workload (docs/workloads/transtats.md) over
every query × streams × DOP cell: each stream runs the query in a closed
loop on its own connection for --duration after --warmup. A row is printed
per cell as it finishes: queries per hour (all streams), response time
mean, stdev, p50, p95 and p99, and the speedup against DOP 1 at the same
streams. The run is stored (kind "report") with the load's rows/s, the
engine's settings, and every cell as soon as it is measured.

Data: tran_stats of --rows rows (default 5,000,000; up to 200,000,000), its
six dimension tables and dimension, their cross join (1,440,000 rows).
SQLite and DuckDB keep it in a file (--db, default transtats-N.sqlite or
transtats-N.duckdb in the working directory), reused when it is a complete
numalab load of the same N and loaded otherwise; a file that is not
numalab's is refused, never overwritten. PostgreSQL: --dsn, numalab's own
schema there (reused when complete), or with no --dsn a throwaway server
numalab starts, loads and stops. Loads use COPY (PostgreSQL), the appender
(DuckDB) or prepared multi-row INSERTs (SQLite), and the rate is recorded.

Queries: P1 joins tran_stats to dimension on the six value columns and
counts the groups of the six ids; P2(t) counts, in the one-second window at
a random t, the rows whose resultset_size is at most their server_config's
average, grouped by the six value columns and summed.

DOP is the parallelism of one query: PostgreSQL max_parallel_workers_per_
gather = DOP-1; DuckDB threads = DOP (one pool shared by all streams);
SQLite runs a query on one thread and accepts only --dop 1. A DOP above the
machine's CPUs is refused. Each cell's plan is captured (EXPLAIN) before
and after it; a plan that changes within a cell, or between one DOP and the
next, is reported as a finding, not an error.

If the engine fails in a cell (a PostgreSQL server that dies), the cell is
stored with its errors, the run stops and is marked failed, and the cells
before it are kept. Ctrl-C ends the current cell early and keeps it.

Examples:
  numalab run report --engine duckdb --rows 1000000 --streams 1,2 --dop 1,2 --duration 10s
  numalab run report --engine postgres --streams 1,2,4,8 --dop 1,2,4 --query P1
  numalab run report --engine postgres --dsn 'postgres://me@db1/lab' --query P2 --duration 60s
  numalab run report --engine sqlite --db big.sqlite --rows 20000000 --query P2
  numalab run report --engine duckdb --placement 'node=0,smt=off' --json > report.json
`

// reportConfig is run report's configuration, stored with the run.
type reportConfig struct {
	Engine    string        `json:"engine"`
	DSN       string        `json:"dsn,omitempty"` // password hidden
	DB        string        `json:"db,omitempty"`
	Rows      int64         `json:"rows"`
	Rate      int64         `json:"rate"`
	Streams   []int         `json:"streams"`
	DOP       []int         `json:"dop"`
	Queries   []string      `json:"queries"`
	Duration  time.Duration `json:"duration_ns"`
	Warmup    time.Duration `json:"warmup_ns"`
	Placement string        `json:"placement,omitempty"`
	Seed      uint64        `json:"seed"`
}

func reportFlags(e *env, args []string) (cfg reportConfig, dsn, storePath string, asJSON, done bool, err error) {
	fs := newFlags(e, "run report", runReportHelp)
	eng := fs.String("engine", "sqlite", "engine: sqlite, duckdb or postgres")
	dsnF := fs.String("dsn", "", "PostgreSQL `DSN` to use (default: a throwaway server numalab starts)")
	db := fs.String("db", "", "database `file` for sqlite or duckdb (default transtats-N.sqlite or .duckdb)")
	rows := fs.Int64("rows", transtats.DefaultRows, "rows of tran_stats (N), up to 200000000")
	rate := fs.Int64("rate", transtats.DefaultRate, "rows per second of tran_begin (R): the rows in P2's window")
	streams := fs.String("streams", "1", "stream counts to sweep, e.g. 1,2,4,8")
	dop := fs.String("dop", "1", "degrees of parallelism to sweep, e.g. 1,2,4")
	query := fs.String("query", "P1,P2", "queries: P1, P2 or P1,P2")
	dur := fs.Duration("duration", 30*time.Second, "measured window of each cell")
	warm := fs.Duration("warmup", 5*time.Second, "warm-up before each cell's window, excluded from every figure")
	sel := fs.String("placement", "", "placement selector for the streams, e.g. 'node=0,smt=off' (default: not pinned)")
	seed := fs.Uint64("seed", 1, "seed of the streams' random numbers (P2's t)")
	sp := storeFlag(fs)
	js := fs.Bool("json", false, "print the run as JSON on stdout at the end (the table goes to stderr)")
	if done, err = parseFlags(e, fs, args); done {
		return cfg, "", "", false, true, err
	}
	if err = noArgs(fs); err != nil {
		return cfg, "", "", false, true, err
	}
	cfg = reportConfig{Engine: *eng, DSN: result.Redact(*dsnF), DB: *db, Rows: *rows, Rate: *rate,
		Duration: *dur, Warmup: *warm, Placement: *sel, Seed: *seed}
	var errs []error
	d, derr := transtats.ParseDialect(*eng)
	if derr != nil {
		errs = append(errs, badFlag("engine", *eng, "is not an engine: want sqlite, duckdb or postgres"))
	}
	if *dsnF != "" && d != transtats.Postgres {
		errs = append(errs, fmt.Errorf("-dsn: a DSN is for --engine postgres (the %s data is a file: use --db)", *eng))
	}
	if *db != "" && d == transtats.Postgres {
		errs = append(errs, errors.New("-db: a file is for --engine sqlite or duckdb (PostgreSQL takes --dsn)"))
	}
	if err := transtats.CheckSize(*rows, *rate); err != nil {
		errs = append(errs, fmt.Errorf("-rows/-rate: %w", err))
	}
	if cfg.Streams, err = intList("streams", *streams, 1); err != nil {
		errs = append(errs, err)
	} else if maxS := maxStreamsPerCPU * runtime.NumCPU(); slices.Max(cfg.Streams) > maxS {
		errs = append(errs, badFlag("streams", *streams, fmt.Sprintf("asks for more than %d streams (%d per logical CPU): beyond that a cell measures the scheduler", maxS, maxStreamsPerCPU)))
	}
	if cfg.DOP, err = intList("dop", *dop, 1); err != nil {
		errs = append(errs, err)
	} else if err := checkReportDOP(d, cfg.DOP, *dop, runtime.NumCPU()); err != nil {
		errs = append(errs, err)
	}
	if cfg.Queries, err = transtats.ParseQueries(*query); err != nil {
		errs = append(errs, fmt.Errorf("-query: %w", err))
	}
	if *dur <= 0 {
		errs = append(errs, badFlag("duration", dur.String(), "is not positive: want e.g. 30s"))
	}
	if *warm < 0 {
		errs = append(errs, badFlag("warmup", warm.String(), "is negative: want e.g. 5s or 0s"))
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, "", "", false, true, err
	}
	if cfg.DB == "" && d != transtats.Postgres {
		cfg.DB = transtats.DefaultPath(d, *rows)
	}
	if err := transtats.CheckFits(d, engine.Options{Path: cfg.DB, DSN: *dsnF}, *rows); err != nil {
		return cfg, "", "", false, true, badFlag("rows", strconv.FormatInt(*rows, 10), "could never be loaded here: "+err.Error())
	}
	return cfg, *dsnF, *sp, *js, false, nil
}

// checkReportDOP refuses DOPs the engine or the machine cannot give.
func checkReportDOP(d transtats.Dialect, dops []int, given string, cpus int) error {
	for _, p := range dops {
		if d == transtats.SQLite && p != 1 {
			return badFlag("dop", given, "asks SQLite for parallelism, but SQLite runs each query on one thread: use --dop 1 (or --engine duckdb or postgres)")
		}
		if p > cpus {
			return badFlag("dop", given, fmt.Sprintf("has DOP %d, more than this machine's %d CPUs: use at most %d", p, cpus, cpus))
		}
	}
	return nil
}

// reportCellPlan is one cell to run.
type reportCellPlan struct {
	index   int
	query   string
	streams int
	dop     int
}

// planReport lists the cells: per query, per stream count, DOPs in the
// order given (so DOP 1 comes before the speedups that need it).
func planReport(cfg reportConfig) []reportCellPlan {
	var out []reportCellPlan
	for _, q := range cfg.Queries {
		for _, s := range cfg.Streams {
			for _, d := range cfg.DOP {
				out = append(out, reportCellPlan{index: len(out), query: q, streams: s, dop: d})
			}
		}
	}
	return out
}

// reportOutput is what --json prints.
type reportOutput struct {
	Load     *result.BulkLoad      `json:"load,omitempty"`
	Engine   *engine.Info          `json:"engine,omitempty"`
	Cells    []*result.QueryCell   `json:"cells"`
	Findings []*result.PlanFinding `json:"findings"`
}

func runReport(ctx context.Context, e *env, args []string) error {
	cfg, dsn, storePath, asJSON, done, err := reportFlags(e, args)
	if done || err != nil {
		return err
	}
	var pl place.Placement
	if cfg.Placement != "" {
		machine, err := topo.FromSysfs("/")
		if err != nil {
			return fmt.Errorf("reading this machine's topology: %w", err)
		}
		if pl, err = place.Resolve(machine, cfg.Placement); err != nil {
			return fmt.Errorf("-placement: %w", err)
		}
		for _, d := range cfg.DOP {
			if d > len(pl.CPUs) {
				fmt.Fprintf(e.stderr, "note: DOP %d is more than the placement's %d CPUs; parallel workers are not pinned by the placement\n", d, len(pl.CPUs))
				break
			}
		}
	}
	prog := newProgress(e.stderr)
	defer prog.Done()
	rec, err := startRun(ctx, e, storePath, result.RunQueries, cfg)
	if err != nil {
		return err
	}
	out := &reportOutput{Cells: []*result.QueryCell{}, Findings: []*result.PlanFinding{}}
	err = runReportSweep(ctx, e, prog, rec, cfg, dsn, pl, asJSON, out)
	if ferr := rec.Finish(err, reportHeadline(cfg, out.Cells)); ferr != nil {
		err = errors.Join(err, ferr)
	}
	if asJSON {
		if jerr := writeJSON(e.stdout, out); jerr != nil {
			err = errors.Join(err, jerr)
		}
	}
	return err
}

func runReportSweep(ctx context.Context, e *env, prog *progress, rec *recorder, cfg reportConfig, dsn string,
	pl place.Placement, asJSON bool, out *reportOutput) error {
	table := e.stdout
	if asJSON {
		table = e.stderr
	}
	d := transtats.Dialect(cfg.Engine)
	opt := engine.Options{Path: cfg.DB, DSN: dsn}
	if dsn == "" && d == transtats.Postgres {
		prog.Say("starting a throwaway PostgreSQL server")
	}
	db, err := transtats.Open(ctx, transtats.Config{Dialect: d, Engine: opt, Rows: cfg.Rows, Rate: cfg.Rate,
		Progress: func(step string, n, total int64) {
			prog.Say(fmt.Sprintf("%s: %d of %d rows (%.0f%%)", step, n, total, 100*float64(n)/float64(total)))
		}})
	if err != nil {
		return err
	}
	defer db.Close()
	prog.Done()
	out.Load = &db.Load
	if err := rec.Add(result.KindBulkLoad.Of(db.Load)); err != nil {
		return err
	}
	how := "loaded"
	if db.Load.Reused {
		how = "reused (loaded earlier)"
	}
	fmt.Fprintf(e.stderr, "transtats: %d rows %s in %s: %s, %.0f rows/s\n", db.Load.Rows, how, db.Load.Where, db.Load.Method, db.Load.RowsPerSecond)
	info, err := db.Engine().Describe(ctx)
	if err != nil {
		return err
	}
	out.Engine = &info
	if err := rec.Add(engine.KindInfo.Of(info)); err != nil {
		return err
	}

	fmt.Fprintf(table, reportRowFormat, "cell", "query", "streams", "dop", "queries/h", "mean ms", "stdev ms", "p50 ms", "p95 ms", "p99 ms", "speedup", "errors")
	cells := planReport(cfg)
	type key struct {
		query   string
		streams int
	}
	dop1 := map[key]float64{} // queries per hour at DOP 1
	lastPlan := map[key]string{}
	lastDOP := map[key]int{}
	first, last := db.Seconds()
	planT := (first + last) / 2                 // P2's t for the plans compared
	otherT := min(first+(last-first)/4+1, last) // another t, after the cell
	for _, c := range cells {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := key{c.query, c.streams}
		if err := db.SetDOP(ctx, c.dop); err != nil {
			if gone := engineGone(ctx, db); gone != nil {
				return fmt.Errorf("starting cell %d (%s, %d streams, DOP %d): %s stopped answering: %w (%d earlier cells stored)",
					c.index, c.query, c.streams, c.dop, cfg.Engine, gone, c.index)
			}
			return err
		}
		qc := &result.QueryCell{Query: c.query}
		if inf, err := db.Engine().Describe(ctx); err == nil {
			qc.Settings = inf.Settings
		}
		before, perr := db.Explain(ctx, c.query, planT)
		if perr != nil {
			qc.PlanError = perr.Error()
		}
		qc.PlanBefore = before
		prog.Say(fmt.Sprintf("cell %d/%d: %s, %d streams, DOP %d: %v warm-up + %v", c.index+1, len(cells), c.query, c.streams, c.dop, cfg.Warmup, cfg.Duration))
		cell, err := drive.Run(ctx, drive.Config{
			Types:                []string{c.query},
			Streams:              c.streams,
			CPUs:                 pl.CPUs,
			Cores:                pl.Cores,
			Warmup:               cfg.Warmup,
			Duration:             cfg.Duration,
			MaxConsecutiveErrors: reportMaxErrors,
			Monitor:              drive.SysMonitor("/"),
			Point:                drive.Point{Index: c.index, Streams: c.streams, Placement: cfg.Placement},
			Procs:                cellProcs(cfg.Engine, c.streams),
		}, func(ctx context.Context, stream int) (drive.Stream, error) {
			return db.NewStream(ctx, c.query, cfg.Seed*1_000_003+uint64(c.index)<<16+uint64(stream))
		})
		prog.Done()
		if err != nil {
			qc.Error = result.Redact(err.Error())
		}
		if cell != nil {
			cell.Engine, cell.Workload, cell.DOP = cfg.Engine, "transtats", c.dop
			qc.Cell = cell
			qc.QueriesPerHour = cell.TPS * 3600
			if c.dop == 1 {
				dop1[k] = qc.QueriesPerHour
			}
			if base := dop1[k]; base > 0 {
				qc.SpeedupVsDOP1 = qc.QueriesPerHour / base
			}
		}
		// Is the engine still there? A cell with errors may mean a dead
		// server: then stop, keeping what was measured.
		var gone error
		if cell == nil || cell.Total.Errors > 0 || cell.Total.Count == 0 || err != nil {
			gone = engineGone(ctx, db)
		}
		var found []*result.PlanFinding
		if gone == nil && ctx.Err() == nil && perr == nil {
			found = comparePlans(ctx, db, qc, c, planT, otherT, lastPlan[k], lastDOP[k])
			lastPlan[k], lastDOP[k] = before, c.dop
		}
		out.Cells = append(out.Cells, qc)
		if aerr := rec.Add(result.KindQueryCell.Of(*qc)); aerr != nil {
			return errors.Join(err, aerr)
		}
		writeReportRow(table, c, qc)
		if cell != nil && !cell.Interrupted && gone == nil && cell.Total.Count < int64(fewQueries*c.streams) {
			fmt.Fprintf(e.stderr, "note: cell %d: only %d queries finished in the %v window (queries still running when it closes are not counted): lengthen --duration for a steadier figure\n",
				c.index, cell.Total.Count, cfg.Duration)
		}
		for _, f := range found {
			out.Findings = append(out.Findings, f)
			if aerr := rec.Add(result.KindPlanFinding.Of(*f)); aerr != nil {
				return aerr
			}
			fmt.Fprintf(e.stderr, "finding: %s\n", f.Detail)
		}
		switch {
		case gone != nil:
			return fmt.Errorf("running cell %d (%s, %d streams, DOP %d): %s stopped answering: %w (%d earlier cells stored)",
				c.index, c.query, c.streams, c.dop, cfg.Engine, gone, c.index)
		case cell == nil:
			return fmt.Errorf("running cell %d (%s, %d streams, DOP %d): %w", c.index, c.query, c.streams, c.dop, err)
		case cell.Interrupted:
			return ctx.Err()
		case cell.Total.Count == 0 && cell.Total.Errors > 0:
			return fmt.Errorf("running cell %d (%s, %d streams, DOP %d): every query failed: %s", c.index, c.query, c.streams, c.dop, cell.Total.FirstError)
		}
	}
	return nil
}

// fewQueries per stream in a window is too few for a steady figure.
const fewQueries = 5

// reportMaxErrors stops a stream after that many failed queries in a row.
const reportMaxErrors = 20

// engineGone checks, within 10 seconds, that the engine still answers.
func engineGone(ctx context.Context, db *transtats.DB) error {
	if ctx.Err() != nil {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := db.Engine().Connect(pctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Exec(pctx, "SELECT 1")
}

// comparePlans captures the plans after a cell and lists what changed:
// within the cell (before against after, same t; and against another t),
// and against the previous DOP at the same query and streams.
func comparePlans(ctx context.Context, db *transtats.DB, qc *result.QueryCell, c reportCellPlan, planT, otherT int64, prev string, prevDOP int) []*result.PlanFinding {
	var out []*result.PlanFinding
	after, err := db.Explain(ctx, c.query, planT)
	if err != nil {
		qc.PlanError = err.Error()
		return nil
	}
	qc.PlanAfter = after
	if transtats.PlanShape(after) != transtats.PlanShape(qc.PlanBefore) {
		out = append(out, &result.PlanFinding{Kind: "within-cell", Query: c.query, Streams: c.streams, DOP: c.dop,
			Detail: fmt.Sprintf("%s at %d streams, DOP %d: the plan changed during the cell", c.query, c.streams, c.dop),
			Before: qc.PlanBefore, After: after})
	}
	if c.query == transtats.P2 {
		other, err := db.Explain(ctx, c.query, otherT)
		if err == nil {
			qc.PlanAfterOther = other
			if transtats.PlanShape(other) != transtats.PlanShape(timeless(after, planT, otherT)) {
				out = append(out, &result.PlanFinding{Kind: "within-cell", Query: c.query, Streams: c.streams, DOP: c.dop,
					Detail: fmt.Sprintf("%s at %d streams, DOP %d: the plan depends on t (t = %d s and %d s differ)", c.query, c.streams, c.dop, planT, otherT),
					Before: after, After: other})
			}
		}
	}
	if prev != "" && prevDOP != c.dop && transtats.PlanShape(prev) != transtats.PlanShape(qc.PlanBefore) {
		out = append(out, &result.PlanFinding{Kind: "across-dop", Query: c.query, Streams: c.streams, DOP: c.dop, FromDOP: prevDOP,
			Detail: fmt.Sprintf("%s at %d streams: the plan at DOP %d differs from DOP %d's", c.query, c.streams, c.dop, prevDOP),
			Before: prev, After: qc.PlanBefore})
	}
	return out
}

// timeless rewrites the window bounds of t in a plan into those of other,
// so that two P2 plans compare by their operators only.
func timeless(plan string, t, other int64) string {
	r := strings.NewReplacer(
		transtats.TimeAt(t).Format(transtats.TimeFormat), transtats.TimeAt(other).Format(transtats.TimeFormat),
		transtats.TimeAt(t+1).Format(transtats.TimeFormat), transtats.TimeAt(other+1).Format(transtats.TimeFormat))
	return r.Replace(plan)
}

// reportRowFormat lays out the rows printed as cells finish.
const reportRowFormat = "%4v %-5v %7v %4v %11v %9v %9v %9v %9v %9v %8v %7v\n"

func writeReportRow(w io.Writer, c reportCellPlan, qc *result.QueryCell) {
	if qc.Cell == nil {
		fmt.Fprintf(w, reportRowFormat, c.index, c.query, c.streams, c.dop, "-", "-", "-", "-", "-", "-", "-", "failed: "+qc.Error)
		return
	}
	t := qc.Cell.Total
	ms := func(us float64) string { return strconv.FormatFloat(us/1000, 'f', 2, 64) }
	speed := "-"
	if qc.SpeedupVsDOP1 > 0 {
		speed = fmt.Sprintf("%.2fx", qc.SpeedupVsDOP1)
	}
	errs := strconv.FormatInt(t.Errors, 10)
	if qc.Cell.Interrupted {
		errs += " (cut short)"
	}
	if t.Count == 0 {
		fmt.Fprintf(w, reportRowFormat, c.index, c.query, c.streams, c.dop, "0", "-", "-", "-", "-", "-", speed, errs)
		return
	}
	fmt.Fprintf(w, reportRowFormat, c.index, c.query, c.streams, c.dop, fmt.Sprintf("%.0f", qc.QueriesPerHour),
		ms(t.MeanUS), ms(t.StdevUS), ms(t.P50US), ms(t.P95US), ms(t.P99US), speed, errs)
}

// reportHeadline is each query's best cell, for 'numalab runs'.
func reportHeadline(cfg reportConfig, cells []*result.QueryCell) string {
	var parts []string
	for _, q := range cfg.Queries {
		var best *result.QueryCell
		for _, c := range cells {
			if c.Query == q && c.Cell != nil && (best == nil || c.QueriesPerHour > best.QueriesPerHour) {
				best = c
			}
		}
		if best == nil {
			continue
		}
		p := fmt.Sprintf("%s %.0f queries/h at %d streams DOP %d", q, best.QueriesPerHour, best.Cell.Streams, best.Cell.DOP)
		if best.SpeedupVsDOP1 > 0 && best.Cell.DOP != 1 {
			p += fmt.Sprintf(" (%.2fx DOP 1)", best.SpeedupVsDOP1)
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s N=%d: %s", cfg.Engine, cfg.Rows, strings.Join(parts, "; "))
}
