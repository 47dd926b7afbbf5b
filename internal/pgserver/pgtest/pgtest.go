// Package pgtest gives one package's tests one managed PostgreSQL server
// (internal/pgserver): it starts when the first test asks for it, every
// test of the package shares it, and TestMain stops it:
//
//	var pg = pgtest.New(pgserver.Config{SharedBuffers: 64 << 20})
//
//	func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }
//
//	func TestX(t *testing.T) { srv := pg.Server(t); ... }
//
// A test that asks for the server is skipped, with the reason, when no
// PostgreSQL binaries can be had here (pgserver.ErrNoBinaries: none
// installed and no download); any other failure to start fails it. A
// server that failed to start is not tried again. pgtest keeps no server
// of its own: each New is one server, for tests only. A test that needs a
// server of its own (to kill it, say) calls New(cfg).Server(t) and stops
// what it gets.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/numalab/numalab/internal/pgserver"
)

// Shared is one managed server, started on first use.
type Shared struct {
	cfg  pgserver.Config
	once sync.Once
	s    *pgserver.Server
	err  error
}

// New returns a server that Server starts with cfg.
func New(cfg pgserver.Config) *Shared {
	return &Shared{cfg: cfg}
}

// Server returns the server, starting it on the first call.
func (p *Shared) Server(tb testing.TB) *pgserver.Server {
	tb.Helper()
	p.once.Do(func() {
		p.s, p.err = pgserver.Start(context.Background(), p.cfg)
	})
	switch {
	case errors.Is(p.err, pgserver.ErrNoBinaries):
		tb.Skipf("no PostgreSQL server for this test: %v", p.err)
	case p.err != nil:
		tb.Fatal(p.err)
	}
	return p.s
}

// Stop stops the server if one started; it is safe to call more than once.
func (p *Shared) Stop() error {
	if p.s == nil {
		return nil
	}
	return p.s.Stop()
}

// Main runs the tests, then each cleanup (say, closing the engines that
// use the server), then stops the server, and returns the exit code for
// os.Exit: m.Run's, or 1 when stopping fails (said on stderr).
func (p *Shared) Main(m *testing.M, cleanup ...func()) int {
	code := m.Run()
	for _, f := range cleanup {
		f()
	}
	if err := p.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	return code
}
