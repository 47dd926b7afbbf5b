package tpcc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/engine"
)

// LoadConfig says what to load.
type LoadConfig struct {
	Warehouses int
	Seed       int64
	// Now is the load's date and time (C_SINCE, H_DATE, O_ENTRY_D and
	// OL_DELIVERY_D, Clause 4.3.3.1); zero means time.Now(). With the same
	// seed and Now, two loads hold the same rows.
	Now time.Time
	// Progress, if not nil, is called from the loading goroutine after each
	// chunk with the rows inserted so far and the rows expected in all.
	Progress func(done, total int64)
}

// LoadStats describe a finished load.
type LoadStats struct {
	Rows   int64         `json:"rows"`
	Bytes  int64         `json:"bytes"`  // the file's size, or PostgreSQL's tables with their indexes
	Insert time.Duration `json:"insert"` // generating and inserting the rows
	Index  time.Duration `json:"index"`  // building secondary indexes and statistics
	Check  time.Duration `json:"check"`  // the consistency checks
}

// RowsPerSecond is the insert rate, rows per second of Insert.
func (s LoadStats) RowsPerSecond() float64 { return float64(s.Rows) / s.Insert.Seconds() }

// ExpectedRows is about how many rows Load writes for w warehouses (ORDER-LINE
// varies around its mean of 10 lines per order).
func ExpectedRows(w int) int64 {
	perWH := 1 + StockPerWarehouse + DistrictsPerWH*(1+3*CustomersPerDist+NewOrdersPerDist+10*OrdersPerDist)
	return Items + int64(w)*int64(perWH)
}

// dateFormat is how dates are stored.
const dateFormat = "2006-01-02 15:04:05"

// Load loads a TPC-C database of cfg.Warehouses warehouses into eng with
// the specification's row counts and value distributions (Clause
// 4.3.3.1), builds the indexes, runs the consistency checks, and only then
// marks it complete. It first refuses a load that would leave its
// filesystem less than 5% free (engine.CheckRoom), saying the estimate
// (LoadBytes) and the free space. eng is a new file (SQLite or DuckDB opened with
// engine.Options.Create) or a PostgreSQL database, where the tables,
// indexes and functions go into numalab's schema: a previous TPC-C load
// there is dropped first (numalab made it), and a failed load drops what
// it created. With a file engine the caller calls eng.Discard after an
// error, which removes the file (Prepare does): a file is either complete
// or absent.
//
// Rows go in by each engine's fastest path: this package's prepared
// multi-row INSERTs on SQLite (binding shared columns once, a write
// transaction per chunk; the secondary indexes after the data), COPY on
// PostgreSQL, the Appender on DuckDB (engine.Bulk). PostgreSQL gets its
// primary keys and indexes after the data, then VACUUM ANALYZE, then the
// Order-Status and Stock-Level functions (tx_pg.go). DuckDB gets no
// indexes: rows arrive in primary-key order, so its zone maps prune the
// lookups to a row group or two, and an ART index would not serve the
// multi-column keys' range and ORDER BY lookups anyway.
func Load(ctx context.Context, eng engine.Engine, cfg LoadConfig) (LoadStats, error) {
	var st LoadStats
	if cfg.Warehouses <= 0 {
		return st, fmt.Errorf("loading tpcc: warehouses: %d is not a positive count (try 1)", cfg.Warehouses)
	}
	if cfg.Now.IsZero() {
		cfg.Now = time.Now()
	}
	dialect := engine.DialectOf(eng.Name())
	switch dialect {
	case engine.SQLite, engine.DuckDB, engine.Postgres, engine.MariaDB:
	default:
		return st, fmt.Errorf("loading tpcc: no loader for engine %q", dialect)
	}
	if err := engine.CheckRoom(eng, LoadBytes(eng.Name(), cfg.Warehouses)); err != nil {
		return st, fmt.Errorf("loading %d tpcc warehouses into %s: %w", cfg.Warehouses, dialect, err)
	}
	st, err := load(ctx, eng, cfg)
	switch {
	case err != nil && dialect == engine.SQLite:
		err = engine.SQLiteError(err)
	case err != nil && dialect == engine.Postgres:
		if derr := dropPG(context.WithoutCancel(ctx), eng); derr != nil {
			err = fmt.Errorf("%w; and removing the partial load: %w", err, derr)
		}
	case err != nil && dialect == engine.MariaDB:
		if derr := dropMy(context.WithoutCancel(ctx), eng); derr != nil {
			err = fmt.Errorf("%w; and removing the partial load: %w", err, derr)
		}
	}
	if err != nil {
		return st, fmt.Errorf("loading tpcc into %s: %w", dialect, err)
	}
	st.Bytes, err = loadedBytes(ctx, eng)
	if err != nil {
		return st, fmt.Errorf("loading tpcc into %s: measuring its size: %w", dialect, err)
	}
	return st, nil
}

