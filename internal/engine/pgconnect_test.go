package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/pgserver/pgtest"
)

// pg is the managed PostgreSQL server the tests of this package share.
var pg = pgtest.New(pgserver.Config{SharedBuffers: 64 << 20})

func TestMain(m *testing.M) { os.Exit(pg.Main(m, func() { my.Stop() })) }

func TestConnectPGErrorsHidePassword(t *testing.T) {
	const secret = "s3cret-pw"
	ctx := context.Background()
	for _, tc := range []struct {
		dsn, want string
	}{
		{"postgres://u:" + secret + "@localhost:notaport/db", "reading PostgreSQL DSN"},
		{"host=/nonexistent-numalab-dir port=5432 user=u password=" + secret + " dbname=x connect_timeout=2",
			"is the server running"},
		{"postgres://u:" + secret + "@127.0.0.1:1/db?connect_timeout=2&sslmode=disable", "is the server running"},
	} {
		conn, err := ConnectPG(ctx, tc.dsn, 0)
		if err == nil {
			conn.Close(ctx)
			t.Errorf("ConnectPG(%s): no error", tc.dsn)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, secret) {
			t.Errorf("error shows the password: %s", msg)
		}
		if !strings.Contains(msg, tc.want) {
			t.Errorf("error %q: want it to contain %q", msg, tc.want)
		}
	}
}

// TestConnectPGHintManaged: "omit the DSN" is a next step only for a
// DSN the user gave; numalab's own server that is gone says so instead.
func TestConnectPGHintManaged(t *testing.T) {
	ctx := context.Background()
	const dsn = "postgres://u@127.0.0.1:1/db?connect_timeout=2&sslmode=disable"
	for _, managed := range []bool{false, true} {
		ownLog := "" // a --dsn server
		if managed {
			ownLog = filepath.Join(t.TempDir(), "postgres.log")
		}
		conn, err := connectPG(ctx, dsn, ownLog, 0)
		if err == nil {
			conn.Close(ctx)
			t.Fatalf("connecting to port 1: no error")
		}
		msg := err.Error()
		if got := strings.Contains(msg, "omit the DSN"); got == managed {
			t.Errorf("managed %v: %q; want \"omit the DSN\" only for a user's DSN", managed, msg)
		}
		if got := strings.Contains(msg, "numalab's own server is no longer running"); got != managed {
			t.Errorf("managed %v: %q; want the gone-server hint only for numalab's own server", managed, msg)
		}
	}
}

func TestConnectPGWrongPassword(t *testing.T) {
	s := pg.Server(t)
	ctx := context.Background()
	admin, err := ConnectPG(ctx, s.DSN(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "DROP ROLE IF EXISTS pwtest"); err != nil { // left by an earlier -count round
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE ROLE pwtest LOGIN PASSWORD 'right-pw'"); err != nil {
		t.Fatal(err)
	}
	// Ask for a password from this role only (pg_hba: first match wins).
	hba := filepath.Join(s.DataDir(), "pg_hba.conf")
	old, err := os.ReadFile(hba)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hba, append([]byte("local all pwtest scram-sha-256\n"), old...), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // the next test, or -count round, finds pg_hba.conf as it was
		if err := os.WriteFile(hba, old, 0o600); err != nil {
			t.Error(err)
		}
		c, err := ConnectPG(ctx, s.DSN(), 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
			t.Error(err)
		}
	})
	if _, err := admin.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		t.Fatal(err)
	}
	dsn := func(pw string) string {
		return fmt.Sprintf("host=%s port=5432 user=pwtest password=%s dbname=postgres sslmode=disable", s.Dir, pw)
	}
	var err2 error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		c, err := ConnectPG(ctx, dsn("wrong-s3cret"), 0)
		if err == nil {
			c.Close(ctx) // reload not yet seen: trust still applies
			continue
		}
		err2 = err
		break
	}
	if err2 == nil {
		t.Fatal("a wrong password was accepted for 10 s after pg_hba.conf asked for one")
	}
	msg := err2.Error()
	var pgErr *pgconn.PgError
	if !errors.As(err2, &pgErr) || pgErr.Code != "28P01" {
		t.Errorf("error %q: want SQLSTATE 28P01 reachable with errors.As", msg)
	}
	if strings.Contains(msg, "wrong-s3cret") {
		t.Errorf("error shows the password: %s", msg)
	}
	if !strings.Contains(msg, "password authentication failed") ||
		!strings.Contains(msg, "check the user name and password") {
		t.Errorf("error %q: want the server's reason and a hint", msg)
	}
	conn, err := ConnectPG(ctx, dsn("right-pw"), 0)
	if err != nil {
		t.Fatalf("right password: %v", err)
	}
	conn.Close(ctx)
}
