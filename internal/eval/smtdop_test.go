package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/evalplan"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/topo/topotest"
	"github.com/numalab/numalab/internal/workload/transtats"
)

// TestSMTDOPPlan: on a machine with SMT (4 sockets x 2 cores x 2
// threads) eval plans P1 at DOP 1, the 8 cores and the 16 logical CPUs,
// placed smt=on and smt=off, on the transtats step's database, and says
// so; on this kind of 2-vCPU VM, without SMT, it says in one line why
// there is no such step, and runs none.
func TestSMTDOPPlan(t *testing.T) {
	smt := topotest.Fixture(t, "16em64t-4s2c2t.tar.bz2")
	p, err := evalplan.NewPlan(15*time.Minute, smt)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.SMTDOP, []int{1, 8, 16}) {
		t.Errorf("SMT DOPs %v, want 1, the 8 cores and the 16 logical CPUs", p.SMTDOP)
	}
	cfg := NewConfigs(p, t.TempDir())
	if len(cfg.SMTDOP) != 2 {
		t.Fatalf("%d SMT x DOP runs, want smt=on and smt=off", len(cfg.SMTDOP))
	}
	for i, sel := range []string{"smt=on", "smt=off"} {
		c := cfg.SMTDOP[i]
		if c.Placement != sel || !slices.Equal(c.DOP, p.SMTDOP) || !slices.Equal(c.Queries, []string{transtats.P1}) ||
			c.DB != cfg.Report.DB || c.Duration != p.QueryCell || c.Repeat != p.QueryRepeat {
			t.Errorf("run %d: %+v; want P1 at DOP %v placed %s on the transtats database", i, c, p.SMTDOP, sel)
		}
	}
	if steps := smtDOPSteps(&bytes.Buffer{}, "", &cfg, nil, nil); len(steps) != 2 ||
		steps[1].title != "SMT x DOP on DuckDB, smt=off" {
		t.Errorf("steps %v, want one per placement", steps)
	}
	var b bytes.Buffer
	writePlan(&b, p)
	if !strings.Contains(b.String(), "SMT x DOP on DuckDB: transtats P1 at DOP 1,8,16 "+
		"(1, the physical cores, the logical CPUs) placed smt=on and smt=off") {
		t.Errorf("plan:\n%s\nwant the SMT x DOP step", b.String())
	}

	// 32 CPUs at 5m: too many cells for the budget, left out before TPC-H.
	big, err := evalplan.NewPlan(5*time.Minute, topotest.Fixture(t, "32intel64-2p8co2t+8ve.tar.bz2"))
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	writePlan(&b, big)
	if !big.SMTNoRoom || big.SMTDOP != nil ||
		!strings.Contains(b.String(), "SMT x DOP: left out, the budget has no room for it") {
		t.Errorf("32 CPUs at 5m: SMT DOPs %v, no room %v, plan:\n%s\nwant the step left out for the budget",
			big.SMTDOP, big.SMTNoRoom, b.String())
	}
	// The steps are there, and say why they are left out.
	bigCfg := NewConfigs(big, t.TempDir())
	steps := smtDOPSteps(&bytes.Buffer{}, "", &bigCfg, nil, nil)
	if len(steps) != 2 {
		t.Fatalf("32 CPUs at 5m: %d SMT x DOP steps, want both, left out", len(steps))
	}
	if err := steps[0].run(context.Background(), nil); !skipped(err) || !strings.Contains(err.Error(), "(--budget") {
		t.Errorf("32 CPUs at 5m: the SMT x DOP step = %v, want left out naming the budget that has room", err)
	}
	// It names the least budget that has room, and that budget has.
	if more, err := evalplan.NewPlan(big.SMTDOPBudget,
		topotest.Fixture(t, "32intel64-2p8co2t+8ve.tar.bz2")); big.SMTDOPBudget <= 5*time.Minute || err != nil ||
		len(more.SMTDOP) == 0 ||
		!strings.Contains(b.String(), fmt.Sprintf("(--budget %dm has)", big.SMTDOPBudget/time.Minute)) {
		t.Errorf("32 CPUs at 5m: SMT x DOP from --budget %v (%v; SMT DOPs there %v), plan:\n%s",
			big.SMTDOPBudget, err, more.SMTDOP, b.String())
	}

	vm := topotest.Fixture(t, "kvm-2vcpu-zen.tar.gz")
	p, err = evalplan.NewPlan(5*time.Minute, vm)
	if err != nil {
		t.Fatal(err)
	}
	cfg = NewConfigs(p, t.TempDir())
	b.Reset()
	writePlan(&b, p)
	if p.SMTDOP != nil || cfg.SMTDOP != nil || smtDOPSteps(&b, "", &cfg, nil, nil) != nil {
		t.Errorf("no SMT: DOPs %v, runs %v; want none", p.SMTDOP, cfg.SMTDOP)
	}
	if n := strings.Count(b.String(), "SMT x DOP"); n != 1 ||
		!strings.Contains(b.String(), "SMT x DOP: left out, this machine has no SMT") {
		t.Errorf("plan:\n%s\nwant one line saying the machine has no SMT", b.String())
	}
}

