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

	"github.com/numalab/numalab/internal/managed/managedtest"
	"github.com/numalab/numalab/internal/mariaserver"
)

// Shared is one managed server, started on first use.
type Shared = managedtest.Shared[*mariaserver.Server]

// New returns a server that Server starts with cfg.
func New(cfg mariaserver.Config) *Shared {
	return managedtest.NewShared("MariaDB", mariaserver.ErrNoBinaries, func() (*mariaserver.Server, error) {
		return mariaserver.Start(context.Background(), cfg)
	})
}
