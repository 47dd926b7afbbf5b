package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// oltpFlags parses run oltp's command line into a configuration: defaults,
// then the sweep file, then the flags given.
func oltpFlags(e *env, args []string) (cfg tpcc.RunConfig, storePath string, asJSON, done bool, err error) {
	cfg = tpcc.DefaultRunConfig()
	fs := newFlags(e, "run oltp", helpText("run-oltp"))
	file := fs.String("f", "", "sweep `file` (TOML); flags given override it")
	fs.String("engine", cfg.Engine, "engine: sqlite, duckdb or postgres")
	fs.String("db", "", "database `file` for sqlite or duckdb (default numalab-tpcc-wW.db or .duckdb)")
	fs.String("dsn", "", "PostgreSQL `DSN` to use (default: a throwaway server numalab starts and stops)")
	rangedInt(fs, "warehouses", cfg.Warehouses, 1, math.MaxInt32, "TPC-C warehouses W, 1 or more (about 500,000 rows and 80 MB each; refused when they could never fit)")
	fs.String("streams", "1,2,4", "stream counts to sweep, e.g. 1,2,4,8")
	fs.String("placement", "", "placement selectors separated by ';', e.g. 'smt=on;smt=off' (default: all CPUs)")
	fs.Bool("spread", cfg.Spread, "pin stream i to the i-th CPU of the placement alone (false: every stream on all of them)")
	rangedInt(fs, "data-node", cfg.DataNode, -1, 1023, "NUMA node to place the data pages on (-1: leave them where they are)")
	rangedDuration(fs, "duration", cfg.Duration, 10*time.Millisecond, 24*time.Hour, "measured window of each cell, 10ms to 24h")
	rangedDuration(fs, "warmup", cfg.Warmup, 0, time.Hour, "warm-up before each cell's window, excluded from every figure, up to 1h")
	rangedInt(fs, "repeat", cfg.Repeat, 1, 1000, "repetitions of every cell, 1 to 1000")
	rangedInt(fs, "streams-per-cpu", 0, 0, 1024, "leave out cells with more streams than N per logical CPU of their placement (0: none)")
	fs.Bool("augmented", false, "the augmented variant: each transaction also computes avg(i_price) over i_id < 15000")
	fs.Bool("neighbour", false, "add, per repeat, one stream on the first placement's first CPU while a memory-bandwidth neighbour reads on every other CPU (the model's held-out cell)")
	rangedInt(fs, "trace", 0, 0, 1_000_000, "record up to N calls per stream (start, end, type, stream, ok) in the store, up to 1000000")
	fs.Int64("seed", cfg.Seed, "seed for the load and the streams' random numbers")
	fs.String("monitor", "", "measure what monitoring `facilities` cost, off against on, e.g. pg_stat_statements,auto_explain,auto_explain_analyze,log_all,track_io_timing,trace,sysmon,series (see above)")
	fs.Bool("allow-settings", false, "let --monitor SET PostgreSQL facilities in numalab's sessions on the --dsn server (never its configuration)")
	sp := storeFlag(fs)
	js := fs.Bool("json", false, "print the cells as JSON on stdout (the table goes to stderr)")
	done, bad, err := parseChecked(e, fs, args)
	if done {
		return cfg, "", false, true, err
	}
	repeatGiven := false
	if *file != "" {
		md, err := toml.DecodeFile(*file, &cfg)
		repeatGiven = md.IsDefined("repeat")
		if err != nil {
			return cfg, "", false, true, fmt.Errorf("-f: reading sweep file %s: %w", *file, err)
		}
		if un := md.Undecoded(); len(un) > 0 {
			return cfg, "", false, true, fmt.Errorf("-f: %s: unknown setting %q (see 'numalab run oltp --help' for the names)", *file, un[0].String())
		}
	}
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
		case "streams-per-cpu":
			cfg.StreamsPerCPU, err = strconv.Atoi(v)
		case "augmented":
			cfg.Augmented = v == "true"
		case "neighbour":
			cfg.Neighbour = v == "true"
		case "trace":
			cfg.Trace, err = strconv.Atoi(v)
		case "seed":
			cfg.Seed, err = strconv.ParseInt(v, 10, 64)
		case "monitor":
			cfg.Monitor = strings.Split(v, ",")
		case "allow-settings":
			cfg.AllowSettings = v == "true"
		}
		if err != nil {
			bad = append(bad, err)
		}
	})
	if len(cfg.Monitor) > 0 {
		if !repeatGiven && !flagGiven(fs, "repeat") {
			cfg.Repeat = monitor.MinRepeat
		}
		if _, err := monitor.Check(monitorRequest(cfg)); err != nil {
			bad = append(bad, err)
		}
		if cfg.Neighbour {
			bad = append(bad, errors.New("-neighbour: not with --monitor, whose cells are pairs of one stream count and placement"))
		}
	} else if cfg.AllowSettings {
		bad = append(bad, errors.New("-allow-settings: is for --monitor with PostgreSQL facilities on a --dsn server"))
	}
	if err := errors.Join(append(bad, cfg.Check())...); err != nil {
		return cfg, "", false, true, err
	}
	return cfg, *sp, *js, false, checkFileEngine(cfg.Engine, cfg.DB)
}

