package report

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

// twoSocketMachine is a 2-socket, 2-node machine with 2 cores per socket
// and 2 hardware threads per core (CPU i and i+4 are siblings), with
// private L1/L2 and an L3 per socket.
func twoSocketMachine() *result.Topology {
	t := &result.Topology{Source: "fixture:2s2c2t", Host: "lab2s", Kernel: "Linux 6.1.0", CPUModel: "Example Xeon 8000",
		SMT: "on", THP: "madvise", Distances: [][]int{{10, 21}, {21, 10}}}
	for p := range 2 {
		pkg := result.Package{ID: p, Model: t.CPUModel}
		node := result.Node{ID: p, MemBytes: 64 << 30}
		for c := range 2 {
			a, b := p*2+c, p*2+c+4
			t.Cores = append(t.Cores, result.Core{Package: p, ID: c, CPUs: []int{a, b}})
			pkg.CPUs = append(pkg.CPUs, a, b)
			node.CPUs = append(node.CPUs, a, b)
			t.Caches = append(t.Caches,
				result.Cache{Level: 1, Type: "Data", SizeBytes: 48 << 10, CPUs: []int{a, b}},
				result.Cache{Level: 1, Type: "Instruction", SizeBytes: 32 << 10, CPUs: []int{a, b}},
				result.Cache{Level: 2, Type: "Unified", SizeBytes: 2 << 20, CPUs: []int{a, b}})
		}
		t.Caches = append(t.Caches, result.Cache{Level: 3, Type: "Unified", SizeBytes: 32 << 20, CPUs: pkg.CPUs})
		t.Packages = append(t.Packages, pkg)
		t.Nodes = append(t.Nodes, node)
	}
	for id := range 8 {
		core := id % 4
		t.CPUs = append(t.CPUs, result.CPU{ID: id, Package: core / 2, Core: core, Node: core / 2})
	}
	return t
}

// item makes a stored item of v.
func item(kind string, v any) result.Item {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return result.Item{Kind: kind, Body: b}
}

func stat(ns, spread float64) memlat.Stat {
	return memlat.Stat{Median: ns, Min: ns * (1 - spread), Max: ns * (1 + spread), Samples: 3, Window: 50}
}

// ladderNS is a smooth latency curve over bytes touched with plateaus at
// 1.2, 4.5, 18 and 95 ns (TLB-local) or 120 ns (random, 4 KiB pages) past
// 32 MiB.
func ladderNS(bytes int64, dram float64) float64 {
	x := math.Log2(float64(bytes))
	step := func(at, from, to float64) float64 { return from + (to-from)/(1+math.Exp(-3*(x-at))) }
	v := 1.2
	v = step(15.8, v, 4.5)  // past 48 KiB
	v = step(21.3, v, 18)   // past 2 MiB
	v = step(25.5, v, dram) // past 32 MiB
	return v
}

