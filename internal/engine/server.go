package engine

// What the server engines share: the decision between a --dsn server and
// a managed one, made once (serverDSN), and what a managed server offers
// a workload beyond its engine (ManagedServer).

import (
	"context"
	"fmt"
	"maps"
	"os"

	"github.com/numalab/numalab/internal/result"
)

// managedServer is what an engine needs of the server it started.
type managedServer interface {
	DSN() string
	Describe() string
	Stop() error
}

// serverDSN is the server opt names: its --dsn (where is it with the
// password hidden, srv the zero S), or else a managed server start starts
// (where is its description). A server started is the caller's to stop.
func serverDSN[S managedServer](ctx context.Context, name string, opt Options,
	start func(context.Context) (S, error)) (dsn, where string, srv S, err error) {
	if opt.DSN != "" {
		return opt.DSN, result.Redact(opt.DSN), srv, nil
	}
	if srv, err = start(ctx); err != nil {
		return "", "", srv, fmt.Errorf("opening %s: %w", name, err)
	}
	return srv.DSN(), srv.Describe(), srv, nil
}

// serverSettings are a managed server's extra settings: the kind's own
// (base), then Options.ServerSettings over them; nil when neither has any.
func serverSettings(base, extra map[string]string) map[string]string {
	if len(extra) == 0 {
		return base
	}
	m := maps.Clone(base)
	if m == nil {
		m = map[string]string{}
	}
	maps.Copy(m, extra)
	return m
}

// Managed is what an engine's managed server offers a workload beyond the
// engine: its description, whether it reclaimed what killed numalab
// processes left, and its TCP address.
type Managed struct {
	// Describe is the server's description line.
	Describe string
	// Reclaimed says the server's start removed what killed numalab
	// processes left, or failed to (the description says which).
	Reclaimed bool
	// TCPDSN is the server over TCP loopback, "" when it listens on its
	// unix socket only (Options.TCP asks a PostgreSQL server to listen).
	TCPDSN string
}

// ManagedServer is e's managed server, ok false for an embedded engine or
// a --dsn server.
func ManagedServer(e Engine) (m Managed, ok bool) {
	if s, isServer := e.(interface{ managed() (Managed, bool) }); isServer {
		return s.managed()
	}
	return Managed{}, false
}

// loopback is an address of the loopback network for a managed server's
// TCP socket, chosen from this process's id so that two numalab
// processes' servers do not collide on one port.
func loopback() string {
	pid := os.Getpid()
	return fmt.Sprintf("127.78.%d.%d", pid/254%256, pid%254+1)
}
