package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/planest"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/workload/transtats"
)

// reportFlags parses run report's command line into a checked
// configuration, and the DSN with its password that the run connects with.
func reportFlags(e *env, args []string) (cfg transtats.RunConfig, dsn, storePath string, asJSON, done bool, err error) {
	fs := cliflag.New(e.stderr, "run report", helpText("run-report"))
	cliflag.EngineFlags(fs, "sqlite", cliflag.EnginesDOP(), "transtats-N.sqlite or .duckdb")
	fs.Int64("rows", transtats.DefaultRows, "rows of tran_stats (N), up to 200000000")
	fs.Int64("rate", transtats.DefaultRate, "rows per second of tran_begin (R): the rows in P2's window; the data's shape, not a pacing rate (that is --arrival-rate)")
	fs.String("streams", "1", "stream counts to sweep, e.g. 1,2,4,8")
	fs.String("dop", "1", "degrees of parallelism to sweep, e.g. 1,2,4")
	fs.String("query", "P1,P2", "queries: P1, P2 or P1,P2")
	cliflag.RangedDuration(fs, "duration", 30*time.Second, 10*time.Millisecond, 24*time.Hour, "measured window of each cell, 10ms to 24h")
	cliflag.RangedDuration(fs, "warmup", 5*time.Second, 0, time.Hour, "warm-up before each cell's window, excluded from every figure, up to 1h")
	fs.String("placement", "", "placement selector for the streams, e.g. 'node=0,smt=off' (default: not pinned)")
	fs.Int("data-node", -1, "NUMA node to place the data on before the cells (-1: leave it where it is); data=nodeN in a placement wins")
	fs.Uint64("seed", 1, "seed of the streams' random numbers (P2's t)")
	cliflag.RangedInt(fs, "repeat", 1, 1, 1000, "repetitions of every cell, 1 to 1000, all cells once before any again")
	cliflag.RangedInt(fs, "hog", 0, 0, runtime.NumCPU(), "keep `N` of the placement's CPUs busy with a plain CPU-bound thread during every cell (the last N its streams would take), 0 to the machine's CPUs")
	cliflag.RangedDuration(fs, "think", 0, 0, time.Hour, "closed loop with a think `time` after each query, e.g. 100ms, up to 1h (0: none; see --think-dist)")
	fs.String("think-dist", "", "think times: fixed (the default) or exp (exponential with mean --think)")
	fs.Float64("arrival-rate", 0, "open loop: queries per `second` over all streams (what --rate is in the other run commands; here --rate is the data's); latency runs from each query's intended start, and queries that start over 1ms late are counted (0: closed loop)")
	fs.String("arrivals", "", "arrivals of --arrival-rate: poisson (the default) or uniform")
	defineMonitorFlags(fs)
	sp := cliflag.Store(fs)
	js := fs.Bool("json", false, "print the run as JSON on stdout at the end (the table goes to stderr)")
	done, errs, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return cfg, "", "", false, true, err
	}
	errs = append(errs, reportSettings(&cfg).Apply(fs, true)...)
	errs = append(errs, monitorChecks(fs, len(cfg.Monitor) > 0, reportMonitorRequest(cfg), cfg.Paced(), "--arrival-rate or --think", &cfg.Repeat, &cfg.MonitorLoad)...)
	errs = append(errs, reportPacingError(cfg.Load.Check()))
	if err := errors.Join(errs...); err != nil {
		return cfg, "", "", false, true, err
	}
	dsn, cfg.DSN = cfg.DSN, result.Redact(cfg.DSN)
	spec, _ := engine.Lookup(cfg.Engine)
	d := spec.Dialect
	if cfg.DB == "" && !spec.Server {
		cfg.DB = transtats.DefaultPath(d, cfg.Rows)
	}
	if err := cliflag.CheckFileEngine(cfg.Engine, cfg.DB); err != nil {
		return cfg, "", "", false, true, err
	}
	if err := transtats.CheckFits(d, engine.Options{Path: cfg.DB, DSN: dsn}, cfg.Rows); err != nil {
		return cfg, "", "", false, true, cliflag.Bad("rows", strconv.FormatInt(cfg.Rows, 10), "could never be loaded here: "+err.Error())
	}
	return cfg, dsn, *sp, *js, false, nil
}

