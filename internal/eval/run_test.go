package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/evalplan"
	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/topo/topotest"
	"github.com/numalab/numalab/internal/workload/null"
	"github.com/numalab/numalab/internal/workload/pages"
	"github.com/numalab/numalab/internal/workload/tpcc"
	"github.com/numalab/numalab/internal/workload/tpch"
	"github.com/numalab/numalab/internal/workload/transtats"
)

// TestRun: the steps run in order on the plan's configurations, a
// failure does not stop the next, and the report of the stored runs is
// written with the summary.
func TestRun(t *testing.T) {
	noMariaDB(t)
	o := Options{Budget: 5 * time.Minute, Machine: topotest.Fixture(t, "kvm-2vcpu-zen.tar.gz"),
		Dir: t.TempDir(), Start: time.Now()}
	if err := o.Prepare(); err != nil || o.Store != filepath.Join(o.Dir, "numalab.db") ||
		o.Out != filepath.Join(o.Dir, "numalab-report.html") {
		t.Fatalf("Prepare: store %s, report %s, %v", o.Store, o.Out, err)
	}
	var order []string
	probe := func(_ context.Context, stored Stored, quick bool) error {
		order = append(order, fmt.Sprintf("probe quick=%v", quick))
		return storeProbe(o, stored)
	}
	failed := errors.New("no disk")
	cmds := Commands{ProbeMem: probe,
		Null: func(_ context.Context, _ Stored, c null.RunConfig) error {
			order = append(order, "null "+c.Engine)
			if c.Engine == "postgres" {
				return fmt.Errorf("starting: %w", pgserver.ErrNoBinaries)
			}
			return nil
		},
		OLTP: func(_ context.Context, _ Stored, c tpcc.RunConfig) error {
			order = append(order, "oltp "+filepath.Base(c.DB))
			return failed
		},
		Report: func(_ context.Context, _ Stored, c transtats.RunConfig) error {
			order = append(order, "transtats "+c.Engine)
			return nil
		},
		TPCH: func(_ context.Context, _ Stored, c tpch.RunConfig) error {
			order = append(order, fmt.Sprintf("tpch %d queries", len(c.Queries)))
			return nil
		},
		Curve: func(_ context.Context, _ Stored, c tpcc.RunConfig) error {
			order = append(order, fmt.Sprintf("curve at %v on %s", c.CurveAt, filepath.Base(c.DB)))
			return nil
		},
		Pages: func(_ context.Context, _ Stored, c pages.RunConfig) error {
			on := filepath.Base(c.DB)
			if c.Engine != "" {
				on = c.Engine
			}
			order = append(order, fmt.Sprintf("pages %dx%v on %s, probe run %d, repeats %d",
				c.Pairs, c.Cell, on, c.ProbeRun, c.Repeats))
			// Repeats only while they end within the budget.
			if left := time.Until(o.Start.Add(o.Budget)); c.RepeatWithin <= 0 || c.RepeatWithin > left+time.Second {
				t.Errorf("the page-size step's repeats within %v; want the %v left of the budget", c.RepeatWithin, left)
			}
			return nil
		},
	}
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), &stdout, &stderr, o, cmds); err != nil {
		t.Errorf("Run = %v; want nil: the report was written, and the OLTP step's failure is in it", err)
	}
	if got, want := strings.Join(order, "; "),
		"probe quick=true; null sqlite; null postgres; oltp numalab-tpcc-w1.db; "+
			"pages 4x650ms on numalab-tpcc-w1.db, probe run 1, repeats 2; pages 4x650ms on postgres, probe run 1, repeats 2; "+
			"transtats duckdb; tpch 3 queries; curve at [0.1 0.3 0.5 0.7 0.85 1 1.2] on numalab-tpcc-w1.db"; got != want {
		t.Errorf("steps ran %s\nwant      %s", got, want)
	}
	if b, err := os.ReadFile(o.Out); err != nil || !strings.Contains(string(b), "<html") {
		t.Errorf("report %s: %v", o.Out, err)
	}
	for _, want := range []string{"numalab eval: ", "plan: null transaction", "== 10/11 TPC-H-derived on DuckDB",
		"== 11/11 load curve, tpcc-ro on SQLite", "== findings",
		"  memory probe: run 1 (complete): probed\n", "  null transaction on PostgreSQL: skipped: starting: ",
		"  tpcc-ro on SQLite: failed: no disk\n",
		"  null transaction on MariaDB: skipped: no MariaDB server binaries: no MariaDB here\n",
		"  tpcc-ro on MariaDB: skipped: no MariaDB server binaries: no MariaDB here\n",
		"\nreport: " + o.Out + "\n"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	if stderr.String() != "numalab eval: tpcc-ro on SQLite: no disk\n" {
		t.Errorf("stderr: %q", stderr.String())
	}
}

