// Package mytest gives one package's tests one managed MariaDB server
// (internal/mariaserver), as pgtest does for PostgreSQL: it starts when the
// first test asks for it, every test of the package shares it, and
// TestMain stops it:
//
//	var my = mytest.New(mariaserver.Config{BufferPool: 64 << 20})
//
//	func TestMain(m *testing.M) { code := m.Run(); my.Stop(); os.Exit(code) }
//
//	func TestX(t *testing.T) { srv := my.Server(t); ... }
//
// A test that asks for the server is skipped, with the reason, when
// MariaDB is not installed (mariaserver.ErrNoBinaries; .ci/run installs
// it as root); any other failure to start fails it. A server that failed
// to start is not tried again.
package mytest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/numalab/numalab/internal/mariaserver"
)

// Shared is one managed server, started on first use.
type Shared struct {
	cfg  mariaserver.Config
	once sync.Once
	s    *mariaserver.Server
	err  error
}

// New returns a server that Server starts with cfg.
func New(cfg mariaserver.Config) *Shared { return &Shared{cfg: cfg} }

// Server returns the server, starting it on the first call.
func (p *Shared) Server(tb testing.TB) *mariaserver.Server {
	tb.Helper()
	p.once.Do(func() { p.s, p.err = mariaserver.Start(context.Background(), p.cfg) })
	switch {
	case errors.Is(p.err, mariaserver.ErrNoBinaries):
		tb.Skipf("no MariaDB server for this test: %v", p.err)
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