// reportSettings are run report's flags on the fields of cfg, each value
// checked as it is set (those of --dsn, --db and --dop against the
// --engine set before them).
func reportSettings(cfg *transtats.RunConfig) cliflag.Settings {
	return append(cliflag.EngineSettings(&cfg.Engine, &cfg.DSN, &cfg.ConnectTimeout, &cfg.DB), cliflag.Settings{
		cliflag.Int64("rows", &cfg.Rows),
		cliflag.Validated(cliflag.Int64("rate", &cfg.Rate), func(string) error {
			if err := transtats.CheckSize(cfg.Rows, cfg.Rate); err != nil {
				return fmt.Errorf("-rows/-rate: %w", err)
			}
			return nil
		}),
		cliflag.Validated(cliflag.Ints("streams", &cfg.Streams), func(v string) error {
			if why := sweep.TooManyStreams(cfg.Streams, runtime.NumCPU()); why != "" {
				return cliflag.Bad("streams", v, why)
			}
			return nil
		}),
		cliflag.Validated(cliflag.Ints("dop", &cfg.DOP), func(v string) error {
			if err := transtats.CheckDOP(engine.DialectOf(cfg.Engine), cfg.DOP, runtime.NumCPU()); err != nil {
				return cliflag.Bad("dop", v, err.Error())
			}
			return nil
		}),
		cliflag.Field("query", &cfg.Queries, func(s string) ([]string, error) {
			q, err := transtats.ParseQueries(s)
			if err != nil {
				return nil, fmt.Errorf("-query: %w", err)
			}
			return q, nil
		}, func(q []string) string { return strings.Join(q, ",") }),
		cliflag.Duration("duration", &cfg.Duration),
		cliflag.Duration("warmup", &cfg.Warmup),
		cliflag.Optional(cliflag.Str("placement", &cfg.Placement)),
		cliflag.Int("data-node", &cfg.DataNode),
		cliflag.Uint64("seed", &cfg.Seed),
		// A run stored before repeats has 0: it ran once.
		cliflag.Field("repeat", &cfg.Repeat, strconv.Atoi, func(n int) string { return strconv.Itoa(max(n, 1)) }),
		cliflag.Optional(cliflag.Int("hog", &cfg.Hog)),
		cliflag.Optional(cliflag.Duration("think", &cfg.Pacing.Think)), cliflag.Optional(cliflag.Str("think-dist", &cfg.Pacing.ThinkDist)),
		cliflag.Optional(cliflag.Float("arrival-rate", &cfg.Pacing.Rate)), cliflag.Optional(cliflag.Str("arrivals", &cfg.Pacing.Arrivals)),
		cliflag.Optional(cliflag.Field("monitor", &cfg.Monitor, splitNames, func(v []string) string { return strings.Join(v, ",") })),
		cliflag.Optional(cliflag.Bool("allow-settings", &cfg.AllowSettings)),
		cliflag.When(cliflag.Float("monitor-load", &cfg.MonitorLoad), func() bool { return len(cfg.Monitor) > 0 }),
	}...)
}

// reportMonitorRequest is cfg's --monitor request.
func reportMonitorRequest(cfg transtats.RunConfig) monitor.Request {
	return monitor.Request{Names: cfg.Monitor, Engine: cfg.Engine, DSN: cfg.DSN != "", AllowSettings: cfg.AllowSettings}
}

// reportPacingError names run report's open-loop flag, --arrival-rate,
// where sweep.Pacing's checks name --rate (which here is the data's).
func reportPacingError(err error) error {
	if err == nil {
		return nil
	}
	r := strings.NewReplacer("--rate or --curve", "--arrival-rate", "--rate", "--arrival-rate", "-rate:", "-arrival-rate:")
	return errors.New(r.Replace(err.Error()))
}

// reportArgv is the one command line that gives cfg, every setting
// spelled out (the password of a DSN is hidden).
func reportArgv(cfg transtats.RunConfig) []string {
	return reportSettings(&cfg).Argv("run", "report")
}

// reportOutput is what --json prints.
type reportOutput struct {
	Load     *result.BulkLoad      `json:"load,omitempty"`
	Engine   *engine.Info          `json:"engine,omitempty"`
	Cells    []*result.QueryCell   `json:"cells"`
	Findings []*result.PlanFinding `json:"findings"`
	// Estimates set the optimizer's estimated speedup beside the measured
	// one (PostgreSQL; NoEstimate says why not on another engine).
	Estimates  []planest.Row `json:"estimates"`
	NoEstimate string        `json:"no_estimate,omitempty"`
}

