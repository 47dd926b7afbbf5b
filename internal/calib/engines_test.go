package calib

import (
	"math"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
)

// engineOLTP is a stored one-stream OLTP run on engine.
func engineOLTP(t *testing.T, id int64, engine string) *result.Run {
	r := stored(t, id, result.RunOLTP, oneNode(),
		result.KindCell.Of(result.Cell{Placement: "node=0", CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, TPS: 300}))
	r.Config = []byte(`{"engine":"` + engine + `","warehouses":1}`)
	return r
}

// TestPostgresRunNotSQLiteFit: a PostgreSQL run's calibration never takes
// SQLite's measured fit, stored or among the runs: with SQLite's alone it
// falls back to its own run, saying why; with PostgreSQL's own stored it
// takes that one and names it; naming SQLite's is refused.
func TestPostgresRunNotSQLiteFit(t *testing.T) {
	m := oneNode()
	sqliteFit := measuredFit(t, 1) // stored before fits named their engine: SQLite's
	st := runMap{
		1: stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: 2, LocalNS: 150})),
		2: engineOLTP(t, 2, "postgres"),
		3: stored(t, 3, RunFit, m, KindMeasuredFit.Of(*sqliteFit)),
	}
	c, err := CalibrateStored(st, 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.FitRun != 0 || c.Engine != "postgres" ||
		!strings.HasPrefix(c.FitChoice, `no model-fit run of postgres on host "" in the store`) ||
		!strings.Contains(c.FitChoice, "not used: 3 (sqlite's tpcc-ro)") {
		t.Errorf("PostgreSQL run with SQLite's fit stored: fit run %d, engine %q, choice %q; want none taken, saying "+
			"SQLite's was not", c.FitRun, c.Engine, c.FitChoice)
	}
	if c.Fit != nil || !strings.Contains(c.Method, "published stall share") {
		t.Errorf("without its own fit: method %q; want one point and the published stall share", c.Method)
	}
	direct, err := Calibrate(st[1], st[2], st[3])
	if err != nil {
		t.Fatal(err)
	}
	if direct.FitRun != 0 || !strings.Contains(strings.Join(direct.Notes, " "),
		"no measured fit of postgres among the runs, only of other engines (run 3 (sqlite, tpcc-ro))") {
		t.Errorf("Calibrate with SQLite's fit among the runs: fit run %d, notes %q", direct.FitRun, direct.Notes)
	}
	if _, err := CalibrateStored(st, 2, 0, 3); err == nil ||
		!strings.Contains(err.Error(), "-fit-run: run 3 fitted sqlite's tpcc-ro, and OLTP run 2 ran on postgres") {
		t.Errorf("SQLite's fit named for a PostgreSQL run: %v; want it refused", err)
	}
	pgFit := measuredFit(t, 1)
	pgFit.Engine, pgFit.Workload = "postgres", "tpcc-ro"
	st[4] = stored(t, 4, RunFit, m, KindMeasuredFit.Of(*pgFit))
	st[5] = stored(t, 5, RunFit, m, KindMeasuredFit.Of(*sqliteFit)) // newer, SQLite's
	c, err = CalibrateStored(st, 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.FitRun != 4 ||
		!strings.HasPrefix(c.FitChoice, "model-fit run 4, postgres's tpcc-ro, the newest of postgres on this host") {
		t.Errorf("PostgreSQL's own fit stored: fit run %d, choice %q; want run 4", c.FitRun, c.FitChoice)
	}
}

// TestTwoLatencyPointsRecoverAM: cells made by known A and M at two
// latencies, stored as PostgreSQL's fit, give back A and M through the
// calibration of a PostgreSQL run; cells whose latencies are less than
// MinSpread apart give no fit, and the calibration falls back to the
// published stall share, saying why.
func TestTwoLatencyPointsRecoverAM(t *testing.T) {
	const a, mw, ghz = 300_000.0, 400.0, 2.0
	f := &MeasuredFit{Engine: "postgres", Workload: "tpcc-ro", What: "injected", GHz: ghz,
		Memory: []FitMemory{{Name: "4 KiB pages", LatencyNS: 160}, {Name: "2 MiB pages", LatencyNS: 120}}}
	for k := range 6 {
		mem := k % 2
		ns := f.Memory[mem].LatencyNS
		f.Cells = append(f.Cells,
			FitCell{Label: "cell", Memory: mem, Point: model.Point{GHz: ghz, TPSPerCore: ghz * 1e9 / (a + mw*ns*ghz)}})
	}
	f.Compute()
	if f.Fit == nil || math.Abs(f.Fit.A-a) > 1e-3*a || math.Abs(f.Fit.M-mw) > 1e-3*mw {
		t.Fatalf("fit %+v (%s); want A %v, M %v", f.Fit, f.FitError, a, mw)
	}
	m := oneNode()
	probe := stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: ghz, LocalNS: 150}))
	c, err := Calibrate(probe, engineOLTP(t, 2, "postgres"), stored(t, 3, RunFit, m, KindMeasuredFit.Of(*f)))
	if err != nil {
		t.Fatal(err)
	}
	if c.FitRun != 3 || math.Abs(c.Workload.Core()-a) > 1e-3*a || math.Abs(c.Workload.Waits()-mw) > 1e-3*mw {
		t.Errorf("calibration: fit run %d, A %v, M %v; want run 3's %v and %v",
			c.FitRun, c.Workload.Core(), c.Workload.Waits(), a, mw)
	}
	// 150 and 160 ns are 6.7% apart: no fit.
	f.Memory[1].LatencyNS = 150
	f.Compute()
	if f.Fit != nil || !strings.Contains(f.FitError, "a fit needs two at least 15% apart") {
		t.Fatalf("latencies 6.7%% apart: fit %+v, error %q; want none, saying why", f.Fit, f.FitError)
	}
	c, err = Calibrate(probe, engineOLTP(t, 2, "postgres"), stored(t, 3, RunFit, m, KindMeasuredFit.Of(*f)))
	if err != nil {
		t.Fatal(err)
	}
	if c.FitRun != 0 || !strings.Contains(c.Method, "published stall share") ||
		!strings.Contains(strings.Join(c.Notes, " "), "15% apart") {
		t.Errorf("no fit: fit run %d, method %q, notes %q; want the stall share assumed, saying why",
			c.FitRun, c.Method, c.Notes)
	}
	// A chain an emulator timed at 50 µs is no memory's latency, as model
	// would refuse it as a flag: no fit, however well the points line up.
	f.Memory[0].LatencyNS, f.Memory[1].LatencyNS = 50_000, 12_000
	for i := range f.Cells {
		ns := f.Memory[f.Cells[i].Memory].LatencyNS
		f.Cells[i].Point.TPSPerCore = ghz * 1e9 / (a + mw*ns*ghz)
	}
	f.Compute()
	if f.Fit != nil || !strings.Contains(f.FitError, "read 50000 ns, which is not a plausible memory latency") {
		t.Fatalf(
			"latencies of 50 and 12 µs: fit %+v, error %q; want none, naming the latency and the bound", f.Fit, f.FitError)
	}
}

