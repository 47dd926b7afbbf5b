package monitor

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/pgserver/pgtest"
)

// pg plays a user's server with pg_stat_statements preloaded.
var pg = pgtest.New(pgserver.Config{SharedBuffers: 16 << 20,
	Settings: map[string]string{"shared_preload_libraries": "pg_stat_statements"}})

func TestMain(m *testing.M) { os.Exit(pg.Main(m, func() { my.Stop() })) }

// TestCheckServer: a superuser may set every facility; a plain user is
// refused before anything runs, with what would let it; the check leaves
// the server's settings as they were.
func TestCheckServer(t *testing.T) {
	srv := pg.Server(t)
	ctx := context.Background()
	before := settings(t, srv.DSN())
	var pgAll []Facility
	for _, f := range Facilities {
		if f.Engine != "mariadb" {
			pgAll = append(pgAll, f)
		}
	}
	if err := CheckServer(ctx, srv.DSN(), pgAll, 0); err != nil {
		t.Fatalf("superuser, every facility: %v", err)
	}
	c, err := engine.ConnectPG(ctx, srv.DSN(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "DROP ROLE IF EXISTS plain; CREATE ROLE plain LOGIN"); err != nil {
		t.Fatal(err)
	}
	plain := strings.Replace(srv.DSN(), "user=numalab", "user=plain", 1)
	err = CheckServer(ctx, plain, facilities(t, "track_io_timing"), 0)
	if err == nil || !strings.Contains(err.Error(), `refused "SET track_io_timing = on"`) ||
		!strings.Contains(err.Error(), "GRANT SET ON PARAMETER track_io_timing") {
		t.Errorf("plain user, track_io_timing: %v; want a refusal saying what to grant", err)
	}
	err = CheckServer(ctx, plain, facilities(t, "auto_explain"), 0)
	if err == nil || !strings.Contains(err.Error(), `refused "LOAD 'auto_explain'"`) {
		t.Errorf("plain user, auto_explain: %v; want LOAD refused", err)
	}
	if err := CheckServer(ctx, plain, facilities(t, "sysmon"), 0); err != nil {
		t.Errorf("plain user, sysmon (nothing on the server): %v", err)
	}
	if after := settings(t, srv.DSN()); after != before {
		t.Errorf("the check changed the server's settings:\nbefore %s\nafter  %s", before, after)
	}
}

// settings are the facilities' settings as a new session sees them, with
// their sources.
func settings(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	c, err := engine.ConnectPG(ctx, dsn, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var s string
	err = c.QueryRow(ctx,
		`SELECT string_agg(name || '=' || setting || ' (' || source || ')', ', ' ORDER BY name) FROM pg_settings
		WHERE name IN ('pg_stat_statements.track', 'log_min_duration_statement', 'track_io_timing', 'session_preload_libraries')`).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
