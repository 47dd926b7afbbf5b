package eval

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/topo/topotest"
)

// TestReportAndRuns: the report is built from the runs the steps stored,
// less a PostgreSQL step's empty run; the runs list names each step's
// run, skip (with the run a skipped step stored, as the store lists it)
// or absence.
func TestReportAndRuns(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	m := topotest.Fixture(t, "kvm-2vcpu-zen.tar.gz")
	var ids []int64
	for i, headline := range []string{"probed", ""} {
		r := &result.Run{Kind: result.RunProbeMem, Command: "numalab probe mem", Config: json.RawMessage(`{}`), Machine: m,
			Started: time.Unix(1700000000+int64(i), 0)}
		if err := st.Begin(r); err != nil {
			t.Fatal(err)
		}
		if err := st.Finish(r.ID, r.Started.Add(time.Second), result.StatusComplete, headline, ""); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	st.Close()
	noPG := fmt.Errorf("starting: %w", pgserver.ErrNoBinaries)
	steps := []*step{{title: "memory probe", id: ids[0]}, {title: "null transaction on PostgreSQL", id: ids[1], err: noPG},
		{title: "tpcc-ro on SQLite"}}
	r, runs, err := buildReport(db, "", steps)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || len(r.Runs) != 1 || r.Runs[0].ID != ids[0] {
		t.Errorf("report of runs %v; stored %d; want the probe's only, both stored", r.Runs, len(runs))
	}
	var b strings.Builder
	report.WriteStepRuns(&b, stepRuns(steps, runs), r)
	want := fmt.Sprintf("  memory probe: run %d (complete): probed\n"+
		"  null transaction on PostgreSQL: skipped: starting: %v (run %d stored, complete)\n"+
		"  tpcc-ro on SQLite: no run stored\n",
		ids[0], pgserver.ErrNoBinaries, ids[1])
	if b.String() != want {
		t.Errorf("runs list:\n%s\nwant:\n%s", b.String(), want)
	}
	if _, _, err := buildReport(db, "", steps[2:]); err == nil || !strings.Contains(err.Error(), "nothing to report") {
		t.Errorf("no run stored: %v", err)
	}
}
