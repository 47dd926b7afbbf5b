package eval

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/sentinel"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// TestPagePoints loads a one-warehouse tpcc database, and runs the
// page-size step's cells on it: the two images are backed as advised
// (checked in /proc/self/smaps where the kernel gives huge pages at all),
// every cell ran as many hot transactions as cold ones, at the latency of
// its memory or of the caches, and the cells the sentinel kept are what
// the fit saw. It asserts what numalab controls, not the machine's speed.
func TestPagePoints(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a tpcc database (seconds)")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w1.db")
	w, _, err := tpcc.Prepare(ctx, tpcc.Source{Engine: "sqlite", Where: engine.Options{Path: path}, Load: tpcc.LoadConfig{Warehouses: 1, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	w.Engine().Close()
	mem, err := sentinel.NewMemory(sentinel.MemoryBytes(0))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Free()
	pp, err := measurePages(ctx, path, 0, 3, 1, 200*time.Millisecond, 3, 256<<10, time.Now().Add(time.Hour), mem)
	if err != nil {
		t.Fatal(err)
	}
	if len(pp.Memory) != 3 || !pp.Memory[hotMemory].Hot || pp.Memory[hotMemory].ChainBytes != 256<<10 {
		t.Fatalf("memory %+v, want 4 KiB and 2 MiB pages, then the caches with a chain of 256 KiB", pp.Memory)
	}
	if m := pp.Memory[0]; m.DataHuge != 0 || m.ChainHuge != 0 {
		t.Errorf("the 4 KiB image is %.0f%% and its chain %.0f%% huge pages, want none (MADV_NOHUGEPAGE)", 100*m.DataHuge, 100*m.ChainHuge)
	}
	thp, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if strings.Contains(string(thp), "[never]") || len(thp) == 0 {
		t.Logf("transparent huge pages are off here (%q): the 2 MiB image cannot get any", thp)
	} else if m := pp.Memory[1]; m.DataHuge < 0.5 || m.ChainHuge < 0.5 {
		t.Errorf("the 2 MiB image is %.0f%% and its chain %.0f%% huge pages with THP %q, want most (MADV_HUGEPAGE)", 100*m.DataHuge, 100*m.ChainHuge, thp)
	}
	for i, m := range pp.Memory {
		cells := 0
		for _, c := range pp.Cells {
			if c.Memory == i && c.ChainNS > 0 {
				cells++
			}
		}
		if len(m.SamplesNS) != 2+cells || m.Hot != (cells == 0) || !(m.LatencyNS > 0) || !m.Hot && m.ChainBytes < 80<<20 {
			t.Errorf("%s: chain latency %v ns from %d samples over %d bytes, %d cells timed; want two samples (before and after) and one after each cold cell, as large as the image", m.Name, m.LatencyNS, len(m.SamplesNS), m.ChainBytes, cells)
		}
	}
	// 3 pairs of cells, each stored as its cold and its hot runs, and at
	// most one repeat: a sentinel sample at the start, after every cell
	// and before the repeat.
	first := 0
	for k, c := range pp.Cells {
		if !c.Repeat {
			first++
		}
		if hot := k%2 == 1; hot != (c.Memory == hotMemory) || hot && (c.Txns != pp.Cells[k-1].Txns || c.Before != pp.Cells[k-1].Before) {
			t.Errorf("cell %d (%s) in memory %d with %d transactions: want cold and hot alternating, a hot cell as many transactions as its cold one", k+1, c.Label, c.Memory, c.Txns)
		}
	}
	if first != 12 || len(pp.Cells) > 14 || len(pp.Sentinel.Samples) != 7+2*(len(pp.Cells)-12)/2 {
		t.Fatalf("%d cells (%d first runs), %d sentinel samples; want 12 first runs, at most one repeat, and a sample more than cold cells", len(pp.Cells), first, len(pp.Sentinel.Samples))
	}
	if len(pp.Verdict.MemDeviation) != len(pp.Sentinel.Samples) {
		t.Errorf("the memory reference judged in %d of %d sentinel samples, want all", len(pp.Verdict.MemDeviation), len(pp.Sentinel.Samples))
	}
	kept := 0
	for k, c := range pp.Cells {
		if !(c.TPSPerCore > 0) || c.Txns == 0 {
			t.Errorf("cell %d (%s) ran no transactions", k+1, c.Label)
		}
		want := pp.Memory[c.Memory].LatencyNS
		if c.Memory != hotMemory {
			want = c.ChainNS // its own chain, timed right after it
		}
		if !(want > 0) || c.LatencyNS != want || c.GHz != 3 {
			t.Errorf("cell %s at %v ns, %v GHz; want %v ns (its chain's when cold, the caches' when hot) and 3 GHz", c.Label, c.LatencyNS, c.GHz, want)
		}
		coreOff := func(k int) bool { return math.Abs(pp.Verdict.Deviation[k]) > pp.Verdict.Tolerance }
		if c.After != c.Before+1 || c.Off != (coreOff(c.Before) || coreOff(c.After)) {
			t.Errorf("cell %s bracketed by samples %d and %d, off %v, verdict %+v", c.Label, c.Before, c.After, c.Off, pp.Verdict)
		}
		if !c.Off {
			kept++
		}
		if (c.Counters == nil) == (pp.CountersReason == "" && c.NoCounters == "") {
			t.Errorf("cell %s: counters %v with reasons %q and %q: want one or the other", c.Label, c.Counters, pp.CountersReason, c.NoCounters)
		}
	}
	switch {
	case pp.Fit != nil && pp.Fit.Points != kept:
		t.Errorf("fit of %d points, %d cells kept", pp.Fit.Points, kept)
	case pp.Fit == nil && pp.FitError == "":
		t.Error("no fit and no reason")
	}
	t.Logf("%s", strings.Join(pp.Lines(), "\n"))
	if l := pp.Lines(); len(l) < 5 || !strings.Contains(strings.Join(l, "\n"), "hardware counters") {
		t.Errorf("summary lines %q", l)
	}
}

// failingCounters are open counters whose read number fail fails (1: the
// read at the cell's start, 2: the one after its first cold run, 3: after
// its first hot run, 0: none); each read counts 1000 instructions and 10
// misses more.
type failingCounters struct{ reads, fail int }

func (c *failingCounters) Read() ([]uint64, error) {
	c.reads++
	if c.reads == c.fail {
		return nil, errors.New("reading the instructions counter: bad file descriptor")
	}
	return []uint64{uint64(1000 * c.reads), uint64(10 * c.reads)}, nil
}

func (c *failingCounters) Close() {}

// TestCellCounterReadFails: a page-size cell whose counters opened but
// could not be read at its start or between its runs is kept, uncounted,
// with the reason, and the step goes on to the next cell (a failed read
// aborted it); a cell whose reads succeed stores the counts of its cold
// runs on its cold cell and of its hot runs on its hot one. The image is
// an empty tpcc-ro schema, so transactions run without a load.
func TestCellCounterReadFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, ddl := range []string{
		"CREATE TABLE customer (c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_balance)",
		"CREATE TABLE orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id)",
		"CREATE TABLE order_line (ol_o_id, ol_d_id, ol_w_id, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d)",
		"CREATE TABLE district (d_id, d_w_id, d_next_o_id)",
		"CREATE TABLE stock (s_i_id, s_w_id, s_quantity)",
	} {
		if _, err := db.Exec(ddl); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	im, err := newImage(b, false)
	if err != nil {
		t.Fatal(err)
	}
	defer im.free()
	conn, err := openPageConn(im)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.close()
	f := &calib.MeasuredFit{GHz: 3, Memory: []calib.FitMemory{{Name: "4 KiB pages"}}}
	chain, err := memlat.NewChase(1<<20, memlat.Pages4K)
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Free()
	r := &pageRun{ctx: context.Background(), conns: [2]*pageConn{conn}, chains: [3]*memlat.DRAMChase{chain}, f: f}
	f.Memory = append(f.Memory, calib.FitMemory{}, calib.FitMemory{Name: "the caches", Hot: true})
	f.Sentinel.Take("start")
	for _, fail := range []int{1, 2, 3, 0} {
		conn.counters = func() (cellCounters, string) { return &failingCounters{fail: fail}, "" }
		if err := r.cell(0, fmt.Sprintf("read %d fails", fail), 20*time.Millisecond, false); err != nil {
			t.Fatalf("read %d fails: %v", fail, err)
		}
	}
	if len(f.Cells) != 8 {
		t.Fatalf("%d cells, want 8: each cell's cold and hot runs", len(f.Cells))
	}
	for _, c := range f.Cells[:6] {
		if c.Counters != nil || !strings.Contains(c.NoCounters, "bad file descriptor") || c.Txns == 0 {
			t.Errorf("%s: counters %+v, reason %q, %d transactions; want none, the read's error, and the cell run", c.Label, c.Counters, c.NoCounters, c.Txns)
		}
	}
	for _, c := range f.Cells[6:] {
		if n := uint64(c.Txns); c.NoCounters != "" || c.Counters == nil || c.Counters.Instructions != 1000*n || c.Counters.LLCMisses != 10*n {
			t.Errorf("%s: counters %+v over %d transactions, reason %q; want 1000 instructions and 10 misses a run", c.Label, c.Counters, n, c.NoCounters)
		}
	}
	if l := f.CounterLine(); !strings.Contains(l, "6 kept cell(s) not counted") || !strings.Contains(l, "bad file descriptor") {
		t.Errorf("counter line %q does not name the uncounted cells", l)
	}
}
