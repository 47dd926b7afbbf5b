package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/workload/null"
)

// nullFlags parses run null's command line into a checked configuration:
// the defaults, then the flags.
func nullFlags(e *env, args []string) (cfg null.RunConfig, storePath string, asJSON, done bool, err error) {
	cfg = null.DefaultRunConfig()
	fs, sp, js := runFlagSet(e, "null", cfg.Settings(), "print the cells as JSON on stdout at the end (the table goes to stderr)")
	done, errs, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return cfg, "", false, true, err
	}
	errs = append(errs, cfg.Settings().Apply(fs, true)...)
	if err := errors.Join(append(errs, cfg.CheckFlags(fs)...)...); err != nil {
		return cfg, "", false, true, err
	}
	return cfg, *sp, *js, false, nil
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
// matrix (null.RunConfig.Offered).
func nullCells(cfg null.RunConfig) ([]sweep.Cell, []null.Layout, []null.Pairing, error) {
	machine, err := topo.FromSysfs("/")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading this machine's topology: %w", err)
	}
	return cfg.Offered(machine)
}

// runNullConfig runs a checked configuration: cells, store, sweep, render.
func runNullConfig(ctx context.Context, e *env, cfg null.RunConfig, storePath string, asJSON bool) error {
	cells, layout, matrix, err := nullCells(cfg)
	if err != nil {
		return err
	}
	prog := newRows(e, asJSON, null.WriteRow)
	defer prog.Done()
	rec, err := startRun(ctx, e.withArgs(cfg.Argv()), storePath, pacedKind(cfg.Kind(), cfg.Pacing), cfg)
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
	fs, err := monitor.CheckRequest(ctx, cfg.MonitorRequest(), cfg.DSN, cfg.ConnectTimeout)
	if err != nil {
		return err
	}
	cells, layout, matrix, err := nullCells(cfg)
	if err != nil {
		return err
	}
	w, note := cfg.MonitorSweep(len(fs), layout, matrix)
	prog := newRows(e, asJSON, monitor.WriteRow)
	defer prog.Done()
	prog.Note(note)
	return runMonitor(ctx, e, cfg.MonitorJob(fs, cells[0], w), cfg.DSN != "", cfg.Argv(), cfg, prog, storePath, asJSON)
}