// loadedBytes is the database's size: the file (SQLite, DuckDB), or the
// TPC-C tables with their indexes (PostgreSQL).
func loadedBytes(ctx context.Context, eng engine.Engine) (int64, error) {
	switch engine.DialectOf(eng.Name()) {
	case engine.Postgres:
		var n int64
		names := make([]string, 0, len(tables)+1)
		for _, t := range tables {
			names = append(names, t.name)
		}
		names = append(names, metaTable(engine.Postgres))
		err := eng.DB().QueryRowContext(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname = ANY($1)`, names).Scan(&n)
		return n, err
	case engine.MariaDB:
		var n int64
		err := eng.DB().QueryRowContext(ctx, `SELECT coalesce(sum(data_length + index_length), 0) FROM information_schema.tables
			WHERE table_schema = database() AND table_name IN ('`+strings.Join(tableNames(), "', '")+`', '`+metaTable(engine.MariaDB)+`')`).Scan(&n)
		return n, err
	case engine.DuckDB:
		if _, err := eng.DB().ExecContext(ctx, "CHECKPOINT"); err != nil {
			return 0, err
		}
	}
	fi, err := os.Stat(eng.Path())
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// metaRows are the marker table's rows for a load.
func metaRows(cfg LoadConfig, k Constants) [][2]string {
	return [][2]string{
		{"kind", metaKind},
		{"schema_version", strconv.Itoa(SchemaVersion)},
		{"warehouses", strconv.Itoa(cfg.Warehouses)},
		{"seed", strconv.FormatInt(cfg.Seed, 10)},
		{"c_last", strconv.Itoa(k.CLast)},
		{"c_id", strconv.Itoa(k.CID)},
		{"ol_i_id", strconv.Itoa(k.CIID)},
		{"load_time", cfg.Now.UTC().Format(dateFormat)},
	}
}

// dropPG drops the functions and tables a TPC-C load makes in numalab's
// PostgreSQL schema, if they exist; never with CASCADE, so that nothing
// else that depends on them goes.
func dropPG(ctx context.Context, eng engine.Engine) error {
	q := pgx.Identifier{eng.Schema()}.Sanitize()
	stmts := []string{
		"DROP FUNCTION IF EXISTS " + q + ".order_status(integer, integer, integer, integer), " +
			q + ".order_status_aug(integer, integer, integer, integer), " +
			q + ".stock_level(integer, integer, integer), " + q + ".stock_level_aug(integer, integer, integer)",
		"DROP TABLE IF EXISTS " + q + "." + metaTable(engine.Postgres),
	}
	for _, t := range tables {
		stmts = append(stmts, "DROP TABLE IF EXISTS "+q+"."+t.name)
	}
	for _, s := range stmts {
		if _, err := eng.DB().ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// dropMy drops the procedures and tables a TPC-C load makes in numalab's
// MariaDB database, if they exist.
func dropMy(ctx context.Context, eng engine.Engine) error {
	var stmts []string
	for _, p := range []string{"order_status", "order_status_aug", "stock_level", "stock_level_aug"} {
		stmts = append(stmts, "DROP PROCEDURE IF EXISTS "+p)
	}
	stmts = append(stmts, "DROP TABLE IF EXISTS "+metaTable(engine.MariaDB))
	for _, t := range tables {
		stmts = append(stmts, "DROP TABLE IF EXISTS "+t.name)
	}
	for _, s := range stmts {
		if _, err := eng.DB().ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// tableNames are the nine tables' names.
func tableNames() []string {
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.name
	}
	return names
}

// load creates the schema, inserts the rows, builds what comes after the
// data, checks and marks the load complete.
func load(ctx context.Context, eng engine.Engine, cfg LoadConfig) (LoadStats, error) {
	var st LoadStats
	dialect := engine.DialectOf(eng.Name())
	db := eng.DB()
	g := newGen(cfg.Seed, labelConstants)
	k := newConstants(g)
	if dialect == engine.Postgres {
		if err := dropPG(ctx, eng); err != nil {
			return st, fmt.Errorf("dropping the previous tpcc load: %w", err)
		}
	}
	if dialect == engine.MariaDB {
		if err := dropMy(ctx, eng); err != nil {
			return st, fmt.Errorf("dropping the previous tpcc load: %w", err)
		}
	}
	meta := metaTable(dialect)
	// The marker table's load_complete row is written last, so a database
	// without it was never finished.
	ddl := []string{"CREATE TABLE " + meta + " (key TEXT PRIMARY KEY, value TEXT NOT NULL)"}
	if dialect == engine.MariaDB {
		ddl[0] = "CREATE TABLE " + meta + " (`key` varchar(64) PRIMARY KEY, value varchar(64) NOT NULL)"
	}
	for _, t := range tables {
		ddl = append(ddl, ddlFor(t, dialect))
	}
	for _, s := range ddl {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return st, fmt.Errorf("creating the schema: %s: %w", s, err)
		}
	}
	ins := "INSERT INTO " + meta + " VALUES (" + placeholders(dialect, 2) + ")"
	for _, kv := range metaRows(cfg, k) {
		if _, err := db.ExecContext(ctx, ins, kv[0], kv[1]); err != nil {
			return st, fmt.Errorf("creating the schema: %w", err)
		}
	}

	t0 := time.Now()
	insert := insertBulk
	if dialect == engine.SQLite {
		insert = insertAll
	}
	rows, err := insert(ctx, eng, cfg, k)
	st.Rows = rows
	st.Insert = time.Since(t0)
	if err != nil {
		return st, err
	}

	t0 = time.Now()
	for _, q := range afterData(eng) {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return st, fmt.Errorf("building indexes: %s: %w", q, err)
		}
	}
	if dialect == engine.Postgres {
		if _, err := db.ExecContext(ctx, pgFunctionsSQL(eng.Schema())); err != nil {
			return st, fmt.Errorf("creating the transaction functions: %w", err)
		}
	}
	if dialect == engine.MariaDB {
		if err := createMyProcedures(ctx, eng); err != nil {
			return st, fmt.Errorf("creating the transaction procedures: %w", err)
		}
	}
	st.Index = time.Since(t0)

	t0 = time.Now()
	if err := check(ctx, db, dialect); err != nil {
		return st, fmt.Errorf("checking the loaded database: %w", err)
	}
	st.Check = time.Since(t0)
	if _, err := db.ExecContext(ctx, "INSERT INTO "+meta+" VALUES ('load_complete', '1')"); err != nil {
		return st, fmt.Errorf("marking the load complete: %w", err)
	}
	return st, nil
}

// insertBulk generates every row in one goroutine and appends them in this
// one, each chunk through its table's engine.Bulk, flushed before the
// chunk's memory is reused.
func insertBulk(ctx context.Context, eng engine.Engine, cfg LoadConfig, k Constants) (int64, error) {
	p, genErr, cancel := startGenerator(ctx, cfg, k)
	defer cancel()
	bulks := map[*table]engine.Bulk{}
	var done int64
	total := ExpectedRows(cfg.Warehouses)
	err := func() error {
		var row []any
		for _, t := range tables {
			row = make([]any, max(len(row), len(t.cols)))
		}
		for c := range p.full {
			b, ok := bulks[c.t]
			if !ok {
				var err error
				if b, err = eng.Bulk(ctx, c.t.name, c.t.cols); err != nil {
					return err
				}
				bulks[c.t] = b
			}
			own := len(c.t.cols) - c.t.nShare
			for r := 0; r < c.rows; r++ {
				sk, j := 0, r*own
				for i := range c.t.cols {
					if c.t.shared[i] {
						row[i] = c.shared[sk].Value
						sk++
					} else {
						row[i] = c.vals[j].Value
						j++
					}
				}
				if err := b.Append(row[:len(c.t.cols)]...); err != nil {
					return err
				}
			}
			if err := b.Flush(); err != nil {
				return err
			}
			done += int64(c.rows)
			p.free <- c
			if cfg.Progress != nil {
				cfg.Progress(done, max(total, done))
			}
		}
		return nil
	}()
	var errs []error
	if err != nil {
		errs = append(errs, err)
		cancel()
		for range p.full { // let the generator finish
		}
	}
	for _, b := range bulks {
		if cerr := b.Close(); cerr != nil && err == nil {
			errs = append(errs, cerr)
		}
	}
	if gerr := <-genErr; gerr != nil && err == nil {
		errs = append(errs, fmt.Errorf("generating rows: %w", gerr))
	}
	if err := errors.Join(errs...); err != nil {
		return done, err
	}
	if cfg.Progress != nil {
		cfg.Progress(done, done)
	}
	return done, nil
}
