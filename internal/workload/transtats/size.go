package transtats

import (
	"fmt"

	"github.com/numalab/numalab/internal/engine"
)

// myDimensionBytes is about what MariaDB's dimension table takes in
// InnoDB (130,990,080 bytes measured), added to the data a managed
// server's buffer pool is sized for, so that P1's lookups in it stay in
// memory.
const myDimensionBytes = 132 << 20

// pgDimensionKeyBytes is about what PostgreSQL's primary key of
// dimension takes (94,281,728 bytes measured), whatever the rows.
const pgDimensionKeyBytes = 90 << 20

// pgMaxWAL is the WAL a managed server may keep during a load
// (max_wal_size).
const pgMaxWAL = 4 << 30

// LoadBytes is about how much a load of rows rows writes on d: the file
// (SQLite, DuckDB), PostgreSQL's tables and indexes (dimension's key
// whatever the rows) plus up to max_wal_size of WAL, or MariaDB's tables
// with the dimension table, which is the same size whatever the rows. rows
// is at most MaxRows, so it cannot overflow.
func LoadBytes(name string, rows int64) int64 {
	l := layoutOf(specOf(name))
	b := max(rows, 0)*l.bytesPerRow + l.fixedBytes
	return b + min(b, l.wal)
}

// CheckFits refuses, before any work, a number of rows that could never
// be loaded where it would go: more than the whole filesystem holds (the
// file's directory; a managed server's $TMPDIR). A server reached by DSN,
// or a directory that cannot be read, is not judged here.
func CheckFits(name string, where engine.Options, rows int64) error {
	if err := engine.HoldsLoad(specOf(name).Server, where, LoadBytes(name, rows)); err != nil {
		return fmt.Errorf("%d rows on %s: %w", rows, name, err)
	}
	return nil
}
