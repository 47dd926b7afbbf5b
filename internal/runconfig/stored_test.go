package runconfig_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/runconfig"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/workload/insert"
	"github.com/numalab/numalab/internal/workload/null"
	"github.com/numalab/numalab/internal/workload/sqlscript"
	"github.com/numalab/numalab/internal/workload/tpcc"
	"github.com/numalab/numalab/internal/workload/tpch"
	"github.com/numalab/numalab/internal/workload/transtats"
)

// stored are the configurations of testdata/main-5b8b027.json, each as
// its command's RunConfig at commit 5b8b027 (before Common) stored it.
type stored struct {
	OLTP   tpcc.RunConfig      `json:"oltp"`
	TPCH   tpch.RunConfig      `json:"tpch"`
	Report transtats.RunConfig `json:"report"`
	Insert insert.RunConfig    `json:"insert"`
	Null   null.RunConfig      `json:"null"`
	SQL    sqlscript.RunConfig `json:"sql"`
}

// TestStoredBeforeCommonRead reads configurations that the run commands
// stored before they embedded Common, each with what its own spelling
// said: tpch's "repeats", run report's seed and its repeats from before
// it had them, and the pacing and load curve, now Common's.
func TestStoredBeforeCommonRead(t *testing.T) {
	b, err := os.ReadFile("testdata/main-5b8b027.json")
	if err != nil {
		t.Fatal(err)
	}
	var s stored
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("reading runs stored before Common: %v", err)
	}
	for _, c := range []struct {
		name      string
		got, want runconfig.Common
		repeats   int
	}{
		{"oltp", s.OLTP.Common,
			runconfig.Common{Engine: "postgres", Seed: -7, Repeat: 3, Duration: 10 * time.Second, Warmup: 2 * time.Second,
				Load: sweep.Load{Curve: true, CurveAt: []float64{0.5, 1}, KneeFactor: 2}}, 3},
		{"tpch", s.TPCH.Common,
			runconfig.Common{Engine: "postgres", StoredDSN: "postgres://me:xxxxx@db/x", Seed: 1, Repeat: 4,
				Duration: 3 * time.Second, Warmup: time.Second,
				Load: sweep.Load{Pacing: sweep.Pacing{Rate: 2.5, Arrivals: "uniform"}}}, 4},
		{"report", s.Report.Common,
			runconfig.Common{Engine: "sqlite", Seed: 9, Duration: 30 * time.Second, Warmup: 5 * time.Second,
				Load: sweep.Load{Pacing: sweep.Pacing{Think: 50 * time.Millisecond, ThinkDist: "exp"}}}, 1},
		{"insert", s.Insert.Common,
			runconfig.Common{Engine: "postgres", Seed: 1, Repeat: 2, Duration: 10 * time.Second, Warmup: 2 * time.Second}, 2},
		{"null", s.Null.Common,
			runconfig.Common{Engine: "postgres", Repeat: 5, Duration: 5 * time.Second, Warmup: time.Second,
				Load: sweep.Load{Pacing: sweep.Pacing{Rate: 100}}}, 5},
		{"sql", s.SQL.Common,
			runconfig.Common{Engine: "duckdb", DB: "a.duckdb", Seed: 11, Repeat: 2, Duration: 10 * time.Second,
				Warmup: 2 * time.Second, Load: sweep.Load{Pacing: sweep.Pacing{Think: time.Millisecond}}}, 2},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: read %+v\nwant %+v", c.name, c.got, c.want)
		}
		if c.got.Repeats() != c.repeats {
			t.Errorf("%s: %d repeats, want %d", c.name, c.got.Repeats(), c.repeats)
		}
	}
	if s.TPCH.Placement != "node=0" || s.TPCH.Hog != 1 || s.Report.Placement != "smt=on" || s.SQL.DOPs[1] != 2 ||
		s.Insert.Method != "insert" {
		t.Errorf("a workload's own fields were lost: tpch %q %d, report %q, sql %v, insert %q",
			s.TPCH.Placement, s.TPCH.Hog, s.Report.Placement, s.SQL.DOPs, s.Insert.Method)
	}
}

// TestDSNStoredRedacted checks that every run command stores its DSN the
// same way, once checked: with the password hidden, never as given.
func TestDSNStoredRedacted(t *testing.T) {
	const dsn = "postgres://me:hunter2@db:5432/x"
	oltp, h, r, ins, n, s := tpcc.DefaultRunConfig(), tpch.DefaultRunConfig(), transtats.DefaultRunConfig(),
		insert.DefaultRunConfig(), null.DefaultRunConfig(), sqlscript.DefaultRunConfig()
	for _, c := range []*runconfig.Common{&oltp.Common, &h.Common, &r.Common, &ins.Common, &n.Common, &s.Common} {
		c.Engine, c.DSN = "postgres", dsn
		_ = c.Check()
	}
	for name, cfg := range map[string]any{"oltp": oltp, "tpch": h, "report": r, "insert": ins, "null": n, "sql": s} {
		b, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			DSN string `json:"dsn"`
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "hunter2") || got.DSN != "postgres://me:xxxxx@db:5432/x" {
			t.Errorf("%s stores its DSN as %q (in %s), want it with the password hidden", name, got.DSN, b)
		}
	}
}

// TestNoCurve refuses a load curve where a command has none, as a sweep
// file can give one to run insert.
func TestNoCurve(t *testing.T) {
	c := insert.DefaultRunConfig()
	if err := c.NoCurve("run insert"); err != nil {
		t.Errorf("no curve: %v", err)
	}
	c.Curve = true
	if err := c.Check("/"); err == nil || !strings.Contains(err.Error(), "-curve: run insert has no load curve") {
		t.Errorf("run insert with curve = true: %v, want it refused", err)
	}
}