// TestSMTDOPSteps: the step's two runs, stored as run report stores
// them, and the line after the second naming the best placement and DOP
// when four repeats a side tell it from the next, and no winner when a
// cell finished fewer than report.MinQueries queries.
func TestSMTDOPSteps(t *testing.T) {
	m := topotest.Fixture(t, "16em64t-4s2c2t.tar.bz2")
	p, err := evalplan.NewPlan(15*time.Minute, m)
	if err != nil {
		t.Fatal(err)
	}
	p.QueryRepeat = 4
	cfg := NewConfigs(p, t.TempDir())
	// Made-up queries per hour: smt=on scales to 16, smt=off to 8.
	qph := map[string]map[int]float64{"smt=on": {1: 100, 8: 700, 16: 900}, "smt=off": {1: 100, 8: 750, 16: 600}}
	want := "SMT x DOP, P1 queries/h by placement and DOP (median of 4): smt=on DOP 1 102, smt=on DOP 8 702, " +
		"smt=on DOP 16 902, smt=off DOP 1 102, smt=off DOP 8 752, smt=off DOP 16 602 (oversubscribed); " +
		"best smt=on DOP 16: 902 queries/h against 752 for the next best, smt=off DOP 8 (U test p=0.029, 4+4 repeats)\n"
	if got := smtDOPRuns(t, m, &cfg, qph, 10); got != want {
		t.Errorf("after the step:\n%q\nwant\n%q", got, want)
	}
	// One query in a cell's window: no winner, and why.
	got := smtDOPRuns(t, m, &cfg, qph, 1)
	if strings.Contains(got, "best") ||
		!strings.Contains(got, "cannot tell: 6 of 6 cells finished fewer than 5 queries in their window") {
		t.Errorf("after the step, with one query a cell:\n%s\nwant no winner and the cells that finished too few", got)
	}
}

// smtDOPRuns runs the step's two runs with the queries per hour qph and
// queries finished in each cell's window, stored as run report stores
// them, and returns what the step said after the second.
func smtDOPRuns(t *testing.T, m *result.Topology, cfg *Configs, qph map[string]map[int]float64, queries int64) string {
	t.Helper()
	storePath := filepath.Join(t.TempDir(), "s.db")
	run := func(_ context.Context, stored Stored, c transtats.RunConfig) error {
		st, err := store.Open(storePath)
		if err != nil {
			return err
		}
		defer st.Close()
		body, _ := json.Marshal(c)
		r := &result.Run{Kind: result.RunQueries, Command: "numalab run report", Config: body, Machine: m,
			Started: time.Unix(1700000000, 0)}
		if err := st.Begin(r); err != nil {
			return err
		}
		stored(r.Kind, r.ID)
		for k := range c.Repeat {
			for _, d := range c.DOP {
				qc := result.QueryCell{Query: c.Queries[0], QueriesPerHour: qph[c.Placement][d] + float64(k),
					Cell: &result.Cell{DOP: d, Measured: time.Second, Total: result.TxStats{Count: queries}}}
				if d > 1 {
					qc.Workers = &result.WorkerCPUs{Oversubscribed: c.Placement == "smt=off" && d == 16}
				}
				if _, err := st.Add(r.ID, result.KindQueryCell.Of(qc)); err != nil {
					return err
				}
			}
		}
		return st.Finish(r.ID, r.Started.Add(time.Second), result.StatusComplete, "", "")
	}
	var out bytes.Buffer
	steps := smtDOPSteps(&out, storePath, cfg, nil, run)
	if err := runSteps(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}, time.Now(), steps, func() {}); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestSMTDOPStepHeldFile: after a parallel query on the transtats file
