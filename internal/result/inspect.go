package result

import "time"

// Inspection is where the space goes in one database: what `numalab
// inspect` found, for SQLite, DuckDB or PostgreSQL. Byte counts are bytes;
// a nil pointer is a figure the engine cannot tell (Notes says which).
type Inspection struct {
	Engine   string `json:"engine"`   // "sqlite", "duckdb", "postgres"
	Database string `json:"database"` // the file, or the DSN with its password masked
	Version  string `json:"version,omitempty"`

	// PageSize is the engine's unit of allocation in bytes: SQLite's page,
	// DuckDB's block, PostgreSQL's block.
	PageSize int64 `json:"page_size"`
	// TotalBytes is the whole database: the file (SQLite, DuckDB) or
	// pg_database_size (PostgreSQL, every schema).
	TotalBytes int64 `json:"total_bytes"`
	// FreeBytes is space the database holds but no table uses: SQLite's
	// freelist pages, DuckDB's free blocks. Nil where unknown (PostgreSQL).
	FreeBytes *int64 `json:"free_bytes,omitempty"`

	// StatsSince and StatsAsOf say how fresh PostgreSQL's usage counters
	// are: when they were last reset (nil: never) and the time of the
	// statistics snapshot they were read from.
	StatsSince *time.Time `json:"stats_since,omitempty"`
	StatsAsOf  *time.Time `json:"stats_as_of,omitempty"`

	Tables []TableSpace `json:"tables"`
	// Notes say what the engine cannot tell and how figures were obtained.
	Notes []string `json:"notes,omitempty"`
}

// TableSpace is one table with its indexes. Reserved = Data + Index +
// Unused wherever all four are known.
type TableSpace struct {
	Schema string `json:"schema,omitempty"`
	Name   string `json:"name"`
	// Rows is the number of rows; RowsExact says whether it was counted
	// (false: the engine's estimate, e.g. PostgreSQL's reltuples).
	Rows      int64 `json:"rows"`
	RowsExact bool  `json:"rows_exact"`

	Reserved int64    `json:"reserved_bytes"`          // everything the table and its indexes occupy
	Data     int64    `json:"data_bytes"`              // the rows (PostgreSQL: heap + TOAST + maps)
	Index    *int64   `json:"index_bytes,omitempty"`   // the indexes
	Unused   *int64   `json:"unused_bytes,omitempty"`  // free space inside the table's and indexes' pages
	RowBytes *float64 `json:"bytes_per_row,omitempty"` // Data / Rows, nil without rows

	// IndexCount is the number of separate index structures (Indexes
	// without the Clustered ones).
	IndexCount int          `json:"index_count"`
	Indexes    []IndexSpace `json:"indexes,omitempty"`

	// LastAnalyze and LastAutoanalyze are when PostgreSQL last gathered the
	// table's planner statistics, by hand or by autovacuum.
	LastAnalyze     *time.Time `json:"last_analyze,omitempty"`
	LastAutoanalyze *time.Time `json:"last_autoanalyze,omitempty"`
}

// IndexSpace is one index of a table.
type IndexSpace struct {
	Name    string        `json:"name"`
	Columns []IndexColumn `json:"columns"`           // the key, in order
	Include []string      `json:"include,omitempty"` // non-key columns carried in the index (PostgreSQL INCLUDE)
	Unique  bool          `json:"unique"`
	Primary bool          `json:"primary"`
	Where   string        `json:"where,omitempty"` // the predicate of a partial index
	// Clustered is an index that is the table's own storage (SQLite's
	// rowid or WITHOUT ROWID primary key): its bytes are the table's Data.
	Clustered bool        `json:"clustered,omitempty"`
	Bytes     *int64      `json:"bytes,omitempty"` // size; nil where the engine cannot tell
	Entries   *int64      `json:"entries,omitempty"`
	Usage     *IndexUsage `json:"usage,omitempty"` // nil where the engine keeps no counters
}

// IndexColumn is one key column (or expression) of an index.
type IndexColumn struct {
	Name string `json:"name"`
	Desc bool   `json:"desc,omitempty"`
}

// IndexUsage are an index's usage counters since StatsSince (PostgreSQL's
// pg_stat_user_indexes).
type IndexUsage struct {
	Scans    int64      `json:"scans"`               // idx_scan
	TupRead  int64      `json:"tuples_read"`         // idx_tup_read: index entries returned
	TupFetch int64      `json:"tuples_fetched"`      // idx_tup_fetch: live table rows fetched
	LastScan *time.Time `json:"last_scan,omitempty"` // last_idx_scan (PostgreSQL 16 and later)
}
