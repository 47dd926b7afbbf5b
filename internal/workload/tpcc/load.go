package tpcc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

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
	spec, d, ok := kindOf(eng.Name())
	if !ok {
		return st, fmt.Errorf("loading tpcc: no loader for engine %q", eng.Name())
	}
	if err := engine.CheckRoom(eng, LoadBytes(eng.Name(), cfg.Warehouses)); err != nil {
		return st, fmt.Errorf("loading %d tpcc warehouses into %s: %w", cfg.Warehouses, spec.Name, err)
	}
	st, err := load(ctx, eng, spec, d, cfg)
	switch {
	case err != nil && d.loadErr != nil:
		err = d.loadErr(err)
	case err != nil && d.drop != nil:
		if derr := d.drop(context.WithoutCancel(ctx), eng); derr != nil {
			err = fmt.Errorf("%w; and removing the partial load: %w", err, derr)
		}
	}
	if err != nil {
		return st, fmt.Errorf("loading tpcc into %s: %w", spec.Name, err)
	}
	st.Bytes, err = loadedBytes(ctx, eng, spec, d)
	if err != nil {
		return st, fmt.Errorf("loading tpcc into %s: measuring its size: %w", spec.Name, err)
	}
	return st, nil
}

// loadedBytes is the database's size: the file (SQLite, DuckDB), or the
// TPC-C tables with their indexes (PostgreSQL).
func loadedBytes(ctx context.Context, eng engine.Engine, spec engine.Spec, d kind) (int64, error) {
	if d.size != nil {
		return d.size(ctx, eng)
	}
	if q := spec.SQL.Checkpoint(); q != "" {
		if _, err := eng.DB().ExecContext(ctx, q); err != nil {
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
func load(ctx context.Context, eng engine.Engine, spec engine.Spec, d kind, cfg LoadConfig) (LoadStats, error) {
	var st LoadStats
	db := eng.DB()
	g := newGen(cfg.Seed, labelConstants)
	k := newConstants(g)
	if d.drop != nil {
		if err := d.drop(ctx, eng); err != nil {
			return st, fmt.Errorf("dropping the previous tpcc load: %w", err)
		}
	}
	meta := metaTable(spec)
	// The marker table's load_complete row is written last, so a database
	// without it was never finished.
	ddl := []string{spec.SQL.CreateMeta(meta)}
	for _, t := range tables {
		ddl = append(ddl, ddlFor(t, spec, d))
	}
	for _, s := range ddl {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return st, fmt.Errorf("creating the schema: %s: %w", s, err)
		}
	}
	ins := "INSERT INTO " + meta + " VALUES (" + spec.SQL.Placeholders(2) + ")"
	for _, kv := range metaRows(cfg, k) {
		if _, err := db.ExecContext(ctx, ins, kv[0], kv[1]); err != nil {
			return st, fmt.Errorf("creating the schema: %w", err)
		}
	}

	t0 := time.Now()
	insert := insertBulk
	if d.oneWriter {
		insert = insertAll
	}
	rows, err := insert(ctx, eng, cfg, k)
	st.Rows = rows
	st.Insert = time.Since(t0)
	if err != nil {
		return st, err
	}

	t0 = time.Now()
	for _, q := range afterData(spec, d) {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return st, fmt.Errorf("building indexes: %s: %w", q, err)
		}
	}
	if d.code != nil {
		if err := d.code(ctx, eng); err != nil {
			return st, fmt.Errorf("creating the transaction %s: %w", d.codeKind, err)
		}
	}
	st.Index = time.Since(t0)

	t0 = time.Now()
	if err := check(ctx, db, spec); err != nil {
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
