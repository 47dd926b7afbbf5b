package tpcc

import (
	"bytes"
	"testing"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// TestWriteRows prints the heading and three cells: unpinned and
// unmonitored, pinned with its data placed and read from disk, and a
// neighbour cell cut short; the headline names the best.
func TestWriteRows(t *testing.T) {
	plain := &result.Cell{Index: 0, Streams: 1, DataNode: -1, TPS: 1234.4, TPSPerCore: 617.2, TPM: 74064,
		Total: result.TxStats{P95US: 812}}
	disk := &result.Cell{Index: 1, Streams: 4, Placement: "node=0,smt=off", CPUs: []int{0, 1}, DataNode: 0, TPS: 5000,
		TPSPerCore: 2500, TPM: 300000,
		Total: result.TxStats{P95US: 2500.5}, Usage: &result.Usage{ReadFromDisk: true,
			CPUs: []result.CPUUsage{{CPU: 0, BusyPct: 90}, {CPU: 1, BusyPct: 70}, {CPU: 2, BusyPct: 5}}}}
	cut := &result.Cell{Index: 2, Streams: 1, Placement: "cpus=0", DataNode: 1, TPS: 10, TPSPerCore: 10, Interrupted: true,
		Usage: &result.Usage{CPUs: []result.CPUUsage{{CPU: 0, BusyPct: 33.6}}}}
	var b bytes.Buffer
	WriteHeader(&b)
	WriteRow(&b, sweep.Cell{}, plain)
	WriteRow(&b, sweep.Cell{}, disk)
	WriteRow(&b, sweep.Cell{Neighbour: []int{1}}, cut)
	want := `cell streams  placement        data          tps  tps/core   p95 ms CPU %  disk
   0       1  all              -            1234       617    0.812     -  -
   1       4  node=0,smt=off   node 0       5000      2500    2.501    80  READ
   2       1  cpus=0 +neighbour node 1         10        10    0.000    34  cached (cut short)
`
	if got := b.String(); got != want {
		t.Errorf("rows:\n%s\nwant:\n%s", got, want)
	}
	if got, want := Headline([]*result.Cell{plain, disk, cut}),
		"5000 tps (300000 tpm) at 4 streams, 2500 tps/core"; got != want {
		t.Errorf("Headline = %q, want %q", got, want)
	}
	// Repeats of one point: their median, not the best repeat.
	again := *disk
	again.TPS, again.TPM, again.TPSPerCore = 4000, 240000, 2000
	third := again
	third.TPS, third.TPM, third.TPSPerCore = 4500, 270000, 2250
	if got, want := Headline([]*result.Cell{plain, disk, &again, &third}),
		"4500 tps (270000 tpm) at 4 streams, 2250 tps/core (median of 3 repeats)"; got != want {
		t.Errorf("Headline over repeats = %q, want %q", got, want)
	}
	if got := Headline(nil); got != "" {
		t.Errorf("Headline(nil) = %q, want empty", got)
	}
}
