package eval

import (
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/evalplan"
	"github.com/numalab/numalab/internal/topo/topotest"
)

// TestRepeatNote: below evalplan.Repeats a side the note gives the U
// test's smallest p, 2/C(2n, n); at evalplan.Repeats there is none.
func TestRepeatNote(t *testing.T) {
	for n, p := range map[int]string{1: "1.00", 2: "0.33", 3: "0.10"} {
		if got := repeatNote(n); !strings.Contains(got, "smallest p is "+p+",") {
			t.Errorf("repeatNote(%d) = %q; want p %s", n, got, p)
		}
	}
	if got := repeatNote(evalplan.Repeats); got != "" {
		t.Errorf("repeatNote(%d) = %q; want none", evalplan.Repeats, got)
	}
}

// TestWritePlan: the plan of a 2-CPU machine at 5m without a MariaDB
// server, and one whose TPC-H step was left out. The server's page-size
// step (two PostgreSQL servers loaded) would cost the 5-minute plan two of
// its four OLTP and transtats repeats: it runs unplanned there.
func TestWritePlan(t *testing.T) {
	noMariaDB(t)
	p, err := evalplan.NewPlan(5*time.Minute, topotest.Fixture(t, "kvm-2vcpu-zen.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writePlan(&b, p)
	want := `plan: null transaction on SQLite and PostgreSQL (unix, every client/backend pairing), 500ms+1s per cell x4 repeats
      tpcc-ro W=1, streams 1,2,4 (at most 2 per logical CPU of each placement), placements [""], 1s+2s per cell x4 repeats (and in the first 2 repeats a pair, one stream with a memory-bandwidth neighbour and with a control neighbour: the held-out point at another latency)
      transtats 1000000 rows on DuckDB, DOP 1,2, 1s+4s per cell x4 repeats
      SMT x DOP: left out, this machine has no SMT (one thread per core): DOP = physical cores = logical CPUs
      page-size points for the model: 4 pairs of 650ms cells, the tpcc-ro image in 4 KiB then 2 MiB pages, each transaction cold then hot, the speed sentinel around each
      page-size points for the model on the server: the same cells on postgres, its own buffers in 4 KiB then 2 MiB pages (two throwaway servers, W=1): its own A and M, when what is left of the budget holds it (--budget 7m has)
      TPC-H-derived SF 0.05 on DuckDB, Q21,Q9,Q1 at DOP 1,2, 500ms+1s per cell x1 repeats

`
	if b.String() != want {
		t.Errorf("plan:\n%s\nwant:\n%s", b.String(), want)
	}
	p.TPCHQueries, p.TPCHBudget = nil, 6*time.Minute
	b.Reset()
	writePlan(&b, p)
	if !strings.HasSuffix(b.String(),
		"      TPC-H-derived: left out, the budget has no room for it on this machine (--budget 6m has)\n\n") {
		t.Errorf("a plan without TPC-H says:\n%s", b.String())
	}
}