func runReport(ctx context.Context, e *env, args []string) error {
	cfg, dsn, storePath, asJSON, done, err := reportFlags(e, args)
	if done || err != nil {
		return err
	}
	if len(cfg.Monitor) > 0 {
		return runReportMonitor(ctx, e, cfg, dsn, storePath, asJSON)
	}
	return runReportConfig(ctx, e, cfg, dsn, storePath, asJSON)
}

// runReportMonitor runs --monitor (runMonitor) on the first query, stream
// count and DOP of cfg.
func runReportMonitor(ctx context.Context, e *env, cfg transtats.RunConfig, dsn, storePath string, asJSON bool) error {
	fs, err := monitorFacilities(ctx, reportMonitorRequest(cfg), dsn, cfg.ConnectTimeout)
	if err != nil {
		return err
	}
	spec := cfg.Spec()
	spec.Streams, spec.DOPs, spec.Types, spec.Repeat = cfg.Streams[:1], cfg.DOP[:1], cfg.Queries[:1], 1
	_, one, prog, err := startSweep(e, sweepOut{asJSON: asJSON}, monitor.WriteRow, spec)
	if err != nil {
		return err
	}
	defer prog.Done()
	if err := checkHog(cfg.Hog, one); err != nil {
		return err
	}
	w := transtats.NewSweep(cfg, dsn, one[0].DataNode)
	return runMonitor(ctx, e, monitorJob[result.QueryCell]{fs: fs, dsn: cfg.DSN != "", kind: monitor.ReportRunKind, argv: reportArgv(cfg), config: cfg,
		one: one[0], repeat: cfg.Repeat, window: cfg.Duration, load: cfg.MonitorLoad, pacing: cfg.Pacing, seed: int64(cfg.Seed), plan: cfg.Plan,
		inner:    monitor.Inner[result.QueryCell]{Sweep: w, Session: w.Session, Kind: result.KindQueryCell, Cell: func(q *result.QueryCell) *result.Cell { return q.Cell }},
		settings: w.ServerSettings}, prog, storePath, asJSON)
}

// runReportConfig runs a checked configuration: plan, store, sweep, render.
func runReportConfig(ctx context.Context, e *env, cfg transtats.RunConfig, dsn, storePath string, asJSON bool) error {
	_, cells, prog, err := startSweep(e, sweepOut{asJSON: asJSON}, transtats.WriteRow, cfg.Spec())
	if err != nil {
		return err
	}
	defer prog.Done()
	if err := checkHog(cfg.Hog, cells); err != nil {
		return err
	}
	rec, err := startRun(ctx, e.withArgs(reportArgv(cfg)), storePath, pacedKind(result.RunQueries, cfg.Pacing), cfg)
	if err != nil {
		return err
	}
	w := transtats.NewSweep(cfg, dsn, cells[0].DataNode) // one data node for a server (OneDataNode)
	transtats.WriteHeader(prog.table)
	measured, err := sweep.Run(ctx, cfg.Plan(cells), w, rec, prog)
	out := reportOutput{Cells: measured, Findings: w.Findings(), Load: w.Load(), Engine: w.Info(),
		Estimates: transtats.Estimates(measured), NoEstimate: transtats.NoEstimate(cfg.Engine, cfg.DOP)}
	if out.Cells == nil {
		out.Cells = []*result.QueryCell{}
	}
	if out.Findings == nil {
		out.Findings = []*result.PlanFinding{}
	}
	if out.Estimates == nil {
		out.Estimates = []planest.Row{}
	}
	if !asJSON {
		planest.WriteTable(prog.table, out.Estimates)
		if out.NoEstimate != "" {
			fmt.Fprintf(prog.table, "\n%s\n", out.NoEstimate)
		}
	}
	return finishRun(e, rec, err, transtats.Headline(cfg, measured), asJSON, out)
}

// checkHog refuses a --hog of more CPUs than a cell's placement has
// (run report, run tpch): the busy threads would double up on CPUs, and
// the run would be labelled with more busy CPUs than there were.
func checkHog(n int, cells []sweep.Cell) error {
	if n == 0 {
		return nil
	}
	for _, c := range cells {
		if _, err := place.HogCPUs(c.Place.Streams, n); err != nil {
			where := cmp.Or(c.Placement, "(all CPUs)")
			return cliflag.Bad("hog", strconv.Itoa(n), fmt.Sprintf("is more than placement %s has: %v (give --hog up to its CPUs)", where, err))
		}
	}
	return nil
}
