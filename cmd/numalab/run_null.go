package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/workload/null"
)

// nullFlags parses run null's command line into a checked configuration:
// the defaults, then the flags.
func nullFlags(e *env, args []string) (cfg null.RunConfig, storePath string, asJSON, done bool, err error) {
	cfg = null.DefaultRunConfig()
	fs := cliflag.New(e.stderr, "run null", helpText("run-null"))
	cliflag.EngineFlags(fs, cfg.Engine, null.Engines(), "")
	fs.String("transport", strings.Join(cfg.Transports, ","), "server transports: unix, tcp or unix,tcp")
	fs.String("pairing", strings.Join(cfg.Pairings, ","), "client/backend pairings to run")
	fs.String("protocol", cfg.Protocol, "how the server call is sent: prepared or simple")
	fs.String("call", null.CallSelect1, "what a round trip asks: select1 (SELECT 1) or point-select (sysbench's oltp_point_select on numalab's sbtest1; --engine mariadb, --protocol prepared)")
	fs.String("streams", cliflag.FormatInts(cfg.Streams), "stream counts to sweep, e.g. 1,2,4")
	cliflag.RangedDuration(fs, "duration", cfg.Duration, 10*time.Millisecond, 24*time.Hour, "measured window of each cell, 10ms to 24h")
	cliflag.RangedDuration(fs, "warmup", cfg.Warmup, 0, time.Hour, "warm-up before each cell's window, excluded from every figure, up to 1h")
	cliflag.RangedInt(fs, "repeat", cfg.Repeat, 1, 1000, "repetitions of every cell, interleaved, 1 to 1000")
	definePacingFlags(fs)
	defineMonitorFlags(fs)
	sp := cliflag.Store(fs)
	js := fs.Bool("json", false, "print the cells as JSON on stdout at the end (the table goes to stderr)")
	done, errs, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return cfg, "", false, true, err
	}
	errs = append(errs, nullSettings(&cfg).Apply(fs, true)...)
	if why := sweep.TooManyStreams(cfg.Streams, runtime.NumCPU()); why != "" {
		errs = append(errs, cliflag.Bad("streams", cliflag.FormatInts(cfg.Streams), why))
	}
	if cfg.DSN != "" && !cliflag.Given(fs, "transport") {
		cfg.Transports = []string{null.DSNTransport(cfg.Engine, cfg.DSN)}
	}
	spec, _ := engine.Lookup(cfg.Engine)
	if !spec.Server {
		cfg.Transports = nil
	}
	errs = append(errs, monitorChecks(fs, len(cfg.Monitor) > 0 && spec.Server, nullMonitorRequest(cfg), cfg.Paced(), "--rate or --think", &cfg.Repeat, &cfg.MonitorLoad)...)
	if err := errors.Join(append(errs, cfg.Check())...); err != nil {
		return cfg, "", false, true, err
	}
	return cfg, *sp, *js, false, nil
}

// nullSettings are run null's flags on the fields of cfg; a server's
// transport, pairing and protocol are spelled out for it alone.
func nullSettings(cfg *null.RunConfig) cliflag.Settings {
	pg := func() bool { spec, _ := engine.Lookup(cfg.Engine); return spec.Server }
	ss := cliflag.Settings{cliflag.Str("engine", &cfg.Engine), cliflag.DSN(&cfg.DSN), cliflag.ConnectTimeoutSetting(&cfg.ConnectTimeout),
		cliflag.When(cliflag.List("transport", ",", &cfg.Transports), pg), cliflag.When(cliflag.List("pairing", ",", &cfg.Pairings), pg),
		cliflag.When(cliflag.Str("protocol", &cfg.Protocol), pg), cliflag.When(cliflag.Str("call", &cfg.Call), func() bool { return null.PointSelectOn(cfg.Engine) }),
		cliflag.Ints("streams", &cfg.Streams), cliflag.Duration("duration", &cfg.Duration), cliflag.Duration("warmup", &cfg.Warmup), cliflag.Int("repeat", &cfg.Repeat),
		cliflag.Optional(cliflag.Field("monitor", &cfg.Monitor, splitNames, func(v []string) string { return strings.Join(v, ",") })),
		cliflag.Optional(cliflag.Bool("allow-settings", &cfg.AllowSettings)),
		cliflag.When(cliflag.Float("monitor-load", &cfg.MonitorLoad), func() bool { return len(cfg.Monitor) > 0 })}
	return append(ss, pacingSettings(&cfg.Pacing)...)
}

