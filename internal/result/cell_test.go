package result

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/golden"
)

// sampleCell is a small cell with every field set, as drive and sysmon
// produce it.
func sampleCell() Cell {
	return Cell{
		Index: 5, Engine: "sqlite", Workload: "tpcc-ro", Streams: 2, DOP: 1, Placement: "smt=off",
		CPUs: []int{0, 1}, SpreadCPUs: true, Cores: 2, DataNode: 0, Repeat: 1,
		Started: time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC), Warmup: 5 * time.Second,
		Duration: 30 * time.Second, Measured: 12500 * time.Millisecond, Interrupted: true,
		Stopped: []StreamStop{
			{Stream: 1, At: 9 * time.Second, Reason: "1000 consecutive errors, the last: database is locked"}},
		Total: TxStats{Name: "total", Count: 250000, Errors: 3, MeanUS: 9.5, StdevUS: 4.25, P50US: 8.1,
			P90US: 15.2, P95US: 16.8, P99US: 21.5, P999US: 80.25, MaxUS: 2300, FirstError: "database is locked"},
		Types: []TxStats{
			{Name: "order-status", Count: 125000, MeanUS: 4.5, StdevUS: 0.5, P50US: 4.4, P90US: 5, P95US: 5.2, P99US: 6,
				P999US: 20, MaxUS: 900},
			{Name: "stock-level", Count: 125000, Errors: 3, MeanUS: 14.5, StdevUS: 1.5, P50US: 14.1, P90US: 16, P95US: 17,
				P99US: 22, P999US: 81, MaxUS: 2300, FirstError: "database is locked"},
		},
		TPS: 20000, TPM: 1200000, TPSPerCore: 10000,
		PerSecond: []int64{20100, 19900, 20000, 20050, 19950, 20000, 20000, 20000, 20000, 20000, 20000, 20000, 10000},
		Usage: &Usage{
			Elapsed: 12500 * time.Millisecond,
			CPUs: []CPUUsage{{CPU: 0, UserPct: 90, SystemPct: 8, StealPct: 1, BusyPct: 98},
				{CPU: 1, UserPct: 88, SystemPct: 9, BusyPct: 97}},
			CtxSwitchesPerSec: 1500, ProcVoluntarySwitches: 40, ProcInvoluntarySwitches: 300,
			ProcUserCPU: 22 * time.Second, ProcSystemCPU: 2 * time.Second,
			ProcReadBytes: 4096, DeviceReadBytes: 8192,
			Devices:      []DeviceReads{{Name: "vda", Reads: 2, ReadBytes: 8192}},
			ReadFromDisk: true,
			Perf:         Perf{Reason: "not available: perf_event_open cycles: no such file or directory"},
		},
		Trace: []TraceEvent{{StartNS: -3000, EndNS: 5000, Type: 1, Stream: 0, OK: true},
			{StartNS: 100, EndNS: 4600, Type: 0, Stream: 1, OK: false}},
		TraceDropped: 249998,
	}
}

func TestCellJSONGolden(t *testing.T) {
	c := sampleCell()
	got, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "cell.golden.json")
	golden.Check(t, path, got)
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back Cell
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.MarshalIndent(back, "", "  ")
	if !bytes.Equal(append(again, '\n'), want) {
		t.Error("cell JSON does not survive a round trip")
	}
}

func TestUsageBusyPct(t *testing.T) {
	u := sampleCell().Usage
	tests := []struct {
		cpus []int
		want float64
	}{
		{nil, 97.5}, {[]int{0}, 98}, {[]int{1}, 97}, {[]int{7}, 0}, {[]int{0, 1, 7}, 97.5},
	}
	for _, tt := range tests {
		if got := u.BusyPct(tt.cpus); got != tt.want {
			t.Errorf("BusyPct(%v) = %v, want %v", tt.cpus, got, tt.want)
		}
	}
	var none *Usage
	if none.BusyPct(nil) != 0 {
		t.Error("nil usage is busy")
	}
}