// was interrupted (an earlier step's cell cut at its window's end), DuckDB
// may still hold the file in this process and opening it again is
// refused; the SMT x DOP step then reads a copy, which it removes after,
// and never shows the refusal.
func TestSMTDOPStepHeldFile(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the interrupt waits its 5 s grace")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "transtats-1000.duckdb")
	ctx := context.Background()
	eng, err := engine.Open(ctx, "duckdb", engine.Options{Path: path, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := eng.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(ctx, "CREATE TABLE t AS SELECT range AS n FROM range(1000)"); err != nil {
		t.Fatal(err)
	}
	if err := eng.SetDOP(ctx, 2); err != nil {
		t.Fatal(err)
	}
	cut, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	// Never ends by itself: cut, then interrupted after the grace.
	c.Query(cut, "SELECT count(*) FROM range(100000000) a, range(100000000) b WHERE a.range + b.range = -1", nil,
		func([]any) error { return nil })
	c.Close()
	eng.Close()
	if engine.DuckHeld(path) == "" {
		t.Fatal("the file is not held after an interrupted parallel query: the test cannot show the copy")
	}

	p, err := evalplan.NewPlan(15*time.Minute, topotest.Fixture(t, "16em64t-4s2c2t.tar.bz2"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := NewConfigs(p, dir)
	for i := range cfg.SMTDOP {
		cfg.SMTDOP[i].DB = path
	}
	var read []string
	run := func(_ context.Context, _ Stored, c transtats.RunConfig) error {
		e, err := engine.Open(ctx, "duckdb", engine.Options{Path: c.DB})
		if err != nil {
			return err
		}
		defer e.Close()
		read = append(read, c.DB)
		return nil
	}
	var out bytes.Buffer
	steps := smtDOPSteps(&out, filepath.Join(dir, "s.db"), &cfg, nil, run)
	var stderr bytes.Buffer
	if err := runSteps(ctx, &bytes.Buffer{}, &stderr, time.Now(), steps, func() {}); err != nil || stderr.Len() > 0 {
		t.Fatalf("the SMT x DOP steps on a held file: %v\n%s", err, stderr.String())
	}
	if len(read) != 2 || slices.Contains(read, path) || !strings.Contains(out.String(), "this step reads a copy") {
		t.Errorf("the steps read %v, said %q; want copies of %s", read, out.String(), path)
	}
	for _, cp := range read {
		if _, err := os.Stat(cp); err == nil {
			t.Errorf("the copy %s is still there after the step", cp)
		}
	}
}

// TestSMTDOPStepsUnsized: when the first placement cannot be sized (P1
// too slow for the budget left), the second is left out too, saying why,
// instead of running alone with windows too short to tell.
func TestSMTDOPStepsUnsized(t *testing.T) {
	p, err := evalplan.NewPlan(15*time.Minute, topotest.Fixture(t, "16em64t-4s2c2t.tar.bz2"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := NewConfigs(p, t.TempDir())
	ran := 0
	tooSlow := fmt.Errorf("%w: P1 too slow", evalplan.ErrNoRoom)
	steps := smtDOPSteps(&bytes.Buffer{}, "", &cfg, func() error { return tooSlow },
		func(context.Context, Stored, transtats.RunConfig) error { ran++; return nil })
	if err := runSteps(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}, time.Now(), steps, func() {}); err != nil {
		t.Fatal(err)
	}
	if ran != 0 || !errors.Is(steps[0].err, tooSlow) || !errors.Is(steps[1].err, tooSlow) ||
		!strings.Contains(steps[1].err.Error(), "left out with smt=on") {
		t.Errorf("ran %d; steps' errors %v and %v, want both left out for P1", ran, steps[0].err, steps[1].err)
	}
}
