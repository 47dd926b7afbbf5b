package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/eval"
	"github.com/numalab/numalab/internal/outfile"
	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/sysfs"
	"github.com/numalab/numalab/internal/topo"
)

func cmdEval(ctx context.Context, e *env, args []string) error {
	fs := cliflag.New(e.stderr, "eval", helpText("eval"))
	// Below the least budget the plan says why (after the preflight).
	budget := cliflag.RangedDuration(fs, "budget", 5*time.Minute, time.Second, eval.MaxBudget, "wall-clock budget, 2m to 168h; sets data sizes and cell durations")
	dir := fs.String("dir", "numalab-eval", "`directory` for everything eval writes: store, databases (kept and reused) and report")
	storePath := fs.String("store", "", "results `store` (default numalab.db in --dir)")
	out := fs.String("out", "", "`file` the HTML report is written to (default numalab-report.html in --dir)")
	force := fs.Bool("force", false, "let --out replace a file numalab did not write (never a database or the store)")
	done, bad, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return err
	}
	if err := errors.Join(bad...); err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return cliflag.Bad("dir", *dir, fmt.Sprintf("cannot be made a directory: %v", err))
	}
	if *storePath == "" {
		*storePath = filepath.Join(*dir, "numalab.db")
	}
	if *out == "" {
		*out = filepath.Join(*dir, "numalab-report.html")
	}
	outOpt := outfile.Options{Flag: "out", Force: *force, Keep: []string{*storePath}}
	if err := outfile.Check(*out, outfile.HTMLReport, outOpt); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	start := time.Now()
	t, err := topo.FromSysfs("/")
	if err != nil {
		return fmt.Errorf("reading this machine's topology: %w", err)
	}
	preflight.WriteWarnings(e.stdout, preflight.Read(sysfs.New("/"), t))
	plan, err := eval.NewPlan(*budget, t)
	if err != nil {
		return err
	}
	cfg := eval.NewConfigs(plan, *dir)
	fmt.Fprintf(e.stdout, "numalab eval: %s, budget %v\n", topo.Shape(t), *budget)
	eval.WritePlan(e.stdout, plan)

	// Each step is a numalab command run in-process on a typed
	// configuration; eval notes the run it stored.
	probe := []string{"probe", "mem", "--store", *storePath}
	if plan.ProbeQuick {
		probe = append(probe, "--quick")
	}
	step := func(title string, run func(sub *env) error) *eval.Step {
		return &eval.Step{Title: title, Run: func(stored func(kind string, id int64)) error {
			sub := *e
			sub.stored = stored
			return run(&sub)
		}}
	}
	steps := []*eval.Step{
		step("memory probe", func(sub *env) error { return cmdProbeMem(ctx, sub.withArgs(probe), probe[2:]) }),
		step("null transaction on SQLite", func(sub *env) error { return runNullConfig(ctx, sub, cfg.NullSQLite, *storePath, false) }),
		step("null transaction on PostgreSQL", func(sub *env) error { return runNullConfig(ctx, sub, cfg.NullPG, *storePath, false) }),
		step("tpcc-ro on SQLite", func(sub *env) error { return runOLTPConfig(ctx, sub, cfg.OLTP, *storePath, false) }),
		step("transtats on DuckDB", func(sub *env) error { return runReportConfig(ctx, sub, cfg.Report, "", *storePath, false) }),
		step("TPC-H-derived on DuckDB", func(sub *env) error {
			if len(cfg.TPCH.Queries) == 0 {
				return eval.ErrNoRoom
			}
			return runTPCHConfig(ctx, sub, cfg.TPCH, "", *storePath, defaultCostThreshold(cfg.TPCH.Engine), false)
		}),
	}
	stepErr := eval.RunSteps(ctx, e.stdout, e.stderr, start, steps, func() {
		cfg = eval.Replan(e.stdout, plan, *budget, time.Since(start), t, *dir, cfg)
	})

	r, runs, err := eval.Report(*storePath, steps)
	if err != nil {
		return errors.Join(stepErr, err)
	}
	if err := outfile.Write(*out, outfile.HTMLReport, outOpt, func(w io.Writer) error { return report.WriteHTML(w, r) }); err != nil {
		return errors.Join(stepErr, fmt.Errorf("eval: %w", err))
	}
	if err := eval.WriteSummary(e.stdout, r, steps, runs, time.Since(start)); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\nreport: %s\n", *out)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return stepErr
}
