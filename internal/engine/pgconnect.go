package engine

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/numalab/numalab/internal/result"
)

// ConnectPG connects to the PostgreSQL server dsn names. Its errors keep the
// password masked, say what failed, and suggest what to check; the pgx error
// stays reachable through errors.As (for *pgconn.PgError and the like).
// Connecting is bounded by timeout (ConnectBound).
func ConnectPG(ctx context.Context, dsn string, timeout time.Duration) (*pgx.Conn, error) {
	return connectPG(ctx, dsn, "", timeout)
}

// connectPG is ConnectPG; ownLog, when not "", is the log of the server,
// numalab's own, whose DSN the user did not give (ownServerTimeout).
func connectPG(ctx context.Context, dsn, ownLog string, timeout time.Duration) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, &pgConnectError{
			msg: fmt.Sprintf("reading PostgreSQL DSN %q: %v (expected postgres://user:password@host:port/dbname or "+
				"\"host=... port=... user=... dbname=...\")", dsn, err),
			dsn: dsn,
			err: err,
		}
	}
	conn, err := ConnectBound(ctx, timeout,
		func(ctx context.Context) (*pgx.Conn, error) { return pgx.ConnectConfig(ctx, cfg) })
	if err != nil {
		err = ownServerTimeout(err, ownLog)
		return nil, &pgConnectError{msg: fmt.Sprintf("connecting to PostgreSQL %q: %v%s",
			dsn, err, pgConnectHint(err, ownLog != "")), dsn: dsn, err: err}
	}
	return conn, nil
}

// pgConnectError is a connection error whose text is redacted.
type pgConnectError struct {
	msg string
	dsn string // whose password, read however pgx read it, the text must not show
	err error
}

func (e *pgConnectError) Error() string { return result.RedactWithDSN(e.msg, e.dsn) }
func (e *pgConnectError) Unwrap() error { return e.err }

// pgConnectHint suggests what to check for common connection failures;
// managed says the server is numalab's own (no DSN was given).
func pgConnectHint(err error, managed bool) string {
	var pgErr *pgconn.PgError
	var timeout *ConnectTimeoutError
	if errors.As(err, &timeout) {
		return "" // it says what to check
	}
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "28P01", "28000": // invalid_password, invalid_authorization_specification
			return " (check the user name and password in the DSN)"
		case "3D000": // invalid_catalog_name
			return " (the database does not exist: check dbname in the DSN)"
		}
		return ""
	}
	switch {
	case managed && (errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)):
		return " (numalab's own server is no longer running: it stopped or was killed; run again to start a fresh one)"
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOENT):
		return " (is the server running and listening at that host and port? " +
			"omit the DSN to let numalab start its own server)"
	case errors.Is(err, context.DeadlineExceeded):
		return " (no answer in time: check the host name, port and firewall)"
	}
	return ""
}
