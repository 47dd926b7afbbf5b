package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/workload/null"
	"github.com/numalab/numalab/internal/workload/tpcc"
	"github.com/numalab/numalab/internal/workload/tpch"
	"github.com/numalab/numalab/internal/workload/transtats"
)

// TestRun: the steps run in order on the plan's configurations, a
// failure does not stop the next, and the report of the stored runs is
// written with the summary.
func TestRun(t *testing.T) {
	o := Options{Budget: 5 * time.Minute, Machine: fixture(t, "kvm-2vcpu-zen.tar.gz"), Dir: t.TempDir(), Start: time.Now()}
	if err := o.Prepare(); err != nil || o.Store != filepath.Join(o.Dir, "numalab.db") || o.Out != filepath.Join(o.Dir, "numalab-report.html") {
		t.Fatalf("Prepare: store %s, report %s, %v", o.Store, o.Out, err)
	}
	var order []string
	probe := func(stored Stored, quick bool) error {
		order = append(order, fmt.Sprintf("probe quick=%v", quick))
		st, err := store.Open(o.Store)
		if err != nil {
			return err
		}
		defer st.Close()
		r := &result.Run{Kind: result.RunProbeMem, Command: "numalab probe mem", Config: json.RawMessage(`{}`), Machine: o.Machine, Started: time.Unix(1700000000, 0)}
		if err := st.Begin(r); err != nil {
			return err
		}
		stored(r.Kind, r.ID)
		return st.Finish(r.ID, r.Started.Add(time.Second), result.StatusComplete, "probed", "")
	}
	failed := errors.New("no disk")
	cmds := Commands{ProbeMem: probe,
		Null: func(_ Stored, c null.RunConfig) error {
			order = append(order, "null "+c.Engine)
			if c.Engine == "postgres" {
				return fmt.Errorf("starting: %w", pgserver.ErrNoBinaries)
			}
			return nil
		},
		OLTP: func(_ Stored, c tpcc.RunConfig) error {
			order = append(order, "oltp "+filepath.Base(c.DB))
			return failed
		},
		Report: func(_ Stored, c transtats.RunConfig) error { order = append(order, "transtats "+c.Engine); return nil },
		TPCH: func(_ Stored, c tpch.RunConfig) error {
			order = append(order, fmt.Sprintf("tpch %d queries", len(c.Queries)))
			return nil
		},
		Curve: func(_ Stored, c tpcc.RunConfig) error {
			order = append(order, fmt.Sprintf("curve at %v on %s", c.CurveAt, filepath.Base(c.DB)))
			return nil
		},
	}
	var stdout, stderr strings.Builder
	err := Run(context.Background(), &stdout, &stderr, o, cmds)
	if !errors.Is(err, failed) || err.Error() != "tpcc-ro on SQLite: no disk" {
		t.Errorf("Run = %v; want the OLTP step's failure only", err)
	}
	if got, want := strings.Join(order, "; "), "probe quick=true; null sqlite; null postgres; oltp numalab-tpcc-w1.db; transtats duckdb; tpch 3 queries; curve at [0.1 0.3 0.5 0.7 0.85 1 1.2] on numalab-tpcc-w1.db"; got != want {
		t.Errorf("steps ran %s\nwant      %s", got, want)
	}
	if b, err := os.ReadFile(o.Out); err != nil || !strings.Contains(string(b), "<html") {
		t.Errorf("report %s: %v", o.Out, err)
	}
	for _, want := range []string{"numalab eval: ", "plan: null transaction", "== 6/7 TPC-H-derived on DuckDB", "== 7/7 load curve, tpcc-ro on SQLite", "== findings",
		"  memory probe: run 1 (complete): probed\n", "  null transaction on PostgreSQL: skipped: starting: ", "  tpcc-ro on SQLite: no run stored\n",
		"\nreport: " + o.Out + "\n"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	if stderr.String() != "numalab eval: tpcc-ro on SQLite: no disk\n" {
		t.Errorf("stderr: %q", stderr.String())
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
	if err := o.Prepare(); err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("-dir: %q cannot be made a directory: ", o.Dir)) {
		t.Errorf("a directory under a file: %v", err)
	}
}