// TestRunNoReport: when no step stored a run there is no report, and Run
// fails saying so and which steps failed.
func TestRunNoReport(t *testing.T) {
	noMariaDB(t)
	o := Options{Budget: 5 * time.Minute, Machine: topotest.Fixture(t, "kvm-2vcpu-zen.tar.gz"),
		Dir: t.TempDir(), Start: time.Now()}
	if err := o.Prepare(); err != nil {
		t.Fatal(err)
	}
	broken := errors.New("broken")
	cmds := Commands{ProbeMem: func(context.Context, Stored, bool) error { return broken },
		Null:   func(context.Context, Stored, null.RunConfig) error { return broken },
		OLTP:   func(context.Context, Stored, tpcc.RunConfig) error { return broken },
		Report: func(context.Context, Stored, transtats.RunConfig) error { return broken },
		TPCH:   func(context.Context, Stored, tpch.RunConfig) error { return broken },
		Curve:  func(context.Context, Stored, tpcc.RunConfig) error { return broken },
		Pages:  func(context.Context, Stored, pages.RunConfig) error { return broken }}
	err := Run(context.Background(), io.Discard, io.Discard, o, cmds)
	if err == nil || !strings.Contains(err.Error(), "memory probe: broken") ||
		!strings.Contains(err.Error(), "no step stored a run: nothing to report") {
		t.Errorf("Run = %v; want the steps' failures and no report", err)
	}
	if _, err := os.Stat(o.Out); err == nil {
		t.Errorf("a report %s was written", o.Out)
	}
}

// TestPrepareRefusesStore: the report never goes where the store is to
// be, even with Force; a directory that cannot be made is refused by
// --dir.
func TestPrepareRefusesStore(t *testing.T) {
	st := filepath.Join(t.TempDir(), "new.db")
	o := Options{Dir: filepath.Dir(st), Store: st, Out: st, Force: true}
	if err := o.Prepare(); err == nil || !strings.HasPrefix(err.Error(), "eval: refused: "+st+" is the results store") {
		t.Errorf("report over the store: %v", err)
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	o = Options{Dir: filepath.Join(file, "ev")}
	if err := o.Prepare(); err == nil ||
		!strings.HasPrefix(err.Error(), fmt.Sprintf("-dir: %q cannot be made a directory: ", o.Dir)) {
		t.Errorf("a directory under a file: %v", err)
	}
}

// noMariaDB makes the plans of the test have no MariaDB server, as on a
// machine without one, whatever this one has.
func noMariaDB(t *testing.T) {
	was := evalplan.HaveMariaDB
	evalplan.HaveMariaDB = func() error { return fmt.Errorf("%w: no MariaDB here", mariaserver.ErrNoBinaries) }
	t.Cleanup(func() { evalplan.HaveMariaDB = was })
}

// withMariaDB makes the plans of the test have a MariaDB server.
func withMariaDB(t *testing.T) {
	was := evalplan.HaveMariaDB
	evalplan.HaveMariaDB = func() error { return nil }
	t.Cleanup(func() { evalplan.HaveMariaDB = was })
}

// TestRunMariaDB: where a MariaDB server can be had and the budget has
// room, eval runs its null transaction as PostgreSQL's (same transports
// and repeats) and a short tpcc-ro step on it (one warehouse, one
// repeat, its own short cells, a managed server: no file, no DSN).
func TestRunMariaDB(t *testing.T) {
	withMariaDB(t)
	o := Options{Budget: 15 * time.Minute, Machine: topotest.Fixture(t, "kvm-2vcpu-zen.tar.gz"),
		Dir: t.TempDir(), Start: time.Now()}
	if err := o.Prepare(); err != nil {
		t.Fatal(err)
	}
	plan, err := evalplan.NewPlan(o.Budget, o.Machine)
	if err != nil || !plan.Server.On {
		t.Fatalf("15m plan: MariaDB %v, %v; want MariaDB's steps", plan.Server.On, err)
	}
	var nulls []null.RunConfig
	var oltps []tpcc.RunConfig
	cmds := Commands{ProbeMem: func(_ context.Context, stored Stored, _ bool) error { return storeProbe(o, stored) },
		Null:   func(_ context.Context, _ Stored, c null.RunConfig) error { nulls = append(nulls, c); return nil },
		OLTP:   func(_ context.Context, _ Stored, c tpcc.RunConfig) error { oltps = append(oltps, c); return nil },
		Report: func(context.Context, Stored, transtats.RunConfig) error { return nil },
		TPCH:   func(context.Context, Stored, tpch.RunConfig) error { return nil },
		Curve:  func(context.Context, Stored, tpcc.RunConfig) error { return nil },
		Pages:  func(context.Context, Stored, pages.RunConfig) error { return nil },
	}
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), &stdout, &stderr, o, cmds); err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr.String())
	}
	if len(nulls) != 3 || nulls[2].Engine != "mariadb" {
		t.Fatalf("null steps %+v; want SQLite's, PostgreSQL's, MariaDB's", nulls)
	}
	pg, my := nulls[1], nulls[2]
	if strings.Join(my.Transports, ",") != strings.Join(pg.Transports, ",") || my.Repeat != pg.Repeat ||
		my.Duration != pg.Duration || my.DSN != "" {
		t.Errorf("MariaDB's null step %+v; want PostgreSQL's %+v on a managed server", my, pg)
	}
	if err := my.Check(); err != nil {
		t.Error(err)
	}
	if len(oltps) < 2 || oltps[1].Engine != "mariadb" {
		t.Fatalf("OLTP steps %+v; want SQLite's, then MariaDB's", oltps)
	}
	ot := oltps[1]
	if ot.Warehouses != 1 || ot.Repeat != 1 || ot.DB != "" || ot.DSN != "" || ot.Duration != plan.Server.Cell ||
		ot.Duration > oltps[0].Duration {
		t.Errorf("MariaDB's tpcc-ro step %+v; want one warehouse, one repeat, a managed server, "+
			"cells of %v, no longer than SQLite's", ot, plan.Server.Cell)
	}
	if !strings.Contains(stdout.String(), "      MariaDB: null transaction as PostgreSQL's; tpcc-ro W=1") {
		t.Errorf("the plan does not say MariaDB's steps:\n%s", stdout.String())
	}
}