// oltpArgv is the one command line that gives cfg: every setting spelled
// out, so that the stored command re-runs the same cells whatever the
// defaults become (the password of a DSN is hidden).
func oltpArgv(cfg tpcc.RunConfig) []string {
	a := []string{"run", "oltp", "--engine", cfg.Engine}
	if cfg.DB != "" {
		a = append(a, "--db", cfg.DB)
	}
	if cfg.DSN != "" {
		a = append(a, "--dsn", result.Redact(cfg.DSN))
	}
	a = append(a, "--warehouses", strconv.Itoa(cfg.Warehouses), "--streams", intsArg(cfg.Streams),
		"--placement", strings.Join(cfg.Placements, ";"), "--spread="+strconv.FormatBool(cfg.Spread),
		"--data-node", strconv.Itoa(cfg.DataNode), "--duration", cfg.Duration.String(), "--warmup", cfg.Warmup.String(),
		"--repeat", strconv.Itoa(cfg.Repeat))
	if cfg.StreamsPerCPU > 0 {
		a = append(a, "--streams-per-cpu", strconv.Itoa(cfg.StreamsPerCPU))
	}
	if cfg.Augmented {
		a = append(a, "--augmented")
	}
	if cfg.Neighbour {
		a = append(a, "--neighbour")
	}
	a = append(a, "--trace", strconv.Itoa(cfg.Trace), "--seed", strconv.FormatInt(cfg.Seed, 10))
	if len(cfg.Monitor) > 0 {
		a = append(a, "--monitor", strings.Join(cfg.Monitor, ","))
	}
	if cfg.AllowSettings {
		a = append(a, "--allow-settings")
	}
	return a
}

func runOLTP(ctx context.Context, e *env, args []string) error {
	cfg, storePath, asJSON, done, err := oltpFlags(e, args)
	if done || err != nil {
		return err
	}
	if len(cfg.Monitor) > 0 {
		return runOLTPMonitor(ctx, e, cfg, storePath, asJSON)
	}
	return runOLTPConfig(ctx, e, cfg, storePath, asJSON)
}

