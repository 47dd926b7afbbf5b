package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/units"
)

// cmdProbe measures the machine: probe mem, probe io.
func cmdProbe(ctx context.Context, e *env, args []string) error {
	return subcommands(ctx, e, args, "probe", "probe", []command{{"mem", "", cmdProbeMem}, {"io", "", cmdProbeIO}})
}

func cmdProbeMem(ctx context.Context, e *env, args []string) error {
	fs := cliflag.New(e.stderr, "probe mem", helpText("probe")+helpText("probe-mem"))
	quick := fs.Bool("quick", false, "short probe (about 10 s): 2 sizes per doubling up to 512m, fewer extras")
	var maxB, minB units.Bytes
	fs.Var(&maxB, "max", "largest working set `size`, e.g. 256m; must pass 4x the last-level cache to reach DRAM (default 1g, 512m with --quick)")
	fs.Var(&minB, "min", "smallest working set `size` (default 4k, 8k with --quick)")
	pages := fs.String("pages", "both", "page size: 4k, 2m (transparent huge pages via madvise) or both")
	nodes := fs.String("nodes", "", "NUMA nodes for the matrix, e.g. 0,1 (default all)")
	samples := cliflag.RangedInt(fs, "samples", 3, 1, 100, "clean windows per point, 1 to 100")
	window := cliflag.RangedInt(fs, "window", 50, 1, 10000, "length of one timed window in ms, 1 to 10000")
	repeats := cliflag.RangedInt(fs, "repeats", 0, 1, 100, "times the largest working set is measured, each after the first in a fresh mapping, 1 to 100 (default 3, 1 with --quick)")
	perDoubling := cliflag.RangedInt(fs, "per-doubling", 0, 1, 16, "ladder sizes per doubling, 1 to 16 (default 4, 2 with --quick)")
	jsonOut := fs.Bool("json", false, "print the whole report as JSON instead of tables")
	storePath := cliflag.Store(fs)
	noStore := fs.Bool("no-store", false, "do not store the run")
	done, errs, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return err
	}
	cfg := memlat.DefaultConfig(*quick)
	if maxB != 0 {
		cfg.MaxBytes = int64(maxB)
	}
	if minB != 0 {
		cfg.MinBytes = int64(minB)
	}
	errs = append(errs, cfg.SetPagesNodes(*pages, *nodes)...)
	cfg.SetSamples(*samples)
	cfg.WindowMS = *window
	if *repeats > 0 { // 0: not given
		cfg.Repeats = *repeats
	}
	if *perDoubling > 0 { // 0: not given
		cfg.PerDoubling = *perDoubling
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}

	t, err := topo.FromSysfs("/")
	if err != nil {
		return fmt.Errorf("probing memory: %w", err)
	}
	mi, err := memlat.ReadMeminfo("/")
	if err != nil {
		return fmt.Errorf("probing memory: %w", err)
	}
	if err := cfg.Validate(t, mi); err != nil {
		return fmt.Errorf("probing memory: %w", err)
	}

	var rec *recorder
	emit := func(result.Entry) error { return nil }
	if !*noStore {
		rec, err = startRun(ctx, e, *storePath, result.RunProbeMem, cfg)
		if err != nil {
			return err
		}
		emit = rec.Add
	}
	prog := newProgress(e.stderr)
	rep, perr := memlat.Probe(ctx, cfg, t, prog.Say, emit)
	prog.Done()
	if rec != nil {
		if ferr := rec.Finish(perr, rep.Headline()); ferr != nil && perr == nil {
			perr = ferr
		}
	}
	if rep != nil && (perr == nil || len(rep.Ladders) > 0) {
		werr := writeAs(e.stdout, *jsonOut, rep, memlat.WriteText)
		if perr == nil {
			perr = werr
		}
	}
	if perr != nil {
		return fmt.Errorf("probing memory: %w", perr)
	}
	return nil
}
