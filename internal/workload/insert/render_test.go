package insert

import (
	"bytes"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

func TestWriteRowAndHeadline(t *testing.T) {
	slow := &Measured{Cell: &result.Cell{Index: 0, Streams: 1, Total: result.TxStats{P95US: 1500}},
		Stats: CellStats{Engine: "sqlite", Method: "insert", Streams: 1, RowsPerSec: 1000, MBPerSec: 0.064,
			Dominant: "lock wait"}}
	fast := &Measured{Cell: &result.Cell{Index: 1, Streams: 2, Placement: "node=0", Interrupted: true,
		Stopped: []result.StreamStop{{Reason: "too many errors"}}},
		Stats: CellStats{Engine: "sqlite", Method: "insert", Streams: 2, RowsPerSec: 2500.4, MBPerSec: 0.16, Dominant: "cpu"}}
	var b bytes.Buffer
	WriteHeader(&b)
	WriteRow(&b, sweep.Cell{}, slow)
	WriteRow(&b, sweep.Cell{}, fast)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "cell streams") {
		t.Fatalf("table:\n%s", b.String())
	}
	for i, want := range [][]string{
		{"all", "1000", "0.1", "1.500", " -", "lock wait"},
		{"node=0", "2500", "0.2", "cpu (cut short) (1 stream stopped: too many errors)"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i+1], w) {
				t.Errorf("row %d %q lacks %q", i, lines[i+1], w)
			}
		}
	}
	if h := Headline([]*Measured{slow, fast}); h != "2500 rows/s (0.2 MB/s) at 2 streams, sqlite insert" {
		t.Errorf("Headline = %q", h)
	}
	if h := Headline(nil); h != "" {
		t.Errorf("Headline(nil) = %q", h)
	}
}
