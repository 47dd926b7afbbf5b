package null

import (
	"bytes"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// TestHeadline: one figure a transport and pairing, the median of its
// repeats; SQLite's in-process named once; the point select named.
func TestHeadline(t *testing.T) {
	cell := func(eng, transport, pairing string, streams int, tps float64) *Cell {
		return &Cell{Cell: result.Cell{Engine: eng, Streams: streams, TPS: tps}, Transport: transport,
			Pairing: Pairing{Name: pairing}}
	}
	pg := []*Cell{cell("postgres", "unix", "same-cpu", 1, 30000), cell("postgres", "unix", "other-core", 1, 9000),
		cell("postgres", "unix", "same-cpu", 1, 20000), cell("postgres", "unix", "other-core", 1, 11000),
		cell("postgres", "unix", "same-cpu", 1, 25000), cell("postgres", "unix", "other-core", 1, 10000)}
	if got, want := Headline(pg),
		"postgres: 25000 round trips/s unix same-cpu, 10000 unix other-core (medians of 3 repeats)"; got != want {
		t.Errorf("headline %q; want %q", got, want)
	}
	lite := []*Cell{cell("sqlite", "in-process", "in-process", 1, 1e6), cell("sqlite", "in-process", "in-process", 2, 8e5)}
	if got, want := Headline(lite), "sqlite: 1000000 round trips/s in-process, 800000 in-process 2 streams"; got != want {
		t.Errorf("headline %q; want %q", got, want)
	}
	point := cell("mariadb", "unix", "same-cpu", 1, 9000)
	point.Call = CallPointSelect
	if got, want := Headline([]*Cell{point}), "mariadb point-select: 9000 round trips/s unix same-cpu"; got != want {
		t.Errorf("headline %q; want %q", got, want)
	}
}

// TestWriteRow: a row under each heading, the call, the client/backend
// CPUs, and a cell cut short or without a call said so.
func TestWriteRow(t *testing.T) {
	var b bytes.Buffer
	WriteHeader(&b)
	c := &Cell{
		Cell: result.Cell{Index: 3, Streams: 1, TPS: 41234.6,
			Total: result.TxStats{P50US: 21.04, P95US: 30, P99US: 48.96}},
		Transport: "unix", Call: CallPointSelect, Pairing: Pairing{Name: "smt-sibling", Client: 0, Backend: 8},
		PerStream: 41234.6, CtxSwitchesPerSec: 82000, CtxSwitchesPerCall: 1.99}
	WriteRow(&b, sweep.Cell{}, c)
	c.Pairing, c.Transport, c.Call, c.Cell.Interrupted = Pairing{Name: "in-process", Backend: -1},
		"in-process", CallSelect1, true
	WriteRow(&b, sweep.Cell{}, c)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{
		"cell transport  call         pairing     cpus  streams   calls/s   /stream   p50 µs   p95 µs   p99 µs      cs/s cs/call",
		"   3 unix       point-select smt-sibling 0/8         1     41235     41235     21.0     30.0     49.0     82000    1.99",
		"   3 in-process select1      in-process  0           1     41235     41235     21.0     30.0     49.0     82000 1.99 (cut short)",
	}
	if len(lines) != len(want) {
		t.Fatalf("table:\n%s", b.String())
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\n%q\nwant\n%q", i, lines[i], want[i])
		}
	}
}
