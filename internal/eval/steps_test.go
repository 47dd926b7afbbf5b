package eval

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/evalplan"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/topo/topotest"
	"github.com/numalab/numalab/internal/workload/null"
)

// TestNewConfigsInDir: eval's databases go in its directory.
func TestNewConfigsInDir(t *testing.T) {
	m := topotest.Fixture(t, "kvm-2vcpu-zen.tar.gz")
	plan, err := evalplan.NewPlan(5*time.Minute, m)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ev")
	c := NewConfigs(plan, dir)
	for _, p := range []string{c.OLTP.DB, c.Report.DB, c.TPCH.DB} {
		if filepath.Dir(p) != dir {
			t.Errorf("database %s is outside --dir %s", p, dir)
		}
	}
	if c.OLTP.StreamsPerCPU != 2 {
		t.Errorf("eval's OLTP step caps streams at %d per CPU; want 2", c.OLTP.StreamsPerCPU)
	}
	// The null steps: SQLite in the process, PostgreSQL on a throwaway
	// server (no DSN), each checked as run null checks its flags.
	for _, n := range []null.RunConfig{c.NullSQLite, c.NullPG} {
		if err := n.Check(); err != nil || n.DSN != "" {
			t.Errorf("null step %+v: %v", n, err)
		}
	}
	if c.NullSQLite.Engine != "sqlite" || c.NullPG.Engine != "postgres" || c.Report.Repeat != plan.QueryRepeat ||
		c.TPCH.Engine != "duckdb" {
		t.Errorf("steps %+v", c)
	}
}

// TestReplanAfterSlowProbe: a probe that overran its allowance
// shortens what follows, and says so; one on time changes nothing. The
// budget named for MariaDB's steps, left out, grows by the overrun.
func TestReplanAfterSlowProbe(t *testing.T) {
	withMariaDB(t)
	m := topotest.Fixture(t, "kvm-2vcpu-zen.tar.gz")
	plan, err := evalplan.NewPlan(5*time.Minute, m)
	if err != nil {
		t.Fatal(err)
	}
	cfg := NewConfigs(plan, "d")
	var out strings.Builder
	if c2 := replan(&out, plan, 5*time.Minute, plan.ProbeTime()+2*time.Second, m, "d", cfg); !reflect.DeepEqual(c2, cfg) ||
		out.Len() != 0 {
		t.Errorf("a probe on time changed the plan: %s", out.String())
	}
	c3 := replan(&out, plan, 5*time.Minute, plan.ProbeTime()+time.Minute, m, "d", cfg)
	spent := func(d time.Duration, n int) time.Duration { return d * time.Duration(n) }
	o, o3, r, r3 := cfg.OLTP, c3.OLTP, cfg.Report, c3.Report
	if spent(o3.Duration, o3.Repeat) >= spent(o.Duration, o.Repeat) ||
		spent(r3.Duration, r3.Repeat) >= spent(r.Duration, r.Repeat) ||
		!strings.Contains(out.String(), "1m0s more than planned") || !strings.Contains(out.String(), "transtats") {
		t.Errorf("a probe a minute late left tpcc-ro %v x%d (was %v x%d), transtats %v x%d (was %v x%d); said %q",
			o3.Duration, o3.Repeat, o.Duration, o.Repeat, r3.Duration, r3.Repeat, r.Duration, r.Repeat, out.String())
	}
	if cfg.Server.On || cfg.Server.Budget == 0 || c3.Server.Budget != cfg.Server.Budget+time.Minute {
		t.Errorf("MariaDB's steps at 5m: planned %v, from --budget %v; a minute late, from %v",
			cfg.Server.On, cfg.Server.Budget, c3.Server.Budget)
	}
}

// TestRunSteps: each step's run is noted; a step left out is said on
// stdout and is no failure, a failed one on stderr and returned; the
// replanning hook runs once, after the first step; a cancelled context
// stops before the next step.
func TestRunSteps(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	failed := errors.New("disk full")
	steps := []*step{
		{title: "probe", run: func(_ context.Context, stored Stored) error { stored(result.RunProbeMem, 7); return nil }},
		{title: "postgres", run: func(_ context.Context, stored Stored) error {
			stored(result.RunOLTP, 8)
			return fmt.Errorf("starting: %w", pgserver.ErrNoBinaries)
		}},
		{title: "tpch", run: func(context.Context, Stored) error { return evalplan.ErrNoRoom }},
		{title: "oltp",
			run: func(_ context.Context, stored Stored) error { stored(result.RunOLTP, 9); cancel(); return failed }},
		{title: "never", run: func(context.Context, Stored) error { t.Error("a step ran after the cancel"); return nil }},
	}
	var stdout, stderr strings.Builder
	after := 0
	err := runSteps(ctx, &stdout, &stderr, time.Now(), steps, func() {
		after++
		if steps[0].id != 7 || steps[1].err != nil {
			t.Errorf("the hook ran with probe run %d, next step's error %v", steps[0].id, steps[1].err)
		}
	})
	if !errors.Is(err, failed) || strings.Contains(err.Error(), "postgres") || after != 1 {
		t.Errorf("runSteps = %v, hook ran %d times; want only the oltp failure, hook once", err, after)
	}
	if steps[3].id != 9 || steps[2].id != 0 || steps[1].id != 8 || !skipped(steps[1].err) || !skipped(steps[2].err) ||
		skipped(steps[3].err) {
		t.Errorf("steps %+v %+v %+v", steps[1], steps[2], steps[3])
	}
	for _, want := range []string{"== 1/5 probe (0s elapsed)\n\n", "== 2/5 postgres (0s elapsed)\nskipped: starting: ",
		"(its run 8 is stored)\n", "== 3/5 tpch (0s elapsed)\nskipped: the budget has no room"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	if strings.Contains(stdout.String(), "never") || stderr.String() != "numalab eval: oltp: disk full\n" {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}
