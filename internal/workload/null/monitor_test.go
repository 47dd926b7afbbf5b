package null

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// monitorProgress is the recorder for a monitoring sweep's cells.
type monitorProgress struct{ *recorder }

func (monitorProgress) Measured(sweep.Cell, monitor.Cell) {}

// sessionCheck wraps the MariaDB workload: it reads, for each stream it
// opens, whether performance_schema instruments the stream's server
// thread, and for each cell how many prepared calls the general log
// recorded.
type sessionCheck struct {
	*Sweep
	t            *testing.T
	db           *sql.DB
	log          string // the general log file
	mu           sync.Mutex
	instrumented map[int][]string // by cell, a stream's thread's INSTRUMENTED
	logged       map[int]int      // by cell, the general log's Execute lines
	size         int              // the general log's size when the cell began
}

func (s *sessionCheck) Begin(ctx context.Context, c sweep.Cell) error {
	s.size = len(s.read())
	return s.Sweep.Begin(ctx, c)
}

func (s *sessionCheck) Stream(ctx context.Context, c sweep.Cell, i int) (drive.Stream, error) {
	st, err := s.Sweep.Stream(ctx, c, i)
	if err != nil {
		return nil, err
	}
	var v string
	if err := s.db.QueryRowContext(ctx, "SELECT instrumented FROM performance_schema.threads WHERE thread_os_id = ?",
		st.(*serverStream).pid).Scan(&v); err != nil {
		st.Close()
		return nil, err
	}
	s.mu.Lock()
	s.instrumented[c.Index] = append(s.instrumented[c.Index], v)
	s.mu.Unlock()
	return st, nil
}

func (s *sessionCheck) End(ctx context.Context, c sweep.Cell, m *result.Cell, err error) sweep.Outcome[*Cell] {
	s.logged[c.Index] = strings.Count(s.read()[s.size:], "Execute\tSELECT 1")
	return s.Sweep.End(ctx, c, m, err)
}

func (s *sessionCheck) read() string {
	b, err := os.ReadFile(s.log)
	if err != nil && !os.IsNotExist(err) {
		s.t.Fatal(err)
	}
	return string(b)
}

// monitored runs cfg's first cell, briefly, in monitor.Plan's pairs of
// fs, each cell's facility switched in its streams' sessions, through
// check(w) (the sweep with its own checks), a managed server starting
// with what fs need; it returns the plan's slots, by cell.
func monitored(t *testing.T, cfg RunConfig, fs []monitor.Facility,
	check func(w *Sweep) sweep.Workload[*Cell]) []monitor.Slot {
	t.Helper()
	cfg.Transports, cfg.Pairings = []string{Unix}, []string{"same-cpu"}
	cfg.Duration, cfg.Warmup, cfg.Repeat = 200*time.Millisecond, 0, 1
	one, layout, m := cellsHere(t, cfg)
	cells, slots := monitor.Plan(one[0], fs, 1)
	w := NewSweep(cfg, slices.Repeat(layout[:1], len(cells)), m)
	w.ServerSettings(monitor.ManagedSettings(fs))
	t.Cleanup(func() { runtime.GOMAXPROCS(runtime.GOMAXPROCS(0)) })
	plan := cfg.Plan(cells)
	plan.Switch = monitor.Switch(slots)
	rec := &recorder{}
	out, err := sweep.Run(context.Background(), plan,
		monitor.Wrap(monitor.Inner[Cell]{Sweep: check(w), Session: w.Session, Kind: KindCell,
			Cell: func(c *Cell) *result.Cell { return &c.Cell }}, slots), rec, monitorProgress{rec})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(cells) {
		t.Fatalf("%d cells measured; want %d", len(out), len(cells))
	}
	if !slices.Contains(rec.kinds(), string(monitor.KindCell)) || slices.Contains(rec.kinds(), string(KindCell)) {
		t.Errorf("stored %v; want monitor cells, not null cells", rec.kinds())
	}
	return slots
}

