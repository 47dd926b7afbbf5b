package engine

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/pgserver"
)

// TestOwnServerConnectTimeout: numalab's own server gets the longer bound
// (OwnServerConnectTimeout) when none is given, a --dsn server the default
// one; a connection that the own server does not answer (its process
// stopped with SIGSTOP) ends at the bound with an error that says it was
// numalab's own server and quotes its log.
func TestOwnServerConnectTimeout(t *testing.T) {
	if connectBound(0, false) != DefaultConnectTimeout || connectBound(0, true) != OwnServerConnectTimeout ||
		connectBound(time.Second, true) != time.Second {
		t.Errorf("connectBound: %v for a --dsn server, %v for the own one, %v given 1s; want %v, %v, 1s",
			connectBound(0, false), connectBound(0, true), connectBound(time.Second, true), DefaultConnectTimeout,
			OwnServerConnectTimeout)
	}
	for _, name := range []string{"postgres", "mariadb"} {
		t.Run(name, func(t *testing.T) {
			if name == "mariadb" {
				my.Server(t) // skips without MariaDB
			}
			ctx := context.Background()
			eng, err := Open(ctx, name, Options{})
			if errors.Is(err, pgserver.ErrNoBinaries) {
				t.Skipf("no PostgreSQL binaries to start a managed server: %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			var bound *time.Duration
			var pid int
			var log string
			switch e := eng.(type) {
			case *pgEngine:
				bound, pid, log = &e.timeout, e.server.PID(), e.server.LogPath()
			case *myEngine:
				bound, pid, log = &e.timeout, e.server.PID(), e.server.LogPath()
			}
			if *bound != OwnServerConnectTimeout {
				t.Errorf("own server's bound %v, want %v", *bound, OwnServerConnectTimeout)
			}
			*bound = time.Second
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			stopped := true
			defer func() {
				if stopped {
					syscall.Kill(pid, syscall.SIGCONT)
				}
			}()
			t0 := time.Now()
			c, err := eng.Connect(ctx)
			took := time.Since(t0)
			if err == nil {
				c.Close()
				t.Fatal("a stopped server answered")
			}
			t.Logf("after %v: %v", took.Round(time.Millisecond), err)
			if msg := err.Error(); !strings.Contains(msg, "no answer within 1s from numalab's own server") ||
				!strings.Contains(msg, filepath.Base(log)) || took > 6*time.Second {
				t.Errorf("after %v: %v; want the own server's timeout of 1s, quoting %s",
					took.Round(time.Millisecond), err, filepath.Base(log))
			}
			if pe, ok := eng.(*pgEngine); ok { // the first connection of Open, the same way
				if _, err := connectPG(ctx, pe.server.DSN(), pe.ownLog, time.Second); err == nil ||
					!strings.Contains(err.Error(), "from numalab's own server") || !strings.Contains(err.Error(), filepath.Base(log)) {
					t.Errorf("connectPG to the stopped own server: %v; want the own server's timeout, quoting %s",
						err, filepath.Base(log))
				}
			}
			syscall.Kill(pid, syscall.SIGCONT)
			stopped = false
			*bound = OwnServerConnectTimeout
			c, err = eng.Connect(ctx)
			if err != nil {
				t.Fatalf("connecting once the server runs again: %v", err)
			}
			c.Close()
		})
	}
}
