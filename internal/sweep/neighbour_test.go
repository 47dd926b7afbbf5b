package sweep

import (
	"context"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
)

// TestNeighbourAndControlOnHost starts a bandwidth neighbour and a
// control neighbour for real on this machine's second CPU, the chain on
// its first, and checks what each stores: the control reads no memory
// (0 GB/s) and says it is one; the bandwidth neighbour reads some. The
// latencies themselves depend on the host, so only their presence is
// checked.
func TestNeighbourAndControlOnHost(t *testing.T) {
	cpus, err := place.ProcessCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(cpus) < 2 {
		t.Skipf("this process may use %d CPU(s): a neighbour needs a second one", len(cpus))
	}
	for _, control := range []bool{false, true} {
		c := Cell{Place: place.Placement{Streams: cpus[:1]}, Neighbour: cpus[1:2], Control: control}
		start := time.Now()
		nb, err := startNeighbour(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		setup := time.Since(start)
		time.Sleep(100 * time.Millisecond)
		m := &result.Cell{Streams: 1, TPS: 1}
		out, err := nb.finish(m, []result.Entry{result.KindCell.Of(*m)})
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 1 || out[0].Kind() != string(memlat.KindNeighbourCell) {
			t.Fatalf("control %v: stored %v, want one neighbour cell instead of the plain one", control, out)
		}
		rec := out[0].Body().(memlat.NeighbourCell)
		if rec.Control != control || (control && rec.GBps != 0) || (!control && !(rec.GBps > 0)) ||
			!(rec.AloneNS.Median > 0) || !(rec.LoadedNS.Median > 0) {
			t.Errorf("control %v: stored %+v", control, rec)
		}
		t.Logf("control %v: setup %v, chain alone %.1f ns, loaded %.1f ns, %.1f GB/s",
			control, setup.Round(time.Millisecond), rec.AloneNS.Median, rec.LoadedNS.Median, rec.GBps)
	}
}