// TestEngineCosts: each engine's newest fit of each workload gives its own
// row, A and M its fit's, the stall share at one socket's latency and the
// per-core rate falling with sockets; an engine whose cells did not fit
// says why.
func TestEngineCosts(t *testing.T) {
	m := oneNode()
	probe := stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: 2, LocalNS: 150}))
	sq := measuredFit(t, 1)
	pg := measuredFit(t, 1)
	pg.Engine = "postgres"
	bad := measuredFit(t, 1)
	bad.Engine, bad.Fit, bad.FitError = "mariadb", nil, "too few cells"
	script := measuredFit(t, 1)
	script.Engine, script.Workload = "postgres", "bank.sql"
	rows, err := EngineCosts(probe, stored(t, 2, RunFit, m, KindMeasuredFit.Of(*sq)),
		stored(t, 3, RunFit, m, KindMeasuredFit.Of(*pg)),
		stored(t, 4, RunFit, m, KindMeasuredFit.Of(*bad)), stored(t, 5, RunFit, m, KindMeasuredFit.Of(*script)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[0].Engine != "sqlite" || rows[1].Engine != "postgres" || rows[1].FitRun != 3 ||
		rows[2].NoFit != "too few cells" ||
		rows[3].Workload != "bank.sql" || rows[3].FitRun != 5 {
		t.Fatalf(
			"rows %+v; want sqlite, postgres (run 3), mariadb without a fit, postgres's bank.sql (run 5) beside its tpcc-ro",
			rows)
	}
	r := rows[1]
	// One socket's latency is the fit's first chain, 100 ns: M·L·f/C.
	if want := 500 * 200.0 / (200_000 + 500*200); math.Abs(r.A-200_000) > 1 || math.Abs(r.StallShare-want) > 1e-6 ||
		len(r.TPSPerCore) != 3 || !(r.VsOne[2] < r.VsOne[1] && r.VsOne[1] < 1) {
		t.Errorf("postgres row %+v; want A 200,000, stall share %v, per-core rate falling with sockets", r, want)
	}
	var b strings.Builder
	if err := WriteEngineCosts(&b, rows); err != nil || !strings.Contains(b.String(), "postgres") ||
		!strings.Contains(b.String(), "no fit: too few cells") {
		t.Errorf("table %q (%v)", b.String(), err)
	}
}

// TestCalibrateFor: calibrated for PostgreSQL beside SQLite's OLTP run and
// fit, the model takes PostgreSQL's fit and no SQLite run, and says so.
func TestCalibrateFor(t *testing.T) {
	m := oneNode()
	probe := stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: 2, LocalNS: 150}))
	sqOLTP := stored(t, 2, result.RunOLTP, m,
		result.KindCell.Of(result.Cell{Placement: "node=0", CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, TPS: 300}))
	pg := measuredFit(t, 1)
	pg.Engine = "postgres"
	c, err := CalibrateFor("postgres", probe, sqOLTP, stored(t, 3, RunFit, m, KindMeasuredFit.Of(*measuredFit(t, 1))),
		stored(t, 4, RunFit, m, KindMeasuredFit.Of(*pg)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Engine != "postgres" || c.FitRun != 4 || c.OLTPRun != 0 || c.For() != "tpcc-ro on postgres" {
		t.Errorf("for postgres: engine %q, fit run %d, OLTP run %d, for %q; want postgres's fit 4 and no SQLite run",
			c.Engine, c.FitRun, c.OLTPRun, c.For())
	}
}

// TestMariaDBRunTakesItsOwnFit: a MariaDB run's calibration takes
// MariaDB's stored fit, its A and M, over newer fits of SQLite and
// PostgreSQL; without it, it takes neither of theirs and says so; naming
// PostgreSQL's is refused.
func TestMariaDBRunTakesItsOwnFit(t *testing.T) {
	const a, mw, ghz = 900_000.0, 150.0, 2.0
	my := &MeasuredFit{Engine: "mariadb", Workload: "tpcc-ro", What: "injected", GHz: ghz,
		Memory: []FitMemory{{Name: "4 KiB pages", LatencyNS: 200}, {Name: "2 MiB pages", LatencyNS: 150}}}
	for k := range 6 {
		ns := my.Memory[k%2].LatencyNS
		my.Cells = append(my.Cells,
			FitCell{Label: "cell", Memory: k % 2, Point: model.Point{GHz: ghz, TPSPerCore: ghz * 1e9 / (a + mw*ns*ghz)}})
	}
	my.Compute()
	pg := measuredFit(t, 1) // A 200,000, M 500
	pg.Engine, pg.Workload = "postgres", "tpcc-ro"
	m := oneNode()
	st := runMap{
		1: stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: ghz, LocalNS: 150})),
		2: engineOLTP(t, 2, "mariadb"),
		3: stored(t, 3, RunFit, m, KindMeasuredFit.Of(*my)),
		4: stored(t, 4, RunFit, m, KindMeasuredFit.Of(*pg)),
		5: stored(t, 5, RunFit, m, KindMeasuredFit.Of(*measuredFit(t, 1))), // SQLite's
	}
	c, err := CalibrateStored(st, 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.Engine != "mariadb" || c.FitRun != 3 ||
		!strings.HasPrefix(c.FitChoice, "model-fit run 3, mariadb's tpcc-ro, the newest of mariadb on this host") ||
		math.Abs(c.Workload.Core()-a) > 1e-3*a || math.Abs(c.Workload.Waits()-mw) > 1e-3*mw {
		t.Errorf("MariaDB run: engine %q, fit run %d (%q), A %v, M %v; want MariaDB's run 3, A %v, M %v",
			c.Engine, c.FitRun, c.FitChoice, c.Workload.Core(), c.Workload.Waits(), a, mw)
	}
	delete(st, 3)
	if c, err = CalibrateStored(st, 2, 0, 0); err != nil {
		t.Fatal(err)
	}
	if c.FitRun != 0 || !strings.HasPrefix(c.FitChoice, `no model-fit run of mariadb on host "" in the store`) ||
		!strings.Contains(c.FitChoice, "not used: 5 (sqlite's tpcc-ro), 4 (postgres's tpcc-ro)") {
		t.Errorf("MariaDB run with only SQLite's and PostgreSQL's fits: fit run %d, choice %q; want neither taken",
			c.FitRun, c.FitChoice)
	}
	if _, err := CalibrateStored(st, 2, 0, 4); err == nil ||
		!strings.Contains(err.Error(), "run 4 fitted postgres's tpcc-ro, and OLTP run 2 ran on mariadb") {
		t.Errorf("PostgreSQL's fit named for a MariaDB run: %v; want it refused", err)
	}
}

