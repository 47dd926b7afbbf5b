package insert

// What the workload does its own way on each kind of engine, chosen once
// by how the engine keeps a table (engine.Spec.Storage) and whether it is
// a server (dialectOf); the SQL each engine spells its own way comes from
// the engine (Spec.SQL). Everything else asks dialectOf or the engine
// registry.

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/engine"
)

// dialect is the insert workload on one engine.
type dialect struct {
	// methods says --method chooses between COPY and INSERT; only says
	// the one method the engine has otherwise ("" when the engine's own
	// bulk path is named by method).
	methods bool
	only    string
	// method names how the rows go in, for the record.
	method func(cfgMethod string) string
	// diskBytes is about what a row costs on disk.
	diskBytes func(indexes bool, key string) int64
	// id is the id column's DDL for key "shared" (numbered by the engine);
	// before are statements to run first (a sequence).
	id     string
	before []string
	// rowid says any key is the table's rowid, numbered by the engine
	// when not given (id).
	rowid bool
	// sql is the engine's spelling (dialectOf sets it).
	sql engine.SQL
	// dataBytes sizes a managed server's cache (engine.Options.DataBytes).
	dataBytes int64
	// claim makes the target table afresh on a server, refusing one that
	// is not numalab's (nil for a file, which claimFile and createFile
	// make).
	claim func(ctx context.Context, eng engine.Engine, cfg RunConfig, d dialect) error
	// empty empties the table before a cell.
	empty func(ctx context.Context, s *Sweep) error
	// sample starts reading where the streams wait, on a connection of
	// the setup pool (nil: the engine says nothing of it).
	sample func(conn *sql.Conn, cs *cellState, cfg RunConfig)
	// loader opens one stream's loader.
	loader func(ctx context.Context, s *Sweep) (loader, error)
	// oneWriter says the streams write through connections of their own
	// to a file one writer at a time holds: the load connection is
	// closed, and the time each waited for the lock is counted.
	oneWriter bool
	// dominant says where the streams' time went when no wait sampling
	// tells ("" when it does).
	dominant func(st CellStats) string
}

