package main

import (
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/result"
)

// silentServer listens on 127.0.0.1 and accepts every connection without
// ever answering: a server that hangs, or the wrong service on the port.
// It reads what a client sends and closes its end when the client closed
// its own, so that the client's leaks stay visible (runChecked). It
// returns the port; the test's cleanup closes the listener.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				io.Copy(io.Discard, c)
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
	})
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// TestSilentServerConnectTimeout: a --dsn server that accepts and never
// answers, PostgreSQL's or MariaDB's, stops the run after
// --connect-timeout, with an error that names the server (its password
// hidden) and the bound, and the run is stored as failed; inspect stops
// likewise.
func TestSilentServerConnectTimeout(t *testing.T) {
	port := silentServer(t)
	const secret = "s3cret-pw"
	for _, c := range []struct{ engine, dsn, where string }{
		{"postgres", "host=127.0.0.1 port=" + port + " user=u password=" + secret + " dbname=x",
			"host=127.0.0.1 port=" + port},
		{"mariadb", "u:" + secret + "@tcp(127.0.0.1:" + port + ")/", "tcp(127.0.0.1:" + port + ")"},
	} {
		st := filepath.Join(t.TempDir(), "s.db")
		start := time.Now()
		_, _, err := runCLI(t, "run", "null", "--engine", c.engine, "--dsn", c.dsn, "--connect-timeout", "1s", "--store", st,
			"--streams", "1", "--duration", "1s", "--warmup", "0s")
		took := time.Since(start)
		t.Logf("%s: %v after %v", c.engine, err, took.Round(time.Millisecond))
		if err == nil {
			t.Errorf("%s: a server that never answers: no error", c.engine)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "no answer within 1s (--connect-timeout") || !strings.Contains(msg, c.where) ||
			strings.Contains(msg, secret) {
			t.Errorf("%s: %q\nwant the server (%s, no password) and the bound named", c.engine, msg, c.where)
		}
		if took < time.Second || took > 6*time.Second {
			t.Errorf("%s: the error came %v after the start; want it at the 1s bound, give or take the setup", c.engine, took)
		}
		if r := onlyRun(t, st); r.Status != result.StatusFailed {
			t.Errorf("%s: the run is stored %q, want failed", c.engine, r.Status)
		}
	}
	// inspect connects on its own, with the same bound.
	for _, c := range []struct{ engine, dsn string }{
		{"postgres", "host=127.0.0.1 port=" + port + " user=u password=" + secret + " dbname=x"},
		{"mariadb", "u:" + secret + "@tcp(127.0.0.1:" + port + ")/"},
	} {
		start := time.Now()
		_, _, err := runCLI(t, "inspect", "--engine", c.engine, "--dsn", c.dsn, "--connect-timeout", "1s")
		took := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), "no answer within 1s (--connect-timeout") ||
			strings.Contains(err.Error(), secret) || took > 6*time.Second {
			t.Errorf("inspect --engine %s: %v after %v; want the bound named, no password", c.engine, err, took)
		}
	}
}
