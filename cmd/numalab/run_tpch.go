package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/workload/tpch"
)

// tpchFlags parses the flags into a checked configuration.
func tpchFlags(e *env, args []string) (cfg tpch.RunConfig, dsn, storePath string, threshold float64, asJSON, done bool, err error) {
	fs := newFlags(e, "run tpch", helpText("run-tpch"))
	eng := fs.String("engine", "duckdb", "engine: sqlite, duckdb or postgres")
	dsnF := fs.String("dsn", "", "PostgreSQL `DSN` to use (default: a throwaway server numalab starts)")
	db := fs.String("db", "", "database `file` for sqlite or duckdb (default tpch-SF.sqlite or .duckdb)")
	sf := fs.Float64("sf", 0.01, "scale factor: 1 is about 1 GB of flat data")
	seed := fs.Int64("seed", 1, "seed of the data and the queries' parameters")
	dop := fs.String("dop", "1", "degrees of parallelism to sweep, e.g. 1,2,4")
	query := fs.String("query", "1-22", "queries to run: 1-22, or a list such as 1,6,14")
	streams := fs.String("streams", "2", "throughput test stream counts, e.g. 2,4; 0: no throughput test")
	repeats := fs.Int("repeats", 1, "repetitions of every cell")
	dur := fs.Duration("duration", 3*time.Second, "measured window of each cell")
	warm := fs.Duration("warmup", time.Second, "warm-up before each cell's window, excluded from every figure")
	sel := fs.String("placement", "", "placement selector for the streams, e.g. 'node=0,smt=off' (default: not pinned)")
	node := fs.Int("data-node", -1, "NUMA node to place the data pages on (-1: leave them where they are)")
	thr := fs.Float64("cost-threshold", 0, "cost from which the DOP rule of thumb parallelises (default: PostgreSQL's parallel_setup_cost, 1000; DuckDB 122880, a row group)")
	sp := storeFlag(fs)
	js := fs.Bool("json", false, "print the cells and the analysis as JSON on stdout at the end (the table goes to stderr)")
	if done, err = parseFlags(e, fs, args); done {
		return cfg, "", "", 0, false, true, err
	}
	if err = noArgs(fs); err != nil {
		return cfg, "", "", 0, false, true, err
	}
	cfg = tpch.RunConfig{Engine: *eng, DSN: result.Redact(*dsnF), DB: *db, SF: *sf, Seed: *seed, Repeats: *repeats,
		Duration: *dur, Warmup: *warm, Placement: *sel, DataNode: *node}
	var errs flagErrs
	switch *eng {
	case "sqlite", "duckdb", "postgres":
	default:
		errs = append(errs, badFlag("engine", *eng, "is not an engine: want sqlite, duckdb or postgres"))
	}
	if *dsnF != "" && *eng != "postgres" {
		errs = append(errs, fmt.Errorf("-dsn: a DSN is for --engine postgres (the %s data is a file: use --db)", *eng))
	}
	if *db != "" && *eng == "postgres" {
		errs = append(errs, errors.New("-db: a file is for --engine sqlite or duckdb (PostgreSQL takes --dsn)"))
	}
	if _, err := tpch.CountsFor(*sf); err != nil || !(*sf > 0) {
		errs = append(errs, badFlag("sf", strconv.FormatFloat(*sf, 'g', -1, 64), "is not a scale factor numalab can load: want a positive SF such as 0.01 or 1"))
	}
	if cfg.DOP, err = intList("dop", *dop, 1); err != nil {
		errs = append(errs, err)
	} else if err := tpch.CheckDOP(*eng, cfg.DOP, runtime.NumCPU()); err != nil {
		errs = append(errs, badFlag("dop", *dop, err.Error()))
	}
	if cfg.Queries, err = queryList(*query); err != nil {
		errs = append(errs, err)
	}
	if *streams != "0" {
		if cfg.Streams, err = intList("streams", *streams, 1); err != nil {
			errs = append(errs, err)
		} else if why := sweep.TooManyStreams(cfg.Streams, runtime.NumCPU()); why != "" {
			errs = append(errs, badFlag("streams", *streams, why))
		}
	}
	errs.badIf(*repeats < 1, "repeats", strconv.Itoa(*repeats), "is not at least 1")
	errs.badIf(*dur <= 0, "duration", dur.String(), "is not positive: want e.g. 3s")
	errs.badIf(*warm < 0, "warmup", warm.String(), "is negative: want e.g. 1s or 0s")
	errs.badIf(*thr < 0, "cost-threshold", strconv.FormatFloat(*thr, 'g', -1, 64), "is negative")
	if err := errors.Join(errs...); err != nil {
		return cfg, "", "", 0, false, true, err
	}
	if cfg.DB == "" && *eng != "postgres" {
		cfg.DB = fmt.Sprintf("tpch-%g.%s", *sf, *eng)
	}
	if cfg.DB != "" {
		need, _ := tpch.EstimatedBytes(*sf, *eng)
		room, err := engine.RoomAt(filepath.Dir(cfg.DB))
		if err == nil {
			err = room.Check(need)
		}
		if err != nil {
			return cfg, "", "", 0, false, true, badFlag("sf", strconv.FormatFloat(*sf, 'g', -1, 64), "could not be loaded here: "+err.Error())
		}
	}
	threshold = *thr
	if threshold == 0 {
		threshold = map[string]float64{"postgres": 1000, "duckdb": 122880}[*eng]
	}
	return cfg, *dsnF, *sp, threshold, *js, false, nil
}

