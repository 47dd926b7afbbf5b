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

	"github.com/numalab/numalab/internal/managed/managedtest"
	"github.com/numalab/numalab/internal/pgserver"
)

// Shared is one managed server, started on first use; Main runs a
// package's tests and then stops it.
type Shared = managedtest.Shared[*pgserver.Server]

// New returns a server that Server starts with cfg.
func New(cfg pgserver.Config) *Shared {
	return managedtest.NewShared("PostgreSQL", pgserver.ErrNoBinaries, func() (*pgserver.Server, error) {
		return pgserver.Start(context.Background(), cfg)
	})
}
