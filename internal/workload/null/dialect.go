package null

// What the null transaction is on each kind of engine, chosen once by
// whether the engine is a server and how it keeps a table
// (engine.Spec.Storage): a server's stream repeats its call through the
// engine (engine.Repeater); the embedded engine's is SQLite's, in memory.
// An engine of no kind here has no null transaction.

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

// The kinds of engine with a null transaction.
var (
	// The embedded engine that keeps rows in key order: SQLite, in
	// memory (openSQLite).
	clusteredFile = dialect{}
	// A server that keeps rows in a heap (PostgreSQL), its DSN pgx's.
	heapServer = dialect{named: true, oneCall: true, open: openRepeater,
		// a host that is a directory is a unix socket
		transport: func(dsn string) string {
			if cc, err := pgx.ParseConfig(dsn); err == nil && strings.HasPrefix(cc.Host, "/") {
				return Unix
			}
			return TCP
		},
	}
	// A server that keeps rows in key order (MariaDB, MySQL), its DSN
	// go-sql-driver/mysql's.
	clusteredServer = dialect{pointSelect: true, open: openRepeater,
		transport: func(dsn string) string {
			if cfg, err := mysql.ParseDSN(dsn); err == nil && cfg.Net == "unix" {
				return Unix
			}
			return TCP
		},
	}
)

func openRepeater(ctx context.Context, conn engine.Conn, protocol, call string,
	session []string) (drive.Stream, error) {
	return openServer(ctx, conn, protocol, call, session)
}

// dialectOf is the engine named name and the null transaction on it; ok
// is false when the engine has none.
func dialectOf(name string) (engine.Spec, dialect, bool) {
	spec, known := engine.Lookup(name)
	switch {
	case !known:
		return spec, dialect{}, false
	case spec.Server && spec.Storage == engine.StorageHeap:
		return spec, heapServer, true
	case spec.Server && spec.Storage == engine.StorageClustered:
		return spec, clusteredServer, true
	case !spec.Server && spec.Storage == engine.StorageClustered:
		return spec, clusteredFile, true
	}
	return spec, dialect{}, false
}

// Engines are the engines with a null transaction, for messages.
func Engines() string {
	return engine.List(func(s engine.Spec) bool { _, _, ok := dialectOf(s.Name); return ok })
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