// The kinds of engine the workload loads into.
var (
	// An embedded engine that keeps rows in key order (SQLite).
	clusteredFile = dialect{only: "insert", oneWriter: true, rowid: true,
		method:    func(string) string { return "insert" }, // prepared INSERTs
		diskBytes: func(bool, string) int64 { return RowBytes + 16 },
		id:        "id INTEGER PRIMARY KEY", // the rowid: max(rowid) + 1 when not given
		empty: func(ctx context.Context, s *Sweep) error {
			_, err := s.sqdb.ExecContext(ctx, s.d.sql.Truncate(Table))
			return err
		},
		loader: func(_ context.Context, s *Sweep) (loader, error) {
			return openSQLiteLoader(s.cfg.DB, loadColumns(s.cfg.Key))
		},
		dominant: func(st CellStats) string {
			return fmt.Sprintf("SQLite's write lock: streams waited %.0f%% of their time for it", st.LockWaitPct)
		}}
	// An embedded engine of compressed columns (DuckDB): its Appender.
	columnFile = dialect{only: "appender",
		method:    func(string) string { return "appender" },
		diskBytes: func(bool, string) int64 { return RowBytes }, // compressed columns: at most the raw row
		id:        "id BIGINT PRIMARY KEY DEFAULT nextval('" + duckSequence + "')",
		before:    []string{"CREATE OR REPLACE SEQUENCE " + duckSequence},
		empty: func(ctx context.Context, s *Sweep) error {
			_, err := s.eng.DB().ExecContext(ctx, "DROP TABLE "+Table)
			for _, q := range createSQL(s.d, Table, s.cfg.Key) {
				if err == nil {
					_, err = s.eng.DB().ExecContext(ctx, q)
				}
			}
			return err
		},
		loader: func(ctx context.Context, s *Sweep) (loader, error) {
			conn, err := s.eng.Connect(ctx)
			if err != nil {
				return nil, err
			}
			return &duckLoader{c: conn}, nil
		},
		dominant: func(st CellStats) string {
			return fmt.Sprintf("not sampled (DuckDB runs in-process and has no wait events); CPU %.0f%% busy", st.CPUBusyPct)
		}}
	// A server that keeps rows in a heap (PostgreSQL): COPY or INSERTs.
	heapServer = dialect{methods: true,
		method: func(m string) string { return m },
		diskBytes: func(indexes bool, key string) int64 {
			if indexes || key == "stream" || key == "shared" {
				return 100 + 2*40
			}
			return 100
		},
		id: "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
		claim: func(ctx context.Context, eng engine.Engine, cfg RunConfig, d dialect) error {
			return claimPGTable(ctx, eng.DB(), eng.Schema(), cfg.Indexes, cfg.Key, d)
		},
		empty: func(ctx context.Context, s *Sweep) error {
			_, err := s.eng.DB().ExecContext(ctx, s.d.sql.Truncate(pgx.Identifier{s.eng.Schema(), Table}.Sanitize()))
			return err
		},
		// The sampler's connection is the setup pool's: an ordinary Go
		// network connection, which waits without holding a P the
		// streams need.
		sample: func(conn *sql.Conn, cs *cellState, cfg RunConfig) { cs.waits = startSampler(conn, cs, cfg.WaitEvery) },
		loader: func(ctx context.Context, s *Sweep) (loader, error) {
			return openPGLoader(ctx, s.eng, s.cfg.Method, s.cfg.Batch, loadColumns(s.cfg.Key))
		}}
	// A server that keeps rows in key order (MariaDB's InnoDB).
	clusteredServer = dialect{only: "insert", dataBytes: myPoolBytes, // MariaDB's one way: multi-row INSERTs
		method: func(string) string { return "insert" },
		diskBytes: func(indexes bool, _ string) int64 {
			if indexes {
				return 100 + 40
			}
			return 100 // InnoDB's row header, the row and the leaf's slack
		},
		id: "id BIGINT AUTO_INCREMENT PRIMARY KEY",
		claim: func(ctx context.Context, eng engine.Engine, cfg RunConfig, d dialect) error {
			if cfg.DSN == "" {
				// a managed server: turn on the wait instruments (mywaits.go)
				if _, err := eng.DB().ExecContext(ctx, myInstruments); err != nil {
					return fmt.Errorf("turning on performance_schema's wait instruments: %w", err)
				}
			}
			return claimMyTable(ctx, eng.DB(), eng.Schema(), cfg.Indexes, cfg.Key, d)
		},
		empty: func(ctx context.Context, s *Sweep) error {
			_, err := s.eng.DB().ExecContext(ctx, s.d.sql.Truncate(Table)) // AUTO_INCREMENT starts again at 1
			return err
		},
		sample: func(conn *sql.Conn, cs *cellState, cfg RunConfig) {
			cs.myWaits = startMySampler(conn, cs, cfg.WaitEvery)
		},
		loader: func(ctx context.Context, s *Sweep) (loader, error) {
			return openMyLoader(ctx, s.eng, loadColumns(s.cfg.Key))
		}}
)

// dialectOf is the engine named name and the workload on it, chosen by
// how the engine keeps a table; ok is false for an engine the workload
// does not know.
func dialectOf(name string) (engine.Spec, dialect, bool) {
	spec, known := engine.Lookup(name)
	var d dialect
	switch {
	case !known || spec.SQL == nil:
		return spec, d, false
	case spec.Storage == engine.StorageHeap && spec.Server:
		d = heapServer
	case spec.Storage == engine.StorageClustered && spec.Server:
		d = clusteredServer
	case spec.Storage == engine.StorageClustered:
		d = clusteredFile
	case spec.Storage == engine.StorageColumns:
		d = columnFile
	default:
		return spec, d, false
	}
	d.sql = spec.SQL
	return spec, d, true
}

// createSQL is the table's DDL on an engine with a key (Keys): for
// "shared" a primary key the engine numbers from one sequence, for
// "stream" a primary key the streams number.
func createSQL(d dialect, name, key string) []string {
	id := "id BIGINT NOT NULL"
	var qs []string
	switch {
	case key != "none" && d.rowid:
		id = d.id
	case key == "stream":
		id = "id BIGINT PRIMARY KEY"
	case key == "shared":
		id, qs = d.id, append(qs, d.before...)
	}
	// pad: in the row on MariaDB (VARCHAR), as PostgreSQL keeps a short text.
	return append(qs, fmt.Sprintf("CREATE TABLE %s (%s, stream BIGINT NOT NULL, k BIGINT NOT NULL, "+
		"v DOUBLE PRECISION NOT NULL, pad %s NOT NULL)", name, id, d.sql.Text(padLen)))
}