// TestScriptRunTakesItsScriptsFit: a stored run of the user's scripts on
// PostgreSQL takes the newest PostgreSQL fit of its own scripts, a newer
// tpcc-ro fit of PostgreSQL notwithstanding, and names it; with no fit of
// its scripts stored (only another script's and tpcc-ro's) it takes
// PostgreSQL's newest and says that fit is not of its scripts. Calibrate,
// given the fits among its runs, chooses alike, and an OLTP run prefers
// tpcc-ro's fit to a newer one of scripts.
func TestScriptRunTakesItsScriptsFit(t *testing.T) {
	m := oneNode()
	fit := func(id int64, workload string) *result.Run {
		f := measuredFit(t, 1)
		f.Engine, f.Workload = "postgres", workload
		return stored(t, id, RunFit, m, KindMeasuredFit.Of(*f))
	}
	script := stored(t, 2, result.RunSQL, m,
		result.KindCell.Of(result.Cell{Placement: "cpus=0", CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, TPS: 900}))
	script.Config = []byte(`{"engine":"postgres","scripts":["/home/u/sql/bank.sql"],"streams":[1]}`)
	st := runMap{
		1: stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: 2, LocalNS: 150})),
		2: script,
		3: fit(3, "bank.sql"),
		4: fit(4, "other.sql"),
		5: fit(5, "tpcc-ro"),
	}
	c, err := CalibrateStored(st, 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.FitRun != 3 || !strings.HasPrefix(c.FitChoice, "model-fit run 3, postgres's bank.sql, this run's scripts") {
		t.Errorf("its scripts' fit stored: fit run %d, choice %q; want run 3, named as its scripts'", c.FitRun, c.FitChoice)
	}
	// The report's and eval's path: the fits among the runs.
	if c, err = Calibrate(st[1], st[2], st[3], st[4], st[5]); err != nil {
		t.Fatal(err)
	}
	if c.FitRun != 3 {
		t.Errorf("Calibrate with its scripts' fit among the runs: fit run %d, notes %q; want run 3", c.FitRun, c.Notes)
	}
	if c, err = Calibrate(st[1], st[2], st[4], st[5]); err != nil {
		t.Fatal(err)
	}
	if note := "no measured fit of postgres's bank.sql among the runs: A and M are run 5's, postgres's tpcc-ro, " +
		"not bank.sql's"; c.FitRun != 5 ||
		!strings.Contains(strings.Join(c.Notes, " "), note) {
		t.Errorf("Calibrate without its scripts' fit: fit run %d, notes %q; want run 5, saying %q", c.FitRun, c.Notes, note)
	}
	delete(st, 3)
	c, err = CalibrateStored(st, 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.FitRun != 5 || !strings.HasPrefix(c.FitChoice,
		"model-fit run 5, postgres's tpcc-ro, not this run's scripts (bank.sql): no fit of bank.sql on postgres") {
		t.Errorf(
			"no fit of its scripts: fit run %d, choice %q; want run 5, PostgreSQL's newest, said not to be its scripts'",
			c.FitRun, c.FitChoice)
	}
	if c, err = CalibrateStored(st, 2, 0, 4); err != nil {
		t.Fatal(err)
	}
	if c.FitRun != 4 ||
		!strings.Contains(c.FitChoice, "postgres's other.sql, not this run's scripts (bank.sql), named by --fit-run") {
		t.Errorf("another script's fit named: fit run %d, choice %q", c.FitRun, c.FitChoice)
	}
	// numalab's own OLTP run (tpcc-ro) takes tpcc-ro's fit, a newer fit of
	// scripts notwithstanding, and without one says it took a script's.
	st[6], st[7] = fit(6, "bank.sql"), engineOLTP(t, 7, "postgres")
	if c, err = CalibrateStored(st, 7, 0, 0); err != nil {
		t.Fatal(err)
	}
	if c.FitRun != 5 ||
		!strings.HasPrefix(c.FitChoice, "model-fit run 5, postgres's tpcc-ro, the newest of postgres on this host") {
		t.Errorf("OLTP run beside a newer script fit: fit run %d, choice %q; want tpcc-ro's, run 5", c.FitRun, c.FitChoice)
	}
	delete(st, 5)
	if c, err = CalibrateStored(st, 7, 0, 0); err != nil {
		t.Fatal(err)
	}
	if c.FitRun != 6 || !strings.HasPrefix(c.FitChoice,
		"model-fit run 6, postgres's bank.sql, not this run's workload (tpcc-ro): no fit of tpcc-ro on postgres") {
		t.Errorf("OLTP run with script fits alone: fit run %d, choice %q; want run 6, said not to be tpcc-ro's",
			c.FitRun, c.FitChoice)
	}
}

// TestScriptsWorkload: a fit of scripts and a run of them name their
// workload alike: file names without directories, built-ins as such, a
// weight other than 1.
func TestScriptsWorkload(t *testing.T) {
	for _, c := range []struct {
		scripts, builtins []string
		want              string
	}{
		{[]string{"/tmp/x/bank.sql"}, nil, "bank.sql"},
		{[]string{"bank.sql@1", "a/b.sql@3"}, []string{"select-only@2"}, "bank.sql + b.sql@3 + builtin:select-only@2"},
		{nil, []string{"tpcb-like"}, "builtin:tpcb-like"},
	} {
		if got := ScriptsWorkload(c.scripts, c.builtins); got != c.want {
			t.Errorf("ScriptsWorkload(%q, %q) = %q, want %q", c.scripts, c.builtins, got, c.want)
		}
	}
}