// queryList parses "1-22" or "1,6,14".
func queryList(s string) ([]int, error) {
	bad := badFlag("query", s, "is not a list of TPC-H query numbers 1 to 22: want e.g. 1-22 or 1,6,14")
	var out []int
	for _, p := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(p), "-")
		a, err := strconv.Atoi(lo)
		b := a
		if isRange {
			b, err = strconv.Atoi(hi)
			if err == nil {
				a, _ = strconv.Atoi(lo)
			}
		}
		if err != nil || a < 1 || b > tpch.Queries || a > b {
			return nil, bad
		}
		for q := a; q <= b; q++ {
			out = append(out, q)
		}
	}
	return out, nil
}

// tpchArgv is the one command line that gives cfg.
func tpchArgv(cfg tpch.RunConfig, threshold float64) []string {
	a := []string{"run", "tpch", "--engine", cfg.Engine}
	if cfg.DSN != "" {
		a = append(a, "--dsn", cfg.DSN)
	}
	if cfg.DB != "" {
		a = append(a, "--db", cfg.DB)
	}
	var qs []string
	for _, q := range cfg.Queries {
		qs = append(qs, strconv.Itoa(q))
	}
	st := "0"
	if len(cfg.Streams) > 0 {
		st = intsArg(cfg.Streams)
	}
	a = append(a, "--sf", strconv.FormatFloat(cfg.SF, 'g', -1, 64), "--seed", strconv.FormatInt(cfg.Seed, 10),
		"--dop", intsArg(cfg.DOP), "--query", strings.Join(qs, ","), "--streams", st, "--repeats", strconv.Itoa(cfg.Repeats),
		"--duration", cfg.Duration.String(), "--warmup", cfg.Warmup.String())
	if cfg.Placement != "" {
		a = append(a, "--placement", cfg.Placement)
	}
	return append(a, "--data-node", strconv.Itoa(cfg.DataNode), "--cost-threshold", strconv.FormatFloat(threshold, 'g', -1, 64))
}

// tpchOutput is what --json prints.
type tpchOutput struct {
	Cells    []*tpch.Cell  `json:"cells"`
	Analysis tpch.Analysis `json:"analysis"`
	Storage  []string      `json:"storage,omitempty"`
}

func runTPCH(ctx context.Context, e *env, args []string) error {
	cfg, dsn, storePath, threshold, asJSON, done, err := tpchFlags(e, args)
	if done || err != nil {
		return err
	}
	specs := []sweep.Spec{cfg.Spec()}
	if len(cfg.Streams) > 0 {
		specs = append(specs, cfg.ThroughputSpec())
	}
	machine, cells, prog, err := startSweep(e, asJSON, tpch.WriteRow, specs...)
	if err != nil {
		return err
	}
	defer prog.Done()
	probe := store.LatestIORatio(storePath)
	rec, err := startRun(ctx, e.withArgs(tpchArgv(cfg, threshold)), storePath, tpch.RunKind, cfg)
	if err != nil {
		return err
	}
	w := tpch.NewSweep(cfg, dsn)
	tpch.WriteRowHeader(prog.table)
	measured, err := sweep.Run(ctx, cfg.Plan(cells), w, rec, prog)
	var all []tpch.Cell
	for _, c := range measured {
		all = append(all, *c)
	}
	rule := &model.DOPRule{Threshold: threshold, CoresPerSocket: max(1, len(machine.Cores)/max(1, len(machine.Packages))), Sockets: max(1, len(machine.Packages))}
	an := tpch.Analyze(all, rule)
	var storage []string
	if inf := w.Info(); inf != nil && cfg.Engine == "postgres" {
		storage = tpch.StorageAdvice(inf.Settings, probe, an.Cost)
	}
	if len(measured) > 0 {
		if aerr := rec.Add(tpch.KindAnalysis.Of(an)); aerr != nil {
			err = errors.Join(err, aerr)
		}
	}
	if ferr := rec.Finish(err, tpch.Headline(cfg, an)); ferr != nil {
		err = errors.Join(err, ferr)
	}
	if asJSON {
		if measured == nil {
			measured = []*tpch.Cell{}
		}
		if jerr := writeJSON(e.stdout, tpchOutput{Cells: measured, Analysis: an, Storage: storage}); jerr != nil {
			err = errors.Join(err, jerr)
		}
		return err
	}
	tpch.WriteAnalysis(prog.table, an, storage)
	return err
}
