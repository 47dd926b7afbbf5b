package main

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// oltpFlags parses run oltp's command line into a configuration: defaults,
// then the sweep file, then the flags given.
func oltpFlags(e *env, args []string) (cfg tpcc.RunConfig, storePath string, asJSON, done bool, err error) {
	cfg = tpcc.DefaultRunConfig()
	fs := cliflag.New(e.stderr, "run oltp", helpText("run-oltp"))
	file := fs.String("f", "", "sweep `file` (TOML); flags given override it")
	cliflag.EngineFlags(fs, cfg.Engine, "", "numalab-tpcc-wW.db or .duckdb")
	cliflag.RangedInt(fs, "warehouses", cfg.Warehouses, 1, math.MaxInt32, "TPC-C warehouses W, 1 or more (about 500,000 rows and 80 MB each; refused when they could never fit)")
	fs.String("streams", "1,2,4", "stream counts to sweep, e.g. 1,2,4,8")
	fs.String("placement", "", "placement selectors separated by ';', e.g. 'smt=on;smt=off' (default: all CPUs)")
	fs.Bool("spread", cfg.Spread, "pin stream i to the i-th CPU of the placement alone (false: every stream on all of them)")
	cliflag.RangedInt(fs, "data-node", cfg.DataNode, -1, 1023, "NUMA node to place the data pages on (-1: leave them where they are)")
	cliflag.RangedDuration(fs, "duration", cfg.Duration, 10*time.Millisecond, 24*time.Hour, "measured window of each cell, 10ms to 24h")
	cliflag.RangedDuration(fs, "warmup", cfg.Warmup, 0, time.Hour, "warm-up before each cell's window, excluded from every figure, up to 1h")
	cliflag.RangedInt(fs, "repeat", cfg.Repeat, 1, 1000, "repetitions of every cell, 1 to 1000")
	cliflag.RangedInt(fs, "streams-per-cpu", 0, 0, 1024, "leave out cells with more streams than N per logical CPU of their placement (0: none)")
	fs.Bool("augmented", false, "the augmented variant: each transaction also computes avg(i_price) over i_id < 15000")
	fs.Bool("neighbour", false, "add, per repeat, one stream on the first placement's first CPU while a memory-bandwidth neighbour reads on every other CPU (the model's held-out cell)")
	cliflag.RangedInt(fs, "trace", 0, 0, 1_000_000, "record up to N calls per stream (start, end, type, stream, ok) in the store, up to 1000000")
	fs.Int64("seed", cfg.Seed, "seed for the load and the streams' random numbers")
	defineMonitorFlags(fs)
	defineLoadFlags(fs)
	sp := cliflag.Store(fs)
	js := fs.Bool("json", false, "print the cells as JSON on stdout (the table goes to stderr)")
	done, bad, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return cfg, "", false, true, err
	}
	var md toml.MetaData
	if *file != "" {
		md, err = cliflag.SweepFile("run oltp", *file, &cfg)
		if err != nil {
			return cfg, "", false, true, err
		}
	}
	repeatGiven := md.IsDefined("repeat")
	bad = append(bad, oltpSettings(&cfg).Apply(fs, false)...)
	if len(cfg.Monitor) > 0 {
		if !repeatGiven && !cliflag.Given(fs, "repeat") {
			cfg.Repeat = monitor.MinRepeat
		}
		if _, err := monitor.Check(monitorRequest(cfg)); err != nil {
			bad = append(bad, err)
		}
		if cfg.Neighbour {
			bad = append(bad, errors.New("-neighbour: not with --monitor, whose cells are pairs of one stream count and placement"))
		}
		if cfg.Paced() || cfg.Curve {
			bad = append(bad, errors.New("-monitor: not with --rate, --think or --curve (it paces its own cells: see --monitor-load)"))
		}
		if !md.IsDefined("monitor_load") && !cliflag.Given(fs, "monitor-load") {
			cfg.MonitorLoad = monitor.DefaultPacedLoad
		}
	} else {
		if cfg.AllowSettings {
			bad = append(bad, errors.New("-allow-settings: is for --monitor with PostgreSQL facilities on a --dsn server"))
		}
		if cfg.MonitorLoad != 0 {
			bad = append(bad, errors.New("-monitor-load: is for --monitor"))
		}
	}
	curveDefaults(&cfg.Load)
	if cfg.Curve && cfg.Neighbour {
		bad = append(bad, errors.New("-neighbour: not with --curve, whose cells are one stream count and placement"))
	}
	if err := errors.Join(append(bad, cfg.Check())...); err != nil {
		return cfg, "", false, true, err
	}
	return cfg, *sp, *js, false, cliflag.CheckFileEngine(cfg.Engine, cfg.DB)
}