// TestMonitorSessionsMariaDB runs run null --monitor's pairs of
// performance_schema and general_log on a MariaDB server (a user's, with
// the general log on): in each facility's on cell its streams' sessions
// have it on, in the off cell and in the other facility's cells off, as
// the server itself says (performance_schema.threads, the general log).
func TestMonitorSessionsMariaDB(t *testing.T) {
	srv := my.Server(t) // skips the test when MariaDB is not installed
	e, err := engine.Open(context.Background(), "mariadb", engine.Options{DSN: srv.DSN()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db := e.DB()
	if _, err := db.Exec("SET GLOBAL general_log = ON"); err != nil {
		t.Fatal(err)
	}
	defer db.Exec("SET GLOBAL general_log = OFF")
	var logFile string
	if err := db.QueryRow("SELECT @@global.general_log_file").Scan(&logFile); err != nil {
		t.Fatal(err)
	}
	fs, err := monitor.Check(monitor.Request{Names: []string{"performance_schema", "general_log"}, Engine: "mariadb",
		DSN: true, AllowSettings: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultRunConfig()
	cfg.Engine, cfg.DSN = "mariadb", srv.DSN()
	var chk *sessionCheck
	slots := monitored(t, cfg, fs, func(w *Sweep) sweep.Workload[*Cell] {
		chk = &sessionCheck{Sweep: w, t: t, db: db, log: logPath(srv.DataDir(), logFile), instrumented: map[int][]string{},
			logged: map[int]int{}}
		return chk
	})
	for i, s := range slots {
		psOn, logOn := s.Facility == "performance_schema" && s.On, s.Facility == "general_log" && s.On
		want := map[bool]string{true: "YES", false: "NO"}[psOn]
		if got := chk.instrumented[i]; len(got) != 1 || got[0] != want {
			t.Errorf("cell %d (%s %s): the stream's server thread INSTRUMENTED %v; want %s", i, s.Facility, s.State(), got, want)
		}
		if got := chk.logged[i]; (got > 0) != logOn {
			t.Errorf("cell %d (%s %s): the general log has %d of its calls; want them logged %v", i, s.Facility,
				s.State(), got, logOn)
		}
	}
}

// countCheck wraps the PostgreSQL workload: it counts, for each cell,
// the calls of SELECT 1 pg_stat_statements tracked.
type countCheck struct {
	*Sweep
	t       *testing.T
	before  int64
	tracked map[int]int64 // by cell
}

func (s *countCheck) Begin(ctx context.Context, c sweep.Cell) error {
	if c.Index == 0 {
		if _, err := s.engs[Unix].DB().ExecContext(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
			return err
		}
	}
	s.before = s.calls(ctx)
	return s.Sweep.Begin(ctx, c)
}

func (s *countCheck) End(ctx context.Context, c sweep.Cell, m *result.Cell, err error) sweep.Outcome[*Cell] {
	s.tracked[c.Index] = s.calls(ctx) - s.before
	return s.Sweep.End(ctx, c, m, err)
}

// calls are the calls of SELECT 1 that pg_stat_statements has tracked,
// once the server has no client backend but this pool's: the window's end
// cuts a stream's call in flight by shutting its socket, and its backend
// still runs the call (the query may sit unread in its socket) and stores
// it in pg_stat_statements before it sees the client gone and exits.
// Without the wait, that store could fall after the next cell's first
// read and count in the wrong cell (seen once in go test -count=3: 1 call
// in a cell with tracking off, after one with it on).
func (s *countCheck) calls(ctx context.Context) int64 {
	db := s.engs[Unix].DB()
	for deadline := time.Now().Add(10 * time.Second); ; {
		var backends int
		if err := db.QueryRowContext(ctx,
			"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'").Scan(&backends); err != nil {
			s.t.Fatal(err)
		}
		pool := db.Stats().OpenConnections
		if backends <= pool {
			break
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%d client backends besides this pool's %d still there after 10 s", backends-pool, pool)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var n int64
	if err := db.QueryRowContext(ctx,
		"SELECT coalesce(sum(calls), 0) FROM pg_stat_statements "+
			"WHERE query IN ('SELECT 1', 'SELECT $1')").Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

// TestMonitorSessionsPostgres runs run null --monitor's pairs of
// pg_stat_statements and track_io_timing on a managed PostgreSQL server,
// which starts with pg_stat_statements preloaded and tracking nothing:
// its on cell's calls are tracked, and no other cell's.
func TestMonitorSessionsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	fs, err := monitor.Check(monitor.Request{Names: []string{"pg_stat_statements", "track_io_timing"}, Engine: "postgres"})
	if err != nil {
		t.Fatal(err)
	}
	chk := &countCheck{t: t, tracked: map[int]int64{}}
	slots := monitored(t, DefaultRunConfig(), fs, func(w *Sweep) sweep.Workload[*Cell] {
		chk.Sweep = w
		return chk
	})
	for i, s := range slots {
		if got, on := chk.tracked[i], s.Facility == "pg_stat_statements" && s.On; (got > 0) != on {
			t.Errorf("cell %d (%s %s): pg_stat_statements tracked %d calls; want them tracked %v",
				i, s.Facility, s.State(), got, on)
		}
	}
}

// logPath is the general log's file: general_log_file is relative to the
// data directory unless absolute.
func logPath(dataDir, file string) string {
	if filepath.IsAbs(file) {
		return file
	}
	return filepath.Join(dataDir, file)
}
