package engine

import (
	"context"
	"fmt"
	"net"

	"github.com/jackc/pgx/v5/pgproto3"
)

// TakeOver hands a PostgreSQL connection's socket to a workload that
// speaks the wire protocol itself on its hot path: it waits for pgx to be
// idle, hijacks the connection and returns the socket with a frontend on
// it. Statements prepared through Native().Postgres before stay prepared.
// On error c is closed.
func TakeOver(ctx context.Context, c Conn) (net.Conn, *pgproto3.Frontend, error) {
	pc := c.Native().Postgres
	if pc == nil {
		c.Close()
		return nil, nil, fmt.Errorf("taking over the connection: not a PostgreSQL connection")
	}
	if err := pc.PgConn().SyncConn(ctx); err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("taking over the connection: %w", err)
	}
	hc, err := pc.PgConn().Hijack()
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("taking over the connection: %w", err)
	}
	return hc.Conn, pgproto3.NewFrontend(hc.Conn, hc.Conn), nil
}