// TestPlanMariaDBCostsNoRepeat: MariaDB's steps are left out before any
// other step loses a repeat or a cell's length is cut below its least,
// and a machine without MariaDB gets none.
func TestPlanMariaDBCostsNoRepeat(t *testing.T) {
	m := topotest.Fixture(t, "kvm-2vcpu-zen.tar.gz")
	for _, b := range []time.Duration{evalplan.MinBudget, 5 * time.Minute, 15 * time.Minute, time.Hour} {
		noMariaDB(t)
		without, err := evalplan.NewPlan(b, m)
		if err != nil {
			t.Fatal(err)
		}
		if without.Server.On {
			t.Errorf("%v: MariaDB planned where it cannot be had", b)
		}
		withMariaDB(t)
		with, err := evalplan.NewPlan(b, m)
		if err != nil {
			t.Fatal(err)
		}
		if with.Repeat != without.Repeat || with.QueryRepeat != without.QueryRepeat ||
			with.NullRepeat != without.NullRepeat || len(with.TPCHQueries) != len(without.TPCHQueries) {
			t.Errorf("%v: with MariaDB the repeats are %d/%d/%d and %d TPC-H queries; without %d/%d/%d and %d", b,
				with.Repeat, with.QueryRepeat, with.NullRepeat, len(with.TPCHQueries), without.Repeat, without.QueryRepeat,
				without.NullRepeat, len(without.TPCHQueries))
		}
		t.Logf("%v: MariaDB %v (else from --budget %v); OLTP cells %v (without %v)",
			b, with.Server.On, with.Server.Budget, with.OLTPCell, without.OLTPCell)
		if b >= 15*time.Minute && !with.Server.On {
			t.Errorf("%v: no room for MariaDB's steps", b)
		}
		// Left out, the plan names the least whole-minute budget that
		// keeps them, and the minute below it does not.
		switch {
		case with.Server.On && with.Server.Budget != 0, without.Server.Budget != 0:
			t.Errorf("%v: MariaDBBudget %v with MariaDB planned, %v without a server; want 0",
				b, with.Server.Budget, without.Server.Budget)
		case !with.Server.On:
			above, err1 := evalplan.NewPlan(with.Server.Budget, m)
			below, err2 := evalplan.NewPlan(with.Server.Budget-time.Minute, m)
			if with.Server.Budget <= b || err1 != nil || err2 != nil || !above.Server.On || below.Server.On {
				t.Errorf("%v: MariaDBBudget %v (planned there %v, a minute less %v; %v %v)",
					b, with.Server.Budget, above.Server.On, below.Server.On, err1, err2)
			}
			var txt strings.Builder
			writePlan(&txt, with)
			if !strings.Contains(txt.String(), fmt.Sprintf("(--budget %dm has)", with.Server.Budget/time.Minute)) {
				t.Errorf("%v: the plan does not say which budget has room for MariaDB:\n%s", b, txt.String())
			}
		}
	}
}

// storeProbe stores a memory probe's run, as the probe step would, and
// tells stored.
func storeProbe(o Options, stored Stored) error {
	st, err := store.Open(o.Store)
	if err != nil {
		return err
	}
	defer st.Close()
	r := &result.Run{Kind: result.RunProbeMem, Command: "numalab probe mem", Config: json.RawMessage(`{}`),
		Machine: o.Machine, Started: time.Unix(1700000000, 0)}
	if err := st.Begin(r); err != nil {
		return err
	}
	stored(r.Kind, r.ID)
	return st.Finish(r.ID, r.Started.Add(time.Second), result.StatusComplete, "probed", "")
}