// runOLTPConfig runs a checked configuration: plan, store, sweep, render.
func runOLTPConfig(ctx context.Context, e *env, cfg tpcc.RunConfig, storePath string, asJSON bool) error {
	machine, err := topo.FromSysfs("/")
	if err != nil {
		return fmt.Errorf("reading this machine's topology: %w", err)
	}
	cells, notes, err := sweep.Resolve(machine, cfg.Spec(), cfg.Spread)
	if err != nil {
		return err
	}
	prog := &oltpRows{progress: newProgress(e.stderr), table: e.stdout}
	if asJSON {
		prog.table = e.stderr
	}
	defer prog.Done()
	for _, n := range append(sweep.MachineNotes(machine), notes...) {
		prog.Note("note: " + n)
	}
	rec, err := startRun(ctx, e.withArgs(oltpArgv(cfg)), storePath, result.RunOLTP, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(prog.table, oltpRowFormat, "cell", "streams", "placement", "data", "tps", "tps/core", "p95 ms", "CPU %", "disk")
	measured, err := sweep.Run(ctx, cfg.Plan(cells), tpcc.NewSweep(cfg, cells[0].DataNode), rec, prog)
	if ferr := rec.Finish(err, oltpHeadline(measured)); ferr != nil {
		return errors.Join(err, ferr)
	}
	if asJSON {
		if measured == nil {
			measured = []*result.Cell{}
		}
		if jerr := writeJSON(e.stdout, measured); jerr != nil {
			return errors.Join(err, jerr)
		}
	}
	return err
}

// oltpRows prints a row per cell as it is stored.
type oltpRows struct {
	*progress
	table io.Writer
}

// oltpRowFormat lays out the table printed as cells finish (rows are
// printed one at a time, so widths are fixed).
const oltpRowFormat = "%4v %7v  %-16v %-7v %9v %9v %8v %5v  %v\n"

func (r *oltpRows) Measured(sc sweep.Cell, c *result.Cell) {
	r.Done()
	sel := c.Placement
	if sel == "" {
		sel = "all"
	}
	if len(sc.Neighbour) > 0 {
		sel += " +neighbour"
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
	fmt.Fprintf(r.table, oltpRowFormat, c.Index, c.Streams, sel, data, fmt.Sprintf("%.0f", c.TPS), fmt.Sprintf("%.0f", c.TPSPerCore),
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
	return fmt.Sprintf("%.0f tps (%.0f tpm) at %s, %.0f tps/core", best.TPS, best.TPM, sweep.Count(best.Streams, "stream"), best.TPSPerCore)
}

// monitorRequest is cfg's --monitor request.
func monitorRequest(cfg tpcc.RunConfig) monitor.Request {
	return monitor.Request{Names: cfg.Monitor, Engine: cfg.Engine, DSN: cfg.DSN != "", AllowSettings: cfg.AllowSettings}
}

// runOLTPMonitor runs --monitor: a user's server checked before anything
// is measured, what will be set printed, then the facilities' pairs of
// cells, each cell's row as it is stored, and the cost per facility.
func runOLTPMonitor(ctx context.Context, e *env, cfg tpcc.RunConfig, storePath string, asJSON bool) error {
	fs, err := monitor.Check(monitorRequest(cfg))
	if err != nil {
		return err
	}
	machine, err := topo.FromSysfs("/")
	if err != nil {
		return fmt.Errorf("reading this machine's topology: %w", err)
	}
	spec := cfg.Spec()
	spec.Streams, spec.Placements, spec.Repeat, spec.Neighbour = cfg.Streams[:1], cfg.Placements[:1], 1, false
	one, notes, err := sweep.Resolve(machine, spec, cfg.Spread)
	if err != nil {
		return err
	}
	if cfg.DSN != "" {
		if err := monitor.CheckServer(ctx, cfg.DSN, fs); err != nil {
			return err
		}
	}
	prog := &monitorRows{progress: newProgress(e.stderr), table: e.stdout}
	if asJSON {
		prog.table = e.stderr
	}
	defer prog.Done()
	for _, n := range append(sweep.MachineNotes(machine), notes...) {
		prog.Note("note: " + n)
	}
	for _, n := range monitor.Changes(fs, cfg.DSN != "") {
		prog.Note("--monitor: " + n)
	}
	rec, err := startRun(ctx, e.withArgs(oltpArgv(cfg)), storePath, monitor.RunKind, cfg)
	if err != nil {
		return err
	}
	cells, slots := monitor.Plan(one[0], fs, cfg.Repeat)
	plan := cfg.Plan(cells)
	plan.Switch = monitor.Switch(slots)
	if plan.Trace == 0 {
		plan.Trace = monitor.DefaultTrace
	}
	w := tpcc.NewSweep(cfg, one[0].DataNode)
	w.ServerSettings(monitor.ManagedSettings(fs))
	fmt.Fprintf(prog.table, "%s: %s, %s per facility and side, %v windows\n", monitor.RunKind, one[0], sweep.Count(cfg.Repeat, "repeat"), cfg.Duration)
	fmt.Fprintf(prog.table, monitorRowFormat, "cell", "facility", "state", "tps", "p95 ms")
	measured, err := sweep.Run(ctx, plan, monitor.Wrap(w, w.Session, slots), rec, prog)
	an := monitor.Analyze(measured)
	if len(measured) > 0 {
		err = errors.Join(err, rec.Add(monitor.KindAnalysis.Of(an)))
	}
	writeMonitorTable(prog.table, an)
	if ferr := rec.Finish(err, monitorHeadline(an)); ferr != nil {
		return errors.Join(err, ferr)
	}
	if asJSON {
		if jerr := writeJSON(e.stdout, struct {
			Cells    []monitor.Cell   `json:"cells"`
			Analysis monitor.Analysis `json:"analysis"`
		}{append([]monitor.Cell{}, measured...), an}); jerr != nil {
			return errors.Join(err, jerr)
		}
	}
	return err
}

// monitorRows prints a row per monitoring cell as it is stored.
type monitorRows struct {
	*progress
	table io.Writer
}

const monitorRowFormat = "%4v  %-21v %-5v %9v %8v\n"

func (r *monitorRows) Measured(_ sweep.Cell, c monitor.Cell) {
	r.Done()
	cut := ""
	if c.Cell.Interrupted {
		cut = " (cut short)"
	}
	fmt.Fprintf(r.table, monitorRowFormat, c.Cell.Index, c.Facility, c.State(), fmt.Sprintf("%.0f", c.Cell.TPS), fmt.Sprintf("%.3f%s", c.Cell.Total.P95US/1000, cut))
}

// writeMonitorTable prints the cost of each facility.
func writeMonitorTable(w io.Writer, an monitor.Analysis) {
	const f = "%-21v %16v %16v %-28v  %v\n"
	fmt.Fprintf(w, "\nWhat each facility costs: tps on/off, Hodges-Lehmann estimate with its %.0f%% interval; cost = 1 - ratio\n", 100*stats.Confidence)
	fmt.Fprintf(w, f, "facility", "tps off (median)", "tps on (median)", "ratio on/off [interval] n", "cost")
	for _, o := range an.Overheads {
		r := fmt.Sprintf("%.3f n=%d+%d", o.Ratio.Estimate, o.Ratio.NA, o.Ratio.NB)
		if o.Ratio.HasCI {
			r = fmt.Sprintf("%.3f [%.3f, %.3f] n=%d+%d", o.Ratio.Estimate, o.Ratio.Lo, o.Ratio.Hi, o.Ratio.NA, o.Ratio.NB)
		}
		fmt.Fprintf(w, f, o.Facility, fmt.Sprintf("%.0f", o.Off.Median), fmt.Sprintf("%.0f", o.On.Median), r, o.Cost())
	}
}

// monitorHeadline names the costliest facility shown to cost, for
// 'numalab runs'.
func monitorHeadline(an monitor.Analysis) string {
	var top *monitor.Overhead
	for i, o := range an.Overheads {
		if o.Verdict == monitor.Costs && (top == nil || o.Ratio.Estimate < top.Ratio.Estimate) {
			top = &an.Overheads[i]
		}
	}
	if top == nil {
		return fmt.Sprintf("no cost shown in %d facilities", len(an.Overheads))
	}
	return fmt.Sprintf("%s %s", top.Facility, top.Cost())
}
