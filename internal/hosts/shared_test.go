package hosts

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/pgserver/pgtest"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

var pg = pgtest.New(pgserver.Config{SharedBuffers: 32 << 20})

func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }

// TestSharedStore: three hosts store their memory probes and OLTP runs
// into one managed PostgreSQL store at the same time, each through its
// own connections, as 'numalab eval --store postgres://…' on three
// machines would; nothing is lost (every run complete, every cell there),
// the comparison reads all three from the one store, and the host whose
// clock is 90 s ahead, and the one run by another numalab version, are
// said so.
func TestSharedStore(t *testing.T) {
	srv := pg.Server(t)
	cfg, err := pgx.ParseConfig(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	u := fmt.Sprintf("postgres://%s@/%s?host=%s&port=%d&sslmode=disable",
		cfg.User, cfg.Database, url.QueryEscape(cfg.Host), cfg.Port)
	reps := func(v float64, n int) []float64 {
		var out []float64
		for i := range n {
			out = append(out, v*(1+0.01*float64(i%3-1)))
		}
		return out
	}
	specs := []spec{
		{host: "h1", cores: 2, smt: 2, one: reps(100, 20), two: reps(190, 20), now: time.Now},
		{host: "h2", cores: 4, smt: 1, one: reps(90, 20), two: reps(170, 20), now: time.Now, version: "v2"},
		{host: "h3", cores: 8, smt: 1, one: reps(80, 20), two: reps(150, 20),
			now: func() time.Time { return time.Now().Add(90 * time.Second) }},
	}
	t.Run("writers", func(t *testing.T) {
		for _, s := range specs {
			t.Run(s.host, func(t *testing.T) {
				t.Parallel()
				st, err := store.Open(u)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				write(t, st, s)
			})
		}
	})
	if t.Failed() {
		return
	}
	st, err := store.OpenToRead(u)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.List()
	if err != nil || len(runs) != 6 {
		t.Fatalf("%d runs stored (%v), want 6: a probe and an OLTP run of each host", len(runs), err)
	}
	srcs, _, err := Select([]Store{st}, Selection{})
	if err != nil || len(srcs) != 3 {
		t.Fatalf("%d hosts selected (%v), want 3", len(srcs), err)
	}
	for _, s := range srcs {
		cells, err := result.KindCell.All(s.Run)
		if err != nil || len(cells) != 40 || s.Run.Status != result.StatusComplete || s.Probe == nil {
			t.Errorf("host %s: %d cells (%v), status %s, probe %v; want 40 cells, complete, with its probe",
				s.Run.Host, len(cells), err, s.Run.Status, s.Probe != nil)
		}
	}
	c, err := Compare([]string{st.Path()},
		srcs, []Price{{Name: "h1", Price: 1000}, {Name: "h2", Price: 1000}, {Name: "h3", Price: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(c.Notes, "\n")
	for _, want := range []string{"numalab versions differ (h1 test, h2 v2, h3 test)",
		"host h3's clock was 1m30s ahead of the store's"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "host h1's clock") || strings.Contains(notes, "host h2's clock") {
		t.Errorf("a host with the store's clock is said to differ:\n%s", notes)
	}
	if c.Decision != "h1" {
		t.Errorf("decision %q, want h1 (190 tps for 1,000): %s", c.Decision, c.Recommendation)
	}
}
