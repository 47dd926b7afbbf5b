package pgtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/pgserver"
)

// recorder is a testing.TB that records Skipf and Fatal instead of
// ending the test, so that the test can check which one Server chose.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                          {}
func (r *recorder) Skipf(format string, args ...any) { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatal(args ...any)                { r.failed = fmt.Sprint(args...) }

// viaMain is the server TestMain stops through Main; TestServerForMain
// starts it, and keeps it in mainServer.
var (
	viaMain    = New(pgserver.Config{SharedBuffers: 16 << 20})
	mainServer *pgserver.Server
)

// TestMain checks Main: the cleanups run after the tests, while the server
// still runs, and the server is stopped (its directory gone) at the end.
func TestMain(m *testing.M) {
	cleanupSaw := "no cleanup"
	code := viaMain.Main(m, func() {
		cleanupSaw = ""
		if mainServer != nil {
			if _, err := os.Stat(mainServer.Dir); err != nil {
				cleanupSaw = "server stopped before the cleanup: " + err.Error()
			}
		}
	})
	if cleanupSaw != "" {
		fmt.Fprintln(os.Stderr, "Main:", cleanupSaw)
		code = 1
	}
	if mainServer != nil {
		if _, err := os.Stat(mainServer.Dir); !os.IsNotExist(err) {
			fmt.Fprintf(os.Stderr, "Main: after Main, %s: %v, want it removed\n", mainServer.Dir, err)
			code = 1
		}
	}
	os.Exit(code)
}

func TestServerForMain(t *testing.T) {
	mainServer = viaMain.Server(t)
	if s := mainServer; s.PID() <= 0 {
		t.Errorf("server PID %d", s.PID())
	}
}

func TestServerStartsOnceAndStops(t *testing.T) {
	p := New(pgserver.Config{SharedBuffers: 32 << 20})
	if err := p.Stop(); err != nil {
		t.Errorf("Stop before any start: %v", err)
	}
	s := p.Server(t)
	defer p.Stop()
	if again := p.Server(t); again != s {
		t.Errorf("second Server call started another server (%s, then %s)", s.Dir, again.Dir)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	var sb string
	if err := conn.QueryRow(ctx, "SELECT current_setting('shared_buffers')").Scan(&sb); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if sb != "32MB" {
		t.Errorf("shared_buffers = %s, want the configured 32MB", sb)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Errorf("after Stop, %s: %v, want it removed", s.Dir, err)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestServerSkipsWithoutBinaries(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p := New(pgserver.Config{Binaries: "embedded", CacheDir: filepath.Join(blocker, "cache")})
	r := &recorder{TB: t}
	if s := p.Server(r); s != nil {
		t.Errorf("Server = %v, want none", s)
	}
	if r.failed != "" || !strings.Contains(r.skipped,
		"no PostgreSQL server for this test: starting a managed PostgreSQL server: downloading") {
		t.Errorf("skipped %q, failed %q: want a skip that gives the reason", r.skipped, r.failed)
	}
}

func TestServerFailsOnOtherErrors(t *testing.T) {
	p := New(pgserver.Config{Binaries: "homebrew"})
	for range 2 {
		r := &recorder{TB: t}
		p.Server(r)
		if r.skipped != "" || !strings.Contains(r.failed, "unknown source") {
			t.Errorf("skipped %q, failed %q: want the test failed with the reason", r.skipped, r.failed)
		}
	}
}
