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

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/workload/transtats"
)

func reportFlags(e *env, args []string) (cfg transtats.RunConfig, dsn, storePath string, asJSON, done bool, err error) {
	fs := cliflag.New(e.stderr, "run report", helpText("run-report"))
	eng := fs.String("engine", "sqlite", "engine: sqlite, duckdb or postgres")
	dsnF := fs.String("dsn", "", "PostgreSQL `DSN` to use (default: a throwaway server numalab starts)")
	db := fs.String("db", "", "database `file` for sqlite or duckdb (default transtats-N.sqlite or .duckdb)")
	rows := fs.Int64("rows", transtats.DefaultRows, "rows of tran_stats (N), up to 200000000")
	rate := fs.Int64("rate", transtats.DefaultRate, "rows per second of tran_begin (R): the rows in P2's window")
	streams := fs.String("streams", "1", "stream counts to sweep, e.g. 1,2,4,8")
	dop := fs.String("dop", "1", "degrees of parallelism to sweep, e.g. 1,2,4")
	query := fs.String("query", "P1,P2", "queries: P1, P2 or P1,P2")
	dur := cliflag.RangedDuration(fs, "duration", 30*time.Second, 10*time.Millisecond, 24*time.Hour, "measured window of each cell, 10ms to 24h")
	warm := cliflag.RangedDuration(fs, "warmup", 5*time.Second, 0, time.Hour, "warm-up before each cell's window, excluded from every figure, up to 1h")
	sel := fs.String("placement", "", "placement selector for the streams, e.g. 'node=0,smt=off' (default: not pinned)")
	seed := fs.Uint64("seed", 1, "seed of the streams' random numbers (P2's t)")
	repeat := cliflag.RangedInt(fs, "repeat", 1, 1, 1000, "repetitions of every cell, 1 to 1000, all cells once before any again")
	sp := storeFlag(fs)
	js := fs.Bool("json", false, "print the run as JSON on stdout at the end (the table goes to stderr)")
	done, errs, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return cfg, "", "", false, true, err
	}
	cfg = transtats.RunConfig{Engine: *eng, DSN: result.Redact(*dsnF), DB: *db, Rows: *rows, Rate: *rate,
		Duration: *dur, Warmup: *warm, Placement: *sel, Seed: *seed, Repeat: *repeat}
	d, derr := transtats.ParseDialect(*eng)
	errs.BadIf(derr != nil, "engine", *eng, "is not an engine: want sqlite, duckdb or postgres")
	if *dsnF != "" && d != transtats.Postgres {
		errs = append(errs, fmt.Errorf("-dsn: a DSN is for --engine postgres (the %s data is a file: use --db)", *eng))
	}
	if *db != "" && d == transtats.Postgres {
		errs = append(errs, cliflag.ErrPostgresFile)
	}
	if err := transtats.CheckSize(*rows, *rate); err != nil {
		errs = append(errs, fmt.Errorf("-rows/-rate: %w", err))
	}
	if cfg.Streams, err = cliflag.ParseInts("streams", *streams, 1); err != nil {
		errs = append(errs, err)
	} else if why := sweep.TooManyStreams(cfg.Streams, runtime.NumCPU()); why != "" {
		errs = append(errs, cliflag.Bad("streams", *streams, why))
	}
	if cfg.DOP, err = cliflag.ParseInts("dop", *dop, 1); err != nil {
		errs = append(errs, err)
	} else if err := transtats.CheckDOP(d, cfg.DOP, runtime.NumCPU()); err != nil {
		errs = append(errs, cliflag.Bad("dop", *dop, err.Error()))
	}
	if cfg.Queries, err = transtats.ParseQueries(*query); err != nil {
		errs = append(errs, fmt.Errorf("-query: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, "", "", false, true, err
	}
	if cfg.DB == "" && d != transtats.Postgres {
		cfg.DB = transtats.DefaultPath(d, *rows)
	}
	if err := cliflag.CheckFileEngine(*eng, cfg.DB); err != nil {
		return cfg, "", "", false, true, err
	}
	if err := transtats.CheckFits(d, engine.Options{Path: cfg.DB, DSN: *dsnF}, *rows); err != nil {
		return cfg, "", "", false, true, cliflag.Bad("rows", strconv.FormatInt(*rows, 10), "could never be loaded here: "+err.Error())
	}
	return cfg, *dsnF, *sp, *js, false, nil
}

// reportArgv is the one command line that gives cfg, every setting
// spelled out (the password of a DSN is hidden).
func reportArgv(cfg transtats.RunConfig) []string {
	a := []string{"run", "report", "--engine", cfg.Engine}
	if cfg.DSN != "" {
		a = append(a, "--dsn", cfg.DSN)
	}
	if cfg.DB != "" {
		a = append(a, "--db", cfg.DB)
	}
	a = append(a, "--rows", strconv.FormatInt(cfg.Rows, 10), "--rate", strconv.FormatInt(cfg.Rate, 10),
		"--streams", cliflag.FormatInts(cfg.Streams), "--dop", cliflag.FormatInts(cfg.DOP), "--query", strings.Join(cfg.Queries, ","),
		"--duration", cfg.Duration.String(), "--warmup", cfg.Warmup.String())
	if cfg.Placement != "" {
		a = append(a, "--placement", cfg.Placement)
	}
	return append(a, "--seed", strconv.FormatUint(cfg.Seed, 10), "--repeat", strconv.Itoa(max(cfg.Repeat, 1)))
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
	return runReportConfig(ctx, e, cfg, dsn, storePath, asJSON)
}

// runReportConfig runs a checked configuration: plan, store, sweep, render.
func runReportConfig(ctx context.Context, e *env, cfg transtats.RunConfig, dsn, storePath string, asJSON bool) error {
	_, cells, prog, err := startSweep(e, sweepOut{asJSON: asJSON}, writeReportRow, cfg.Spec())
	if err != nil {
		return err
	}
	defer prog.Done()
	rec, err := startRun(ctx, e.withArgs(reportArgv(cfg)), storePath, result.RunQueries, cfg)
	if err != nil {
		return err
	}
	w := transtats.NewSweep(cfg, dsn)
	fmt.Fprintf(prog.table, reportRowFormat, "cell", "query", "streams", "dop", "queries/h", "mean ms", "stdev ms", "p50 ms", "p95 ms", "p99 ms", "speedup", "errors")
	measured, err := sweep.Run(ctx, cfg.Plan(cells), w, rec, prog)
	if ferr := rec.Finish(err, reportHeadline(cfg, measured)); ferr != nil {
		err = errors.Join(err, ferr)
	}
	if asJSON {
		out := reportOutput{Cells: measured, Findings: w.Findings()}
		if out.Cells == nil {
			out.Cells = []*result.QueryCell{}
		}
		if out.Findings == nil {
			out.Findings = []*result.PlanFinding{}
		}
		out.Load, out.Engine = w.Load(), w.Info()
		if jerr := writeJSON(e.stdout, out); jerr != nil {
			err = errors.Join(err, jerr)
		}
	}
	return err
}

// reportRowFormat lays out the rows printed as cells finish.
const reportRowFormat = "%4v %-5v %7v %4v %11v %9v %9v %9v %9v %9v %8v %7v\n"

// writeReportRow prints qc, the measurement of cell c, as one row.
func writeReportRow(w io.Writer, c sweep.Cell, qc *result.QueryCell) {
	if qc.Cell == nil {
		fmt.Fprintf(w, reportRowFormat, c.Index, c.Type, c.Streams, c.DOP, "-", "-", "-", "-", "-", "-", "-", "failed: "+qc.Error)
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
		fmt.Fprintf(w, reportRowFormat, c.Index, c.Type, c.Streams, c.DOP, "0", "-", "-", "-", "-", "-", speed, errs)
		return
	}
	fmt.Fprintf(w, reportRowFormat, c.Index, c.Type, c.Streams, c.DOP, fmt.Sprintf("%.0f", qc.QueriesPerHour),
		ms(t.MeanUS), ms(t.StdevUS), ms(t.P50US), ms(t.P95US), ms(t.P99US), speed, errs)
}

// reportHeadline is each query's best point (streams and DOP) by its
// median queries per hour over repeats, with its speedup as the report
// has it (that median over DOP 1's), for 'numalab runs'.
func reportHeadline(cfg transtats.RunConfig, cells []*result.QueryCell) string {
	type point struct {
		query        string
		streams, dop int
	}
	started := slices.DeleteFunc(slices.Clone(cells), func(c *result.QueryCell) bool { return c.Cell == nil })
	order, groups := stats.Group(started, func(c *result.QueryCell) point { return point{c.Query, c.Cell.Streams, c.Cell.DOP} })
	qph := func(c *result.QueryCell) float64 { return c.QueriesPerHour }
	var parts []string
	for _, q := range cfg.Queries {
		var best *point
		for i, k := range order {
			if k.query == q && (best == nil || stats.MedianOf(groups[k], qph) > stats.MedianOf(groups[*best], qph)) {
				best = &order[i]
			}
		}
		if best == nil {
			continue
		}
		m := stats.MedianOf(groups[*best], qph)
		p := fmt.Sprintf("%s %.0f queries/h at %s DOP %d", q, m, sweep.Count(best.streams, "stream"), best.dop)
		if base := groups[point{q, best.streams, 1}]; best.dop != 1 && len(base) > 0 && stats.MedianOf(base, qph) > 0 {
			p += fmt.Sprintf(" (%.2fx DOP 1)", m/stats.MedianOf(base, qph))
		}
		if n := len(groups[*best]); n > 1 {
			p += fmt.Sprintf(", median of %d", n)
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s N=%d: %s", cfg.Engine, cfg.Rows, strings.Join(parts, "; "))
}