// syntheticRuns are a memory probe, an OLTP sweep with local, remote and
// SMT placements and repeats, a reporting sweep and a storage probe on
// twoSocketMachine, with fixed values (the one RNG is seeded).
func syntheticRuns() []*result.Run {
	m := twoSocketMachine()
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	const ghz = 3.2
	rng := rand.New(rand.NewPCG(7, 11))
	noise := func() float64 { return 1 + (rng.Float64()-0.5)*0.04 }

	probeCfg := memlat.DefaultConfig(false)
	probe := &result.Run{Kind: result.RunProbeMem, Command: "numalab probe mem", Version: "v0.1.0-test",
		Host: "lab2s", Machine: m,
		Started: t0, Finished: t0.Add(70 * time.Second), Status: result.StatusComplete, Headline: "DRAM 120 ns (4k pages)"}
	probe.Config, _ = json.Marshal(probeCfg)
	sizes := memlat.Sizes(4<<10, 1<<30, 2, 256)
	var ladders []memlat.Ladder
	for _, v := range []struct {
		chain, pages string
		page         int64
		dram         float64
		full         bool
	}{
		{memlat.TLBLocal, memlat.Pages4K, 4096, 95, true},
		{memlat.Random, memlat.Pages4K, 4096, 120, false},
		{memlat.TLBLocal, memlat.Pages2M, 2 << 20, 93, false},
		{memlat.Random, memlat.Pages2M, 2 << 20, 104, false},
	} {
		l := memlat.Ladder{Chain: v.chain, Pages: v.pages, PageBytes: v.page, SlotBytes: 256, CPU: 0, GHz: ghz}
		if v.page == 2<<20 {
			l.HugeFraction = 1
		}
		sz := sizes
		if !v.full {
			sz = sizes[len(sizes)-1:]
		}
		for _, b := range sz {
			ns := ladderNS(b/4, v.dram) * noise() // 256 B slots: a quarter of the working set is touched
			l.Points = append(l.Points, memlat.Point{Bytes: b, TouchedBytes: b / 4, NS: stat(ns, 0.02), Cycles: ns * ghz})
		}
		if v.full {
			l.Levels = []memlat.Level{
				{Name: "L1", FromBytes: 1 << 10, ToBytes: 32 << 10, NS: 1.2, Cycles: 1.2 * ghz, KneeBytes: 44 << 10,
					CacheBytes: 48 << 10, KneeRatio: 44.0 / 48},
				{Name: "L2", FromBytes: 64 << 10, ToBytes: 1 << 20, NS: 4.5, Cycles: 4.5 * ghz, KneeBytes: 1843 << 10,
					CacheBytes: 2 << 20, KneeRatio: 1843.0 / 2048},
				{Name: "L3", FromBytes: 4 << 20, ToBytes: 16 << 20, NS: 18, Cycles: 18 * ghz, KneeBytes: 28 << 20,
					CacheBytes: 32 << 20, KneeRatio: 28.0 / 32},
				{Name: "DRAM", FromBytes: 64 << 20, ToBytes: 256 << 20, NS: 95, Cycles: 95 * ghz},
			}
		}
		ladders = append(ladders, l)
	}
	probe.Results = append(probe.Results, item("memlat.Clock", memlat.Clock{When: "start", CPU: 0, GHz: stat(ghz, 0.01)}))
	for _, l := range ladders {
		probe.Results = append(probe.Results, item("memlat.Ladder", l))
	}
	probe.Results = append(probe.Results,
		item("memlat.MLP", memlat.MLP{Bytes: 1 << 30, PageBytes: 2 << 20, CPU: 0, SMT: true, Points: []memlat.MLPPoint{
			{Chains: 1, Threads: 1, NSPerLoad: stat(104, 0.01), InFlight: 1},
			{Chains: 4, Threads: 1, NSPerLoad: stat(27, 0.02), InFlight: 3.85},
			{Chains: 16, Threads: 1, NSPerLoad: stat(9.5, 0.03), InFlight: 10.9},
			{Chains: 16, Threads: 2, NSPerLoad: stat(7.1, 0.05), InFlight: 14.6, SplitCPUs: []int{0, 4}},
		}}),
		item("memlat.Bandwidth", memlat.Bandwidth{Bytes: 1 << 30, CPU: 0, Read: []memlat.BWPoint{
			{Threads: 1, CPUs: []int{0}, GBps: 14.2, RegionBytes: 64 << 20},
			{Threads: 4, CPUs: []int{0, 1, 2, 3}, GBps: 48.9, RegionBytes: 64 << 20},
			{Threads: 8, CPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, GBps: 52.3, RegionBytes: 64 << 20, Preempted: 1},
		}}),
		item("memlat.Matrix",
			memlat.Matrix{CPUNodes: []int{0, 1}, MemNodes: []int{0, 1}, CPUs: []int{0, 2}, Bytes: 1 << 30, Chain: memlat.Random,
				PageBytes: 2 << 20, NS: [][]memlat.Stat{{stat(104, 0.01), stat(171, 0.02)}, {stat(168, 0.02), stat(102, 0.01)}},
				Relative: [][]float64{{104.0 / 102, 171.0 / 102}, {168.0 / 102, 1}}, OnNode: []float64{1, 1}}),
		item("memlat.Summary", memlat.Summary{GHz: ghz, WorkingSetBytes: 1 << 30, DRAMNS4K: ladders[1].Points[0].NS.Median,
			DRAMNS2M: ladders[3].Points[0].NS.Median, TLBLocalDRAMNS4K: ladders[0].Last().NS.Median,
			TLBLocalDRAMNS2M: ladders[2].Points[0].NS.Median, PageBytes2M: 2 << 20,
			Nodes: []int{0, 1}, CPUNodes: []int{0, 1}, MatrixNS: [][]float64{{104, 171}, {168, 102}},
			LocalNS: 103, RemoteNS: 169.5, Levels: ladders[0].Levels}),
	)

	oltp := &result.Run{Kind: result.RunOLTP, Command: "numalab run oltp --warehouses 4 --streams 1,2,4 --placement " +
		"'node=0,smt=off;node=1,smt=off;node=0' --data-node 0 --repeat 2",
		Version: "v0.1.0-test", Host: "lab2s", Machine: m, Started: t0.Add(2 * time.Minute),
		Finished: t0.Add(6 * time.Minute), Status: result.StatusComplete, Headline: "40000 tps"}
	oltp.Config = json.RawMessage(
		`{"engine":"sqlite","warehouses":4,"streams":[1,2,4],"duration_ns":10000000000,"warmup_ns":2000000000,"repeat":2}`)
	oltp.Results = append(oltp.Results,
		item("tpcc.Load", map[string]any{"path": "w4.db", "meta": map[string]any{"warehouses": 4}}))
	idx := 0
	for _, pl := range []struct {
		sel   string
		cpus  []int
		cores int
		base  float64 // one-stream tps
		smt   float64 // gain of a second thread on a core
	}{
		{"node=0,smt=off", []int{0, 1}, 2, 10000, 0},
		{"node=1,smt=off", []int{2, 3}, 2, 7200, 0},
		{"node=0", []int{0, 1, 4, 5}, 2, 10000, 0.25},
	} {
		for _, n := range []int{1, 2, 4} {
			for rep := range 2 {
				busy := min(n, pl.cores)
				tps := pl.base * float64(busy)
				if n > pl.cores {
					tps *= 1 + pl.smt
				}
				tps *= noise()
				cpus := pl.cpus[:min(n, len(pl.cpus))]
				// Spread streams take CPUs in order, so they run on the
				// fewer of the streams and the placement's cores.
				c := result.Cell{Index: idx, Engine: "sqlite", Workload: "tpcc-ro", Streams: n, DOP: 1, Placement: pl.sel,
					CPUs: pl.cpus, SpreadCPUs: true, Cores: busy, DataNode: 0, Repeat: rep,
					Started: t0.Add(3 * time.Minute), Warmup: 2 * time.Second, Duration: 10 * time.Second, Measured: 10 * time.Second,
					Total: result.TxStats{Name: "total", Count: int64(tps * 10), MeanUS: 1e6 / tps * float64(n),
						P95US: 2.1e6 / tps * float64(n), P99US: 3e6 / tps * float64(n)},
					TPS: tps, TPM: tps * 60, TPSPerCore: tps / float64(busy),
					Usage: &result.Usage{Elapsed: 10 * time.Second}}
				for s := range 10 {
					c.PerSecond = append(c.PerSecond, int64(tps*(0.97+0.006*float64(s))))
				}
				for _, id := range cpus {
					c.Usage.CPUs = append(c.Usage.CPUs, result.CPUUsage{CPU: id, UserPct: 90, SystemPct: 8, BusyPct: 98})
				}
				oltp.Results = append(oltp.Results, item("drive.Cell", c))
				idx++
			}
		}
	}

	rep := &result.Run{Kind: result.RunQueries, Command: "numalab run report --engine duckdb --streams 1,2 --dop 1,2,4",
		Version: "v0.1.0-test", Host: "lab2s", Machine: m, Started: t0.Add(7 * time.Minute),
		Finished: t0.Add(9 * time.Minute), Status: result.StatusComplete}
	rep.Config = json.RawMessage(`{"engine":"duckdb","rows":5000000,"duration_ns":30000000000,"warmup_ns":5000000000}`)
	rep.Results = append(rep.Results,
		item("transtats.Load",
			result.BulkLoad{Engine: "duckdb", Workload: "transtats", Method: "appender", Rows: 5000000, Rate: 5000,
				Insert: 4 * time.Second, RowsPerSecond: 1250000, Total: 6 * time.Second, Where: "transtats-5000000.duckdb"}),
		item("engine.Info", map[string]any{"engine": "duckdb", "version": "v1.2.1", "where": "transtats-5000000.duckdb"}))
	qidx := 0
	for _, q := range []struct {
		name string
		qph  float64
		par  float64 // parallel fraction
	}{{"P1", 1800, 0.9}, {"P2", 720000, 0.4}} {
		for _, n := range []int{1, 2} {
			var base float64
			for _, dop := range []int{1, 2, 4} {
				sp := 1 / ((1 - q.par) + q.par/float64(dop))
				qph := q.qph * float64(n) * sp / (1 + 0.1*float64(n-1)) * noise()
				if dop == 1 {
					base = qph
				}
				cell := &result.Cell{Index: qidx, Engine: "duckdb", Workload: "transtats", Streams: n, DOP: dop,
					Cores: 4, DataNode: -1,
					Duration: 30 * time.Second, Measured: 30 * time.Second, TPS: qph / 3600,
					Total: result.TxStats{Name: q.name, Count: int64(qph / 120), MeanUS: 3.6e9 * float64(n) / qph,
						P95US: 4.4e9 * float64(n) / qph}}
				rep.Results = append(rep.Results, item("transtats.QueryCell",
					result.QueryCell{Query: q.name, Cell: cell, QueriesPerHour: qph, SpeedupVsDOP1: qph / base}))
				qidx++
			}
		}
	}
	rep.Results = append(rep.Results,
		item("transtats.PlanFinding", result.PlanFinding{Kind: "across-dop", Query: "P1", Streams: 1, DOP: 2, FromDOP: 1,
			Detail: "P1 at 1 streams: the plan at DOP 2 differs from DOP 1's",
			Before: "HASH_JOIN", After: "PARALLEL HASH_JOIN"}))

	io := &result.Run{Kind: result.RunProbeIO, Command: "numalab probe io --path /data", Version: "v0.1.0-test",
		Host: "lab2s", Machine: m,
		Started: t0.Add(10 * time.Minute), Finished: t0.Add(11 * time.Minute), Status: result.StatusComplete}
	io.Config = json.RawMessage(`{}`)
	pats := []result.IOPattern{
		{Name: "randread", BlockSize: 8192, QD: 1, ReadPct: 100, Direct: true, Measured: 3 * time.Second,
			Read: result.IOStats{IOPS: 11000, MBps: 90.1, MeanUs: 90, P50Us: 85, P99Us: 160, MaxUs: 900}},
		{Name: "randread", BlockSize: 8192, QD: 16, ReadPct: 100, Direct: true, Measured: 3 * time.Second,
			Read: result.IOStats{IOPS: 98000, MBps: 802.8, MeanUs: 160, P50Us: 150, P99Us: 400, MaxUs: 2100}},
		{Name: "seqread", BlockSize: 1 << 20, QD: 1, ReadPct: 100, Direct: true, Measured: 3 * time.Second,
			Read: result.IOStats{IOPS: 2100, MBps: 2202, MeanUs: 470, P50Us: 460, P99Us: 700, MaxUs: 3000}},
	}
	io.Results = append(io.Results, item("result.IOProbe",
		result.IOProbe{Dir: "/data", FSType: "ext4", FileSize: 1 << 30, Direct: true, Engine: "psync-threads",
			Duration: 3 * time.Second, Seed: 1, Patterns: pats, Started: t0.Add(10 * time.Minute),
			Ratio: &result.IORatio{PageSize: 8192, RandomIOPS: 11000, SeqBlockSize: 1 << 20, SeqPagesPerSec: 268800,
				Ratio: 268800.0 / 11000, ModelName: "classic optimizer IO cost model", ModelRandom: 320, ModelSeqPages: 1350,
				ModelRatio: 1350.0 / 320}}))
	return []*result.Run{probe, oltp, rep, io}
}

// vmRuns are real runs of this project's 2-vCPU KVM guest (one node, no
// SMT), as 'numalab runs show --json' printed them.
func vmRuns(t *testing.T) []*result.Run {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "kvm-2vcpu-runs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var runs []*result.Run
	if err := json.Unmarshal(b, &runs); err != nil {
		t.Fatal(err)
	}
	return runs
}

// stored puts runs into a new store and reads them back, as the report
// command does.
func stored(t *testing.T, runs []*result.Run) []*result.Run {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []*result.Run
	for _, r := range runs {
		c := *r
		c.Results = nil
		c.Status = result.StatusRunning
		if err := st.Begin(&c); err != nil {
			t.Fatal(err)
		}
		for _, it := range r.Results {
			if _, err := st.Add(c.ID, it.Entry()); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Finish(c.ID, r.Finished, r.Status, r.Headline, r.Error); err != nil {
			t.Fatal(err)
		}
		got, err := st.Get(c.ID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got)
	}
	return out
}
