package null

// What differs per engine, keyed by the registry's dialect: the one file
// of this package that names engines. An engine the table lacks has no
// null transaction.

import (
	"context"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/engine"
)

// dialect is the null transaction on one engine.
type dialect struct {
	// open opens a server stream on conn, which the engine opened on the
	// stream's thread; nil for the embedded engine (openSQLite).
	open func(ctx context.Context, conn engine.Conn, protocol, call string, session []string) (drive.Stream, error)
	// pointSelect says the engine has sysbench's point select (--call
	// point-select).
	pointSelect bool
	// transport is the transport a DSN names.
	transport func(dsn string) string
	// named: the report names the server's version and the protocol a
	// run's calls were sent with.
	named bool
	// oneCall: an OLTP transaction on the engine is one call (a server
	// function), so its null round trip is the least a transaction takes.
	oneCall bool
}

var dialects = map[engine.Dialect]dialect{
	engine.SQLite: {},
	engine.Postgres: {named: true, oneCall: true,
		open: func(ctx context.Context, conn engine.Conn, protocol, _ string, session []string) (drive.Stream, error) {
			return openServer(ctx, conn, protocol, "", session)
		},
		// a host that is a directory is a unix socket
		transport: func(dsn string) string {
			if cc, err := pgx.ParseConfig(dsn); err == nil && strings.HasPrefix(cc.Host, "/") {
				return Unix
			}
			return TCP
		},
	},
	engine.MariaDB: {pointSelect: true,
		open: func(ctx context.Context, conn engine.Conn, protocol, call string, session []string) (drive.Stream, error) {
			return openServer(ctx, conn, protocol, call, session)
		},
		transport: func(dsn string) string {
			if cfg, err := mysql.ParseDSN(dsn); err == nil && cfg.Net == "unix" {
				return Unix
			}
			return TCP
		},
	},
}

// dialectOf is the engine named name and the null transaction on it; ok
// is false when the engine has none.
func dialectOf(name string) (engine.Spec, dialect, bool) {
	spec, known := engine.Lookup(name)
	d, ok := dialects[spec.Dialect]
	return spec, d, known && ok
}

// Engines are the engines with a null transaction, for messages.
func Engines() string {
	return engine.List(func(s engine.Spec) bool { _, ok := dialects[s.Dialect]; return ok })
}

// namedOn says the report names engine name's version and protocol.
func namedOn(name string) bool {
	_, d, ok := dialectOf(name)
	return ok && d.named
}

// oneCallOn says an OLTP transaction on engine name is one call.
func oneCallOn(name string) bool {
	_, d, ok := dialectOf(name)
	return ok && d.oneCall
}

// PointSelectOn says engine name has sysbench's point select (--call
// point-select).
func PointSelectOn(name string) bool {
	_, d, ok := dialectOf(name)
	return ok && d.pointSelect
}