// splitNames is a comma-separated list of names, none when empty.
func splitNames(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, ","), nil
}

// nullMonitorRequest is cfg's --monitor request.
func nullMonitorRequest(cfg null.RunConfig) monitor.Request {
	return monitor.Request{Names: cfg.Monitor, Engine: cfg.Engine, DSN: cfg.DSN != "", AllowSettings: cfg.AllowSettings}
}

// nullArgv is the one command line that gives cfg, every setting spelled
// out (the password of a DSN is hidden).
func nullArgv(cfg null.RunConfig) []string {
	return nullSettings(&cfg).Argv("run", "null")
}

func runNull(ctx context.Context, e *env, args []string) error {
	cfg, storePath, asJSON, done, err := nullFlags(e, args)
	if done || err != nil {
		return err
	}
	if len(cfg.Monitor) > 0 {
		return runNullMonitor(ctx, e, cfg, storePath, asJSON)
	}
	return runNullConfig(ctx, e, cfg, storePath, asJSON)
}

// nullCells are cfg's cells on this machine, their layout and the
// matrix (null.RunConfig.Cells); an error when the machine offers none of
// the pairings asked for.
func nullCells(cfg null.RunConfig) ([]sweep.Cell, []null.Layout, []null.Pairing, error) {
	machine, err := topo.FromSysfs("/")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading this machine's topology: %w", err)
	}
	cells, layout, matrix := cfg.Cells(machine)
	if len(cells) == 0 {
		var why []string
		for _, p := range null.Select(matrix, cfg.Pairings) {
			why = append(why, p.String())
		}
		return nil, nil, nil, fmt.Errorf("-pairing: this machine offers none of %s (%s)", strings.Join(cfg.Pairings, ", "), strings.Join(why, "; "))
	}
	return cells, layout, matrix, nil
}

// runNullConfig runs a checked configuration: cells, store, sweep, render.
func runNullConfig(ctx context.Context, e *env, cfg null.RunConfig, storePath string, asJSON bool) error {
	cells, layout, matrix, err := nullCells(cfg)
	if err != nil {
		return err
	}
	prog := newRows(e, asJSON, null.WriteRow)
	defer prog.Done()
	kind := null.RunKind
	if cfg.Call == null.CallPointSelect {
		kind = null.PointSelectKind
	}
	rec, err := startRun(ctx, e.withArgs(nullArgv(cfg)), storePath, pacedKind(kind, cfg.Pacing), cfg)
	if err != nil {
		return err
	}
	null.WriteHeader(prog.table)
	measured, err := sweep.Run(ctx, cfg.Plan(cells), null.NewSweep(cfg, layout, matrix), rec, prog)
	return finishRun(e, rec, err, null.Headline(measured), asJSON, append([]*null.Cell{}, measured...))
}

// runNullMonitor runs --monitor (runMonitor) on the first cell of cfg:
// its first transport, pairing this machine offers and stream count.
// With --monitor-load the plan has twice the cells, all of that layout.
func runNullMonitor(ctx context.Context, e *env, cfg null.RunConfig, storePath string, asJSON bool) error {
	fs, err := monitorFacilities(ctx, nullMonitorRequest(cfg), cfg.DSN, cfg.ConnectTimeout)
	if err != nil {
		return err
	}
	cells, layout, matrix, err := nullCells(cfg)
	if err != nil {
		return err
	}
	// Every cell of the plan runs the first cell's layout.
	one := slices.Repeat(layout[:1], len(fs)*cfg.Repeat*4)
	w := null.NewSweep(cfg, one, matrix)
	prog := newRows(e, asJSON, monitor.WriteRow)
	defer prog.Done()
	p := one[0].Pairing
	prog.Note(fmt.Sprintf("--monitor: every cell runs %s over %s, %s: client on cpu %d, backend on cpu %d", w.Types()[0], one[0].Transport, p.Name, p.Client, p.Backend))
	return runMonitor(ctx, e, monitorJob[null.Cell]{fs: fs, dsn: cfg.DSN != "", kind: monitor.NullRunKind, argv: nullArgv(cfg), config: cfg,
		one: cells[0], repeat: cfg.Repeat, window: cfg.Duration, load: cfg.MonitorLoad, pacing: cfg.Pacing, seed: 1, plan: cfg.Plan,
		inner:    monitor.Inner[null.Cell]{Sweep: w, Session: w.Session, Kind: null.KindCell, Cell: func(c *null.Cell) *result.Cell { return &c.Cell }},
		settings: w.ServerSettings}, prog, storePath, asJSON)
}
