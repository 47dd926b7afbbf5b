package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/sweep"
)

// defineMonitorFlags defines --monitor, --allow-settings and
// --monitor-load on fs, for run oltp, run null and run report.
func defineMonitorFlags(fs *flag.FlagSet) {
	fs.String("monitor", "", "measure what monitoring `facilities` cost, off against on: PostgreSQL's pg_stat_statements,auto_explain,auto_explain_analyze,log_all,track_io_timing; MariaDB's performance_schema,general_log,slow_log,slow_log_explain; numalab's trace,sysmon,series (see above)")
	fs.Bool("allow-settings", false, "let --monitor SET PostgreSQL or MariaDB facilities in numalab's sessions on the --dsn server (never its configuration)")
	fs.Float64("monitor-load", monitor.DefaultPacedLoad, "with --monitor: run the pairs again open-loop at this `fraction` of the capacity the saturated off cells measured, and report CPU % and p50/p99 added there (0: saturation only)")
}

// monitorChecks checks a run's monitoring flags. With monitoring on, it
// sets --repeat's default (monitor.MinRepeat) and refuses a bad request
// and pacing (paceFlags names the command's pacing flags); with it off,
// --allow-settings and --monitor-load, whose value it zeroes.
func monitorChecks(fs *flag.FlagSet, on bool, req monitor.Request, paced bool, paceFlags string, repeat *int, load *float64) []error {
	var errs []error
	if on {
		if !cliflag.Given(fs, "repeat") {
			*repeat = monitor.MinRepeat
		}
		if _, err := monitor.Check(req); err != nil {
			errs = append(errs, err)
		}
		if paced {
			errs = append(errs, fmt.Errorf("-monitor: not with %s (it paces its own cells: see --monitor-load)", paceFlags))
		}
		return errs
	}
	if req.AllowSettings {
		errs = append(errs, errors.New("-allow-settings: is for --monitor with PostgreSQL or MariaDB facilities on a --dsn server"))
	}
	if cliflag.Given(fs, "monitor-load") {
		errs = append(errs, errors.New("-monitor-load: is for --monitor"))
	}
	*load = 0
	return errs
}

// monitorFacilities are the facilities of a --monitor request, checked;
// on a user's server (dsn) the server is checked too, before anything is
// measured.
func monitorFacilities(ctx context.Context, r monitor.Request, dsn string, timeout time.Duration) ([]monitor.Facility, error) {
	fs, err := monitor.Check(r)
	if err != nil {
		return nil, err
	}
	if dsn != "" {
		if err := monitor.CheckServer(ctx, dsn, fs, timeout); err != nil {
			return nil, err
		}
	}
	return fs, nil
}

// monitorJob is a --monitor run of a workload whose items are V:
// run oltp's (tpcc-ro), run null's (the null transaction) or run
// report's (transtats).
type monitorJob[V any] struct {
	fs     []monitor.Facility
	dsn    bool     // a user's server (--dsn)
	kind   string   // monitor.RunKind, NullRunKind or ReportRunKind
	argv   []string // the command line stored with the run
	config any      // the configuration stored with the run
	one    sweep.Cell
	repeat int
	window time.Duration
	// load is the paced half's fraction of capacity (0: saturation
	// only), pacing how its calls arrive, seed their randomness.
	load   float64
	pacing sweep.Pacing
	seed   int64
	plan   func([]sweep.Cell) sweep.Plan
	inner  monitor.Inner[V]
	// settings sets what the inner workload's managed server starts with.
	settings func(map[string]string)
}

// runMonitor runs j: what will be set printed, then the facilities' pairs
// of cells of j.one, each cell's row as it is stored, and the cost per
// facility (at saturation, and at the paced load when j.load is set).
func runMonitor[V any](ctx context.Context, e *env, j monitorJob[V], prog *rows[monitor.Cell], storePath string, asJSON bool) error {
	for _, n := range monitor.Changes(j.fs, j.dsn) {
		prog.Note("--monitor: " + n)
	}
	rec, err := startRun(ctx, e.withArgs(j.argv), storePath, j.kind, j.config)
	if err != nil {
		return err
	}
	cells, slots := monitor.Plan(j.one, j.fs, j.repeat)
	if j.load > 0 {
		cells, slots = monitor.TwoLoads(j.one, j.fs, j.repeat)
	}
	plan := j.plan(cells)
	plan.Switch = monitor.Switch(slots)
	if j.load > 0 {
		plan.Pace = monitor.Pacer(slots, j.load, j.pacing, j.seed)
	}
	if plan.Trace == 0 {
		plan.Trace = monitor.DefaultTrace
	}
	j.settings(monitor.ManagedSettings(j.fs))
	monitor.WriteHeader(prog.table, j.kind, j.one, j.repeat, j.window)
	measured, err := sweep.Run(ctx, plan, monitor.Wrap(j.inner, slots), rec, prog)
	an := monitor.Analyze(measured)
	if len(measured) > 0 {
		err = errors.Join(err, rec.Add(monitor.KindAnalysis.Of(an)))
	}
	monitor.WriteAnalysis(prog.table, an)
	var paced *monitor.PacedAnalysis
	if j.load > 0 && len(measured) > len(cells)/2 {
		pa := monitor.AnalyzePaced(measured, j.load)
		paced = &pa
		err = errors.Join(err, rec.Add(monitor.KindPacedAnalysis.Of(pa)))
		monitor.WritePacedAnalysis(prog.table, pa)
	}
	return finishRun(e, rec, err, monitor.Headline(an), asJSON, struct {
		Cells    []monitor.Cell         `json:"cells"`
		Analysis monitor.Analysis       `json:"analysis"`
		Paced    *monitor.PacedAnalysis `json:"paced,omitempty"`
	}{append([]monitor.Cell{}, measured...), an, paced})
}
