package tpcc

import (
	"cmp"
	"fmt"
	"math"

	"github.com/numalab/numalab/internal/engine"
)

// Bytes one warehouse takes loaded, per engine, measured on W=1 loads of
// this loader and rounded up: SQLite's file 86,007,808 bytes, DuckDB's
// 66,859,008, PostgreSQL's tables with their indexes 125,304,832 (see
// TestLoadEngines, which fails if PostgreSQL's or MariaDB's outgrows its
// figure), MariaDB's (InnoDB's data and index lengths) 109,740,032. Each
// counts the 100,000-row ITEM table once per warehouse, which overstates
// larger loads by a few percent.
const (
	sqliteBytesPerWarehouse = 84 << 20
	duckdbBytesPerWarehouse = 66 << 20
	pgBytesPerWarehouse     = 120 << 20
	myBytesPerWarehouse     = 105 << 20
)

// pgMaxWAL is the WAL a managed server may keep during a load
// (max_wal_size).
const pgMaxWAL = 4 << 30

// LoadBytes is about how much a load of w warehouses writes on engine:
// the file (SQLite, DuckDB), or PostgreSQL's tables and indexes plus up
// to max_wal_size of WAL. It saturates at math.MaxInt64.
func LoadBytes(engineName string, w int) int64 {
	_, d, _ := kindOf(engineName)
	per := cmp.Or(d.bytesPerWarehouse, sqliteBytesPerWarehouse)
	if w <= 0 {
		return 0
	}
	if int64(w) > (math.MaxInt64-pgMaxWAL)/per/2 {
		return math.MaxInt64
	}
	b := int64(w) * per
	b += min(b, d.loadWAL)
	return b
}

// EstimatedBytes is about how much space w warehouses take loaded, the
// largest of the three engines (PostgreSQL, with its indexes), to size a
// managed server's shared_buffers before the load. It saturates at
// math.MaxInt64.
func EstimatedBytes(w int) int64 {
	if int64(w) > (math.MaxInt64-16<<20)/pgBytesPerWarehouse {
		return math.MaxInt64
	}
	return 16<<20 + int64(w)*pgBytesPerWarehouse
}

// CheckFits refuses, before any work, a count of warehouses that could
// never be loaded where it would go: more than the whole filesystem holds
// (the file's directory; a managed server's $TMPDIR). A server reached by
// DSN, or a directory that cannot be read, is not judged here.
func CheckFits(engineName string, where engine.Options, w int) error {
	if err := engine.HoldsLoad(isServer(engineName), where, LoadBytes(engineName, w)); err != nil {
		return fmt.Errorf("%d warehouses on %s: %w", w, engineName, err)
	}
	return nil
}
