package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/dop"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/workload/tpch"
)

// tpchFlags parses the flags into a checked configuration.
func tpchFlags(e *env, args []string) (cfg tpch.RunConfig, dsn, storePath string, threshold dop.Threshold, asJSON, done bool, err error) {
	fs := cliflag.New(e.stderr, "run tpch", helpText("run-tpch"))
	cliflag.EngineFlags(fs, "duckdb", cliflag.EnginesDOP(), "tpch-SF.sqlite or .duckdb")
	fs.Float64("sf", 0.01, "scale factor: 1 is about 1 GB of flat data")
	fs.Int64("seed", 1, "seed of the data and the queries' parameters")
	fs.String("dop", "1", "degrees of parallelism to sweep, e.g. 1,2,4")
	fs.String("query", "1-22", "queries to run: 1-22, or a list such as 1,6,14")
	fs.String("streams", "2", "throughput test stream counts, e.g. 2,4; 0: no throughput test")
	cliflag.RangedInt(fs, "repeats", 1, 1, 1000, "repetitions of every cell, 1 to 1000")
	cliflag.RangedDuration(fs, "duration", 3*time.Second, 10*time.Millisecond, 24*time.Hour, "measured window of each cell, 10ms to 24h")
	cliflag.RangedDuration(fs, "warmup", time.Second, 0, time.Hour, "warm-up before each cell's window, excluded from every figure, up to 1h")
	fs.String("placement", "", "placement selector for the streams, e.g. 'node=0,smt=off' (default: not pinned)")
	fs.Int("data-node", -1, "NUMA node to place the data pages on (-1: leave them where they are)")
	cliflag.RangedInt(fs, "hog", 0, 0, runtime.NumCPU(), "keep `N` of the placement's CPUs busy with a plain CPU-bound thread during every cell (the last N its streams would take), 0 to the machine's CPUs")
	definePacingFlags(fs)
	fs.String("threshold", defaultDOPThreshold.String(), "where the DOP rule of thumb parallelises: a time (0.5s), turned into a plan cost by the run's fitted seconds per cost unit, or a plan cost (1000)")
	sp := cliflag.Store(fs)
	js := fs.Bool("json", false, "print the cells and the analysis as JSON on stdout at the end (the table goes to stderr)")
	done, bad, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return cfg, "", "", threshold, false, true, err
	}
	if err := errors.Join(append(append(bad, tpchSettings(&cfg, &threshold).Apply(fs, true)...), cfg.Pacing.Check())...); err != nil {
		return cfg, "", "", threshold, false, true, err
	}
	dsn, cfg.DSN = cfg.DSN, result.Redact(cfg.DSN)
	if spec, _ := engine.Lookup(cfg.Engine); cfg.DB == "" && !spec.Server {
		cfg.DB = fmt.Sprintf("tpch-%g.%s", cfg.SF, cfg.Engine)
	}
	if cfg.DB != "" {
		need, _ := tpch.EstimatedBytes(cfg.SF, cfg.Engine)
		room, err := engine.RoomAt(filepath.Dir(cfg.DB))
		if err == nil {
			err = room.Check(need)
		}
		if err != nil {
			return cfg, "", "", threshold, false, true, cliflag.Bad("sf", strconv.FormatFloat(cfg.SF, 'g', -1, 64), "could not be loaded here: "+err.Error())
		}
	}
	return cfg, dsn, *sp, threshold, *js, false, nil
}

// defaultDOPThreshold is where the DOP rule of thumb parallelises unless
// told: a plan worth half a second by the run's own fit of cost against
// time (Chang's proposal, cost 30 at his measured 57 units/s).
var defaultDOPThreshold = dop.Threshold{Seconds: 0.5}

