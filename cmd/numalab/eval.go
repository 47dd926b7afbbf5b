package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/eval"
	"github.com/numalab/numalab/internal/evalplan"
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/sysfs"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/units"
	"github.com/numalab/numalab/internal/workload/null"
	"github.com/numalab/numalab/internal/workload/pages"
	"github.com/numalab/numalab/internal/workload/tpcc"
	"github.com/numalab/numalab/internal/workload/tpch"
	"github.com/numalab/numalab/internal/workload/transtats"
)

func cmdEval(ctx context.Context, e *env, args []string) error {
	fs := cliflag.New(e.stderr, "eval", helpText("eval"))
	// Below the least budget the plan says why (after the preflight).
	budget := cliflag.RangedDuration(fs, "budget", 5*time.Minute, time.Second, evalplan.MaxBudget, "wall-clock budget, 2m to 168h; sets data sizes and cell durations")
	dir := fs.String("dir", "numalab-eval", "`directory` for everything eval writes: store, databases (kept and reused) and report")
	storePath := fs.String("store", "", "results `store` (default numalab.db in --dir)")
	out := fs.String("out", "", "`file` the HTML report is written to (default numalab-report.html in --dir)")
	force := fs.Bool("force", false, "let --out replace a file numalab did not write (never a database or the store)")
	eng := fs.String("engine", "", "`engine` whose own fit the model and the decision rest on: sqlite, postgres (default: the tpcc-ro step's, sqlite)")
	done, bad, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return err
	}
	if err := errors.Join(bad...); err != nil {
		return err
	}
	if *eng != "" && *eng != "sqlite" && *eng != "postgres" {
		return fmt.Errorf("-engine: %q is not an engine eval fits (expected sqlite or postgres)", *eng)
	}
	o := eval.Options{Budget: *budget, Dir: *dir, Store: *storePath, Out: *out, Force: *force, Engine: *eng}
	if err := o.Prepare(); err != nil {
		return err
	}
	o.Start = time.Now()
	// No wait in eval is unbounded: cells are cut a grace after their
	// window (drive), eval's steps end by its budget plus evalplan.Overrun
	// (the step then running is cut, what it measured stored), and past
	// three times its budget eval stops whatever it still does (the
	// report's writing).
	stopAt := evalStopFactor * *budget
	ctx, stop := context.WithTimeoutCause(ctx, stopAt, fmt.Errorf("eval: stopped at %v, three times its budget of %v", stopAt, *budget))
	defer stop()
	if o.Machine, err = topo.FromSysfs("/"); err != nil {
		return fmt.Errorf("reading this machine's topology: %w", err)
	}
	preflight.WriteWarnings(e.stdout, preflight.Read(sysfs.New("/"), o.Machine))
	// Each step is a numalab command run in-process on a typed
	// configuration; eval notes the run it stored.
	sub := func(stored eval.Stored) *env {
		s := *e
		s.stored = stored
		return &s
	}
	err = eval.Run(ctx, e.stdout, e.stderr, o, eval.Commands{
		ProbeMem: func(ctx context.Context, stored eval.Stored, quick bool) error {
			probe := []string{"probe", "mem", "--store", o.Store}
			if quick {
				probe = append(probe, "--quick")
			}
			// A machine of little memory gets a smaller working set
			// than the default, where one still reaches DRAM.
			if mi, err := memlat.ReadMeminfo("/"); err == nil {
				c := memlat.DefaultConfig(quick)
				if m, ok := c.FitMax(o.Machine, mi); ok && m < c.MaxBytes {
					probe = append(probe, "--max", units.Bytes(m).String())
				}
			}
			return cmdProbeMem(ctx, sub(stored).withArgs(probe), probe[2:])
		},
		Null: func(ctx context.Context, stored eval.Stored, c null.RunConfig) error {
			return runNullConfig(ctx, sub(stored), c, o.Store, false)
		},
		OLTP: func(ctx context.Context, stored eval.Stored, c tpcc.RunConfig) error {
			return runOLTPConfig(ctx, sub(stored), c, o.Store, false)
		},
		Report: func(ctx context.Context, stored eval.Stored, c transtats.RunConfig) error {
			return runReportConfig(ctx, sub(stored), c, "", o.Store, false)
		},
		TPCH: func(ctx context.Context, stored eval.Stored, c tpch.RunConfig) error {
			return runTPCHConfig(ctx, sub(stored), c, "", o.Store, defaultDOPThreshold, false)
		},
		Curve: func(ctx context.Context, stored eval.Stored, c tpcc.RunConfig) error {
			return runOLTPCurve(ctx, sub(stored), c, o.Store, false)
		},
		Pages: func(ctx context.Context, stored eval.Stored, c pages.RunConfig) error {
			return runPagesConfig(ctx, sub(stored), c, o.Store)
		},
	})
	if errors.Is(err, context.DeadlineExceeded) {
		return context.Cause(ctx)
	}
	return err
}

// evalStopFactor times the budget is when eval stops whatever it runs.
const evalStopFactor = 3
