package transtats

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/planest"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/runconfig"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/topo"
)

// recorder keeps what a sweep stores.
type recorder struct{ entries []result.Entry }

func (r *recorder) Add(e result.Entry) error               { r.entries = append(r.entries, e); return nil }
func (r *recorder) Say(string)                             {}
func (r *recorder) Note(string)                            {}
func (r *recorder) Measured(sweep.Cell, *result.QueryCell) {}

// runSweep runs w, configured by cfg, over this machine's cells; a
// failed run fails the test.
func runSweep(t *testing.T, cfg RunConfig, w *Sweep) ([]*result.QueryCell, *recorder) {
	t.Helper()
	host, err := topo.FromSysfs("/")
	if err != nil {
		t.Fatal(err)
	}
	cells, _, err := sweep.Resolve(host, cfg.Spec(), false)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	out, err := sweep.Run(context.Background(), cfg.Plan(cells), w, rec, rec)
	if err != nil {
		t.Fatal(err)
	}
	return out, rec
}

// TestSweepRepeats: with Repeat 3 every cell runs three times, all cells
// once before any again; each speedup is against DOP 1 of its own repeat,
// plans are compared with the previous DOP of the same repeat (never
// with the last DOP of the repeat before), and a plan change a later
// repeat finds again is not stored twice.
func TestSweepRepeats(t *testing.T) {
	dops := []int{1}
	if runtime.NumCPU() >= 2 {
		dops = []int{1, 2}
	}
	cfg := RunConfig{Common: runconfig.Common{Engine: "duckdb", DB: filepath.Join(t.TempDir(), "t.duckdb"),
		Duration: 300 * time.Millisecond, Seed: 1, Repeat: 3},
		Rows: 20000, Rate: DefaultRate,
		Streams: []int{1}, DOP: dops, Queries: []string{P2}, DataNode: -1}
	w := NewSweep(cfg, "", -1)
	out, rec := runSweep(t, cfg, w)
	if len(out) != 3*len(dops) {
		t.Fatalf("%d cells measured; want %d", len(out), 3*len(dops))
	}
	dop1 := map[int]float64{}
	for i, qc := range out {
		c := qc.Cell
		if c == nil || c.Total.Count == 0 {
			t.Fatalf("cell %d: %+v; want queries", i, qc)
		}
		if qc.CostUnit != planest.CostDuckDB || qc.Cost <= 0 {
			t.Errorf("cell %d: cost %v %q; want DuckDB's summed row estimates", i, qc.Cost, qc.CostUnit)
		}
		if c.Repeat != i/len(dops) || c.DOP != dops[i%len(dops)] {
			t.Errorf("cell %d is repeat %d at DOP %d; want repeat %d at DOP %d",
				i, c.Repeat, c.DOP, i/len(dops), dops[i%len(dops)])
		}
		if c.DOP == 1 {
			dop1[c.Repeat] = qc.QueriesPerHour
		}
		if want := qc.QueriesPerHour / dop1[c.Repeat]; qc.SpeedupVsDOP1 != want {
			t.Errorf("cell %d (repeat %d, DOP %d): speedup %v; want %v, against DOP 1 of its repeat",
				i, c.Repeat, c.DOP, qc.SpeedupVsDOP1, want)
		}
	}
	seen := map[string]bool{}
	for _, f := range w.Findings() {
		t.Log(f.Detail)
		if seen[findingKey(f)] {
			t.Errorf("finding stored twice: %s", f.Detail)
		}
		seen[findingKey(f)] = true
		if f.Kind == "across-dop" && f.FromDOP >= f.DOP {
			t.Errorf("%s: compared with DOP %d, the repeat before's", f.Detail, f.FromDOP)
		}
	}
	var stored int
	for _, e := range rec.entries {
		if e.Kind() == string(result.KindPlanFinding) {
			stored++
		}
	}
	if rows := Estimates(out); len(rows) != 0 {
		t.Errorf("estimates %+v from DuckDB's costs, which do not price DOP", rows)
	}
	if stored != len(w.Findings()) {
		t.Errorf("%d plan findings stored; want the %d found", stored, len(w.Findings()))
	}
}

// TestSweepDataNode places a DuckDB database on this machine's first node
// before the cells, from a fresh open: the file's cached pages and the new
// buffer memory are there, and the placement is stored. The two-node guest
// (vmtest) checks that memory did not land on the other node.
func TestSweepDataNode(t *testing.T) {
	host, err := topo.FromSysfs("/")
	if err != nil {
		t.Fatal(err)
	}
	node := host.Nodes[0].ID
	cfg := RunConfig{Common: runconfig.Common{Engine: "duckdb", DB: filepath.Join(t.TempDir(), "t.duckdb"),
		Duration: 100 * time.Millisecond, Seed: 1},
		Rows: 20000, Rate: DefaultRate,
		Streams: []int{1}, DOP: []int{1}, Queries: []string{P1}, DataNode: node}
	cells, _, err := sweep.Resolve(host, cfg.Spec(), false)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if _, err := sweep.Run(context.Background(), cfg.Plan(cells), NewSweep(cfg, "", -1), rec, rec); err != nil {
		t.Fatal(err)
	}
	var placed []engine.PlacedData
	for _, e := range rec.entries {
		if pd, ok := e.Body().(engine.PlacedData); ok && e.Kind() == string(engine.KindPlacedData) {
			placed = append(placed, pd)
		}
	}
	if len(placed) != 1 {
		t.Fatalf("%d data placements stored, want 1", len(placed))
	}
	pd := placed[0]
	t.Logf("%s", engine.PlacedText(pd))
	// Not all of the pool need show as new memory: the allocator reuses
	// memory the process already had (CI once saw 8.4 MB new for a 9.7 MB
	// pool), so the pool is checked by engine.PoolOnNode's rule, which the
	// two-node guest (vmtest) puts to the test.
	if pd.Node != node || pd.File == nil || pd.File.PerNode[node] != pd.File.Pages || pd.BufferBytes <= 0 ||
		pd.GainedBytes[node] <= 0 || engine.PoolOnNode(node, pd.BufferBytes, pd.GainedBytes) != nil {
		t.Errorf(
			"placed on node %d: %+v, want the file's pages and new memory there, and the pool there by engine.PoolOnNode",
			node, pd)
	}
}
