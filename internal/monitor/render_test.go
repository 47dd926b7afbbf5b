package monitor

import (
	"bytes"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/sweep"
)

// TestWriteRun prints a monitoring run as 'numalab run oltp --monitor'
// does: the heading, a row per cell (one cut short, one under a call a
// second, as a reporting query runs), the cost table with
// a facility that costs, one that cannot tell and one without an
// interval; the headline names the costly one, or says none was shown.
func TestWriteRun(t *testing.T) {
	var b bytes.Buffer
	WriteHeader(&b, RunKind, sweep.Cell{Point: drive.Point{Streams: 2}, Place: place.Placement{CPUs: []int{0, 1}},
		Cores: 1, DataNode: -1}, 5, 3*time.Second)
	WriteRow(&b, sweep.Cell{}, Cell{Slot: Slot{Facility: "log_all", On: true},
		Cell: result.Cell{Index: 0, TPS: 1234.5, Total: result.TxStats{P95US: 1500}}})
	WriteRow(&b, sweep.Cell{},
		Cell{Slot: Slot{Facility: "pg_stat_statements"}, Cell: result.Cell{Index: 11, TPS: 99, Interrupted: true}})
	WriteRow(&b, sweep.Cell{}, Cell{Slot: Slot{Facility: "auto_explain"}, Cell: result.Cell{Index: 12, TPS: 0.18349}})
	an := Analysis{Overheads: []Overhead{
		{Facility: "log_all", Off: stats.Interval{Median: 1000}, On: stats.Interval{Median: 900}, Verdict: Costs,
			Ratio: stats.Ratio{NA: 5, NB: 5, Estimate: 0.9, HasCI: true, Lo: 0.88, Hi: 0.92}},
		{Facility: "series", Off: stats.Interval{Median: 1000}, On: stats.Interval{Median: 1001}, Verdict: CannotTell,
			Ratio: stats.Ratio{NA: 5, NB: 5, Estimate: 1.001, HasCI: true, Lo: 0.99, Hi: 1.01}},
		{Facility: "trace", Off: stats.Interval{Median: 1000}, On: stats.Interval{Median: 950}, Verdict: CannotTell,
			Ratio: stats.Ratio{NA: 2, NB: 2, Estimate: 0.95}, EmptyOn: 1},
	}}
	WriteAnalysis(&b, an)
	want := `oltp-monitor: 2 streams on cpus 0-1 (1 core), 5 repeats per facility and side, 3s windows
cell  facility              state       tps   p95 ms
   0  log_all               on         1234    1.500
  11  pg_stat_statements    off          99 0.000 (cut short)
  12  auto_explain          off       0.183    0.000

What each facility costs: tps on/off, Hodges-Lehmann estimate with its 95% interval; cost = 1 - ratio
facility              tps off (median)  tps on (median) ratio on/off [interval] n     cost
log_all                           1000              900 0.900 [0.880, 0.920] n=5+5    costs 10.0% [8.0, 12.0]
series                            1000             1001 1.001 [0.990, 1.010] n=5+5    cannot tell (-0.1% [-1.0, 1.0])
trace                             1000              950 0.950 n=2+2                   cannot tell (+5.0%, too few repeats for an interval: n=2+2); left out: cells that completed no call, 0 off, 1 on
`
	if got := b.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	if got, want := Headline(an), "log_all costs 10.0% [8.0, 12.0]"; got != want {
		t.Errorf("Headline = %q, want %q", got, want)
	}
	if got, want := Headline(Analysis{Overheads: an.Overheads[1:]}), "no cost shown in 2 facilities"; got != want {
		t.Errorf("Headline = %q, want %q", got, want)
	}
}