// oltpSettings are run oltp's flags on the fields of cfg.
func oltpSettings(cfg *tpcc.RunConfig) cliflag.Settings {
	ss := cliflag.Settings{cliflag.Str("engine", &cfg.Engine), cliflag.Optional(cliflag.Str("db", &cfg.DB)), cliflag.DSN(&cfg.DSN), cliflag.ConnectTimeoutSetting(&cfg.ConnectTimeout),
		cliflag.Int("warehouses", &cfg.Warehouses), cliflag.Ints("streams", &cfg.Streams), cliflag.List("placement", ";", &cfg.Placements),
		cliflag.Bool("spread", &cfg.Spread), cliflag.Int("data-node", &cfg.DataNode), cliflag.Duration("duration", &cfg.Duration),
		cliflag.Duration("warmup", &cfg.Warmup), cliflag.Int("repeat", &cfg.Repeat), cliflag.Optional(cliflag.Int("streams-per-cpu", &cfg.StreamsPerCPU)),
		cliflag.Optional(cliflag.Bool("augmented", &cfg.Augmented)), cliflag.Optional(cliflag.Bool("neighbour", &cfg.Neighbour)), cliflag.Int("trace", &cfg.Trace),
		cliflag.Int64("seed", &cfg.Seed), cliflag.Optional(cliflag.List("monitor", ",", &cfg.Monitor)), cliflag.Optional(cliflag.Bool("allow-settings", &cfg.AllowSettings))}
	ss = append(ss, loadSettings(&cfg.Load)...)
	return append(ss, cliflag.When(cliflag.Float("monitor-load", &cfg.MonitorLoad), func() bool { return len(cfg.Monitor) > 0 }))
}

// oltpArgv is the one command line that gives cfg: every setting spelled
// out, so that the stored command re-runs the same cells whatever the
// defaults become (the password of a DSN is hidden).
func oltpArgv(cfg tpcc.RunConfig) []string {
	return oltpSettings(&cfg).Argv("run", "oltp")
}

func runOLTP(ctx context.Context, e *env, args []string) error {
	cfg, storePath, asJSON, done, err := oltpFlags(e, args)
	if done || err != nil {
		return err
	}
	if len(cfg.Monitor) > 0 {
		return runOLTPMonitor(ctx, e, cfg, storePath, asJSON)
	}
	if cfg.Curve {
		return runOLTPCurve(ctx, e, cfg, storePath, asJSON)
	}
	return runOLTPConfig(ctx, e, cfg, storePath, asJSON)
}

// runOLTPConfig runs a checked configuration: plan, store, sweep, render.
func runOLTPConfig(ctx context.Context, e *env, cfg tpcc.RunConfig, storePath string, asJSON bool) error {
	_, cells, prog, err := startSweep(e, sweepOut{asJSON: asJSON, spread: cfg.Spread, machine: true}, tpcc.WriteRow, cfg.Spec())
	if err != nil {
		return err
	}
	defer prog.Done()
	rec, err := startRun(ctx, e.withArgs(oltpArgv(cfg)), storePath, pacedKind(result.RunOLTP, cfg.Pacing), cfg)
	if err != nil {
		return err
	}
	tpcc.WriteHeader(prog.table)
	measured, err := sweep.Run(ctx, cfg.Plan(cells), tpcc.NewSweep(cfg, cells[0].DataNode), rec, prog)
	return finishRun(e, rec, err, tpcc.Headline(measured), asJSON, append([]*result.Cell{}, measured...))
}

// monitorRequest is cfg's --monitor request.
func monitorRequest(cfg tpcc.RunConfig) monitor.Request {
	return monitor.Request{Names: cfg.Monitor, Engine: cfg.Engine, DSN: cfg.DSN != "", AllowSettings: cfg.AllowSettings}
}

// runOLTPMonitor runs --monitor on the first stream count and placement
// (runMonitor).
func runOLTPMonitor(ctx context.Context, e *env, cfg tpcc.RunConfig, storePath string, asJSON bool) error {
	fs, err := monitorFacilities(ctx, monitorRequest(cfg), cfg.DSN, cfg.ConnectTimeout)
	if err != nil {
		return err
	}
	spec := cfg.Spec()
	spec.Streams, spec.Placements, spec.Repeat, spec.Neighbour = cfg.Streams[:1], cfg.Placements[:1], 1, false
	_, one, prog, err := startSweep(e, sweepOut{asJSON: asJSON, spread: cfg.Spread, machine: true}, monitor.WriteRow, spec)
	if err != nil {
		return err
	}
	defer prog.Done()
	w := tpcc.NewSweep(cfg, one[0].DataNode)
	return runMonitor(ctx, e, monitorJob[result.Cell]{fs: fs, dsn: cfg.DSN != "", kind: monitor.RunKind, argv: oltpArgv(cfg), config: cfg,
		one: one[0], repeat: cfg.Repeat, window: cfg.Duration, load: cfg.MonitorLoad, pacing: cfg.Pacing, seed: cfg.Seed, plan: cfg.Plan,
		inner:    monitor.Inner[result.Cell]{Sweep: w, Session: w.Session, Kind: result.KindCell, Cell: func(c *result.Cell) *result.Cell { return c }},
		settings: w.ServerSettings}, prog, storePath, asJSON)
}