// tpchSettings are run tpch's flags on the fields of cfg and on the cost
// threshold, each value checked as it is set (those of --dsn, --db and
// --dop against the --engine set before them).
func tpchSettings(cfg *tpch.RunConfig, threshold *dop.Threshold) cliflag.Settings {
	ss := append(cliflag.EngineSettings(&cfg.Engine, &cfg.DSN, &cfg.ConnectTimeout, &cfg.DB), cliflag.Settings{
		cliflag.Validated(cliflag.Float("sf", &cfg.SF), func(v string) error {
			if _, err := tpch.CountsFor(cfg.SF); err != nil || !(cfg.SF > 0) {
				return cliflag.Bad("sf", v, "is not a scale factor numalab can load: want a positive SF such as 0.01 or 1")
			}
			return nil
		}),
		cliflag.Int64("seed", &cfg.Seed),
		cliflag.Validated(cliflag.Ints("dop", &cfg.DOP), func(v string) error {
			if err := tpch.CheckDOP(cfg.Engine, cfg.DOP, runtime.NumCPU()); err != nil {
				return cliflag.Bad("dop", v, err.Error())
			}
			return nil
		}),
		cliflag.Field("query", &cfg.Queries, func(s string) ([]int, error) {
			q, err := tpch.ParseQueries(s)
			if err != nil {
				return nil, cliflag.Bad("query", s, err.Error())
			}
			return q, nil
		}, cliflag.FormatInts),
		cliflag.Validated(cliflag.Field("streams", &cfg.Streams, func(s string) ([]int, error) {
			if s == "0" {
				return nil, nil
			}
			return cliflag.ParseInts("streams", s, 1)
		}, func(v []int) string {
			if len(v) == 0 {
				return "0"
			}
			return cliflag.FormatInts(v)
		}), func(v string) error {
			if why := sweep.TooManyStreams(cfg.Streams, runtime.NumCPU()); len(cfg.Streams) > 0 && why != "" {
				return cliflag.Bad("streams", v, why)
			}
			return nil
		}),
		cliflag.Validated(cliflag.Int("repeats", &cfg.Repeats), func(v string) error {
			if cfg.Repeats < 1 {
				return cliflag.Bad("repeats", v, "is not at least 1")
			}
			return nil
		}),
		cliflag.Validated(cliflag.Duration("duration", &cfg.Duration), func(v string) error {
			if cfg.Duration <= 0 {
				return cliflag.Bad("duration", v, "is not positive: want e.g. 3s")
			}
			return nil
		}),
		cliflag.Validated(cliflag.Duration("warmup", &cfg.Warmup), func(v string) error {
			if cfg.Warmup < 0 {
				return cliflag.Bad("warmup", v, "is negative: want e.g. 1s or 0s")
			}
			return nil
		}),
		cliflag.Optional(cliflag.Str("placement", &cfg.Placement)),
		cliflag.Int("data-node", &cfg.DataNode),
		cliflag.Optional(cliflag.Int("hog", &cfg.Hog)),
		cliflag.Field("threshold", threshold, func(s string) (dop.Threshold, error) {
			t, err := dop.ParseThreshold(s)
			if err != nil {
				return t, cliflag.Bad("threshold", s, "is not a time or a plan cost: want e.g. 0.5s or 1000")
			}
			return t, nil
		}, dop.Threshold.String),
	}...)
	return append(ss, pacingSettings(&cfg.Pacing)...)
}

// tpchArgv is the one command line that gives cfg.
func tpchArgv(cfg tpch.RunConfig, threshold dop.Threshold) []string {
	return tpchSettings(&cfg, &threshold).Argv("run", "tpch")
}

func runTPCH(ctx context.Context, e *env, args []string) error {
	cfg, dsn, storePath, threshold, asJSON, done, err := tpchFlags(e, args)
	if done || err != nil {
		return err
	}
	return runTPCHConfig(ctx, e, cfg, dsn, storePath, threshold, asJSON)
}

// runTPCHConfig runs a checked configuration: cells, store, sweep,
// analysis, render.
func runTPCHConfig(ctx context.Context, e *env, cfg tpch.RunConfig, dsn, storePath string, threshold dop.Threshold, asJSON bool) error {
	specs := []sweep.Spec{cfg.Spec()}
	if len(cfg.Streams) > 0 {
		specs = append(specs, cfg.ThroughputSpec())
	}
	machine, cells, prog, err := startSweep(e, sweepOut{asJSON: asJSON}, tpch.WriteRow, specs...)
	if err != nil {
		return err
	}
	defer prog.Done()
	if err := checkHog(cfg.Hog, cells); err != nil {
		return err
	}
	probe := store.LatestIORatio(storePath)
	rec, err := startRun(ctx, e.withArgs(tpchArgv(cfg, threshold)), storePath, pacedKind(tpch.RunKind, cfg.Pacing), cfg)
	if err != nil {
		return err
	}
	w := tpch.NewSweep(cfg, dsn, cells[0].DataNode) // one data node for a server (OneDataNode)
	tpch.WriteRowHeader(prog.table)
	measured, err := sweep.Run(ctx, cfg.Plan(cells), w, rec, prog)
	out := w.Conclude(measured, machine, threshold, probe)
	if len(measured) > 0 {
		err = errors.Join(err, rec.Add(tpch.KindAnalysis.Of(out.Analysis)))
	}
	err = finishRun(e, rec, err, tpch.Headline(cfg, out.Analysis), asJSON, out)
	if !asJSON {
		tpch.WriteAnalysis(prog.table, out.Analysis, out.Storage)
	}
	return err
}
