package transtats

// transtats' tables on one kind of engine, chosen once by asking the
// engine how it keeps a table (engine.Spec.Storage) and whether it is a
// server; the SQL each engine spells its own way comes from the engine
// (Spec.SQL).

import (
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/engine"
)

// specOf is the registry's engine named name (the zero Spec for none).
func specOf(name string) engine.Spec {
	s, _ := engine.Lookup(name)
	return s
}

// layout is what a load does its own way on one kind of engine, beside
// the SQL: the keys it adds after the rows, the order it fills dimension
// in, and what the load costs.
type layout struct {
	// afterInsert builds tran_stats' key after the rows (a heap: the rows
	// were copied in key order, so the key is marked the clustering index
	// without rewriting the table); keyAfter says dimension's key comes
	// after its rows too.
	afterInsert []string
	keyAfter    bool
	// dimByKey fills dimension in its key's order (InnoDB builds its tree
	// at its end), not its ids'.
	dimByKey bool
	// bytesPerRow is what a row of tran_stats takes loaded, with its
	// indexes and its share of the dimension tables; fixedBytes what a
	// load writes whatever the rows; wal the write-ahead log it may keep
	// beside the data; cachedBytes what a managed server's cache holds
	// beside the rows, so that P1's lookups in dimension stay in memory.
	bytesPerRow, fixedBytes, wal, cachedBytes int64
}

// The layouts. Bytes a row of tran_stats takes loaded: measured on loads
// of 500,000 rows (SQLite's file 192,004,096 bytes, DuckDB's 16,789,504,
// PostgreSQL's tables with their indexes 275,832,832) and rounded up.
// MariaDB's from a load of 100,000 rows (InnoDB's tran_stats 20,512,768
// bytes, dimension 130,990,080 whatever the rows), taken at 500,000 rows
// and rounded up.
var (
	fileLayout    = layout{bytesPerRow: 400} // a file kept in key order (SQLite)
	columnsLayout = layout{bytesPerRow: 40}  // columns (DuckDB)
	heapLayout    = layout{bytesPerRow: 560, // a heap (PostgreSQL)
		afterInsert: []string{"ALTER TABLE tran_stats ADD PRIMARY KEY (tran_begin, tran_count)",
			"ALTER TABLE tran_stats CLUSTER ON tran_stats_pkey"},
		keyAfter: true, fixedBytes: pgDimensionKeyBytes, wal: pgMaxWAL}
	serverLayout = layout{bytesPerRow: 480, dimByKey: true, // a server kept in key order (MariaDB)
		fixedBytes: myDimensionBytes, cachedBytes: myDimensionBytes}
)

// layoutOf is transtats' layout on engine spec.
func layoutOf(spec engine.Spec) layout {
	switch {
	case spec.Storage == engine.StorageHeap:
		return heapLayout
	case spec.Storage == engine.StorageColumns:
		return columnsLayout
	case spec.Server:
		return serverLayout
	}
	return fileLayout
}

// createTranStats is the fact table. An engine that keeps a table in key
// order gets its primary key here, starting with tran_begin (SQLite as a
// WITHOUT ROWID table; InnoDB clusters every table by its primary key;
// rows arrive in key order, so the index grows at its end); a heap
// (PostgreSQL) gets it after the load (rows are copied in tran_begin
// order, so the heap is in that order too); columns (DuckDB) rely on the
// load order, which their zone maps use to skip row groups outside a
// window. Times are the engine's timestamp without a time zone (MariaDB's
// DATETIME: its TIMESTAMP converts to and from the session's time zone).
func createTranStats(spec engine.Spec) string {
	d := spec.SQL
	key, tail := "", ""
	if spec.Storage == engine.StorageClustered {
		key = ",\n  PRIMARY KEY (tran_begin, tran_count)"
		tail = d.ClusteredTable()
	}
	return fmt.Sprintf(`CREATE TABLE tran_stats (
  server_config %[1]s NOT NULL,
  users INTEGER NOT NULL,
  cpus INTEGER NOT NULL,
  thread_name %[1]s NOT NULL,
  tran_count BIGINT NOT NULL,
  tran_type %[1]s NOT NULL,
  tran_status %[1]s NOT NULL,
  tran_begin %[2]s NOT NULL,
  tran_end %[2]s NOT NULL,
  resultset_size INTEGER NOT NULL,
  filler %[3]s NOT NULL%[4]s
)%[5]s`, d.VarChar(20), d.Type(engine.Timestamp), d.VarChar(100), key, tail)
}

// dimSQL creates and fills the six dimension tables and dimension, their
// cross join with every id and value. Where the engine keeps a table in
// key order, and on a heap (PostgreSQL), dimension's primary key is the
// six value columns, so that P1 looks rows up (SQLite would build an
// automatic index on every run, MariaDB, whose joins are nested loops,
// would scan dimension per row, and PostgreSQL, which prices a hash join
// on six columns by its most selective one, sorted all of dimension for a
// merge join: 5.5 s at 20,000 rows against 0.1 s); MariaDB fills it in
// that key's order. DuckDB hash-joins.
func dimSQL(spec engine.Spec) []string {
	d, l := spec.SQL, layoutOf(spec)
	var out []string
	var cols, joins, key []string
	for k, dim := range Dims() {
		typ := "INTEGER"
		var vals []string
		for j := range dim.Len() {
			if dim.Text != nil {
				vals = append(vals, fmt.Sprintf("(%d, '%s')", j+1, dim.Text[j]))
			} else {
				vals = append(vals, fmt.Sprintf("(%d, %d)", j+1, dim.Ints[j]))
			}
		}
		if dim.Text != nil {
			typ = d.VarChar(20)
		}
		out = append(out,
			fmt.Sprintf("CREATE TABLE %s (%s INTEGER PRIMARY KEY, %s %s NOT NULL)", dim.Table, dim.IDColumn, dim.Column, typ),
			fmt.Sprintf("INSERT INTO %s VALUES %s", dim.Table, strings.Join(vals, ", ")))
		alias := fmt.Sprintf("d%d", k)
		cols = append(cols, alias+"."+dim.IDColumn, alias+"."+dim.Column)
		joins = append(joins, dim.Table+" "+alias)
		key = append(key, dim.Column)
	}
	var ids []string
	for _, dim := range Dims() {
		ids = append(ids, dim.IDColumn)
	}
	order := ids
	if l.dimByKey {
		order = key
	}
	sel := fmt.Sprintf("SELECT %s FROM %s ORDER BY %s",
		strings.Join(cols, ", "), strings.Join(joins, " CROSS JOIN "), strings.Join(order, ", "))
	if spec.Storage != engine.StorageClustered {
		out = append(out, "CREATE TABLE dimension AS "+sel)
		if l.keyAfter {
			out = append(out, fmt.Sprintf("ALTER TABLE dimension ADD PRIMARY KEY (%s)", strings.Join(key, ", ")))
		}
		return out
	}
	var defs []string
	for _, dim := range Dims() {
		typ := "INTEGER"
		if dim.Text != nil {
			typ = d.VarChar(20)
		}
		defs = append(defs, dim.IDColumn+" INTEGER NOT NULL", dim.Column+" "+typ+" NOT NULL")
	}
	return append(out,
		fmt.Sprintf("CREATE TABLE dimension (%s, PRIMARY KEY (%s))%s",
			strings.Join(defs, ", "), strings.Join(key, ", "), d.ClusteredTable()),
		"INSERT INTO dimension "+sel)
}

// Query names.
const (
	P1 = "P1"
	P2 = "P2"
)

// Queries lists the queries a run may ask for.
var Queries = []string{P1, P2}

// ParseQueries reads a comma-separated list of query names.
func ParseQueries(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		q := strings.ToUpper(strings.TrimSpace(f))
		if q != P1 && q != P2 {
			return nil, fmt.Errorf("unknown query %q (expected P1, P2 or P1,P2)", f)
		}
		for _, have := range out {
			if have == q {
				return nil, fmt.Errorf("query %s listed twice", q)
			}
		}
		out = append(out, q)
	}
	return out, nil
}

// Both queries return two numbers, groups and rows, so that a test can
// compare engines on more than one figure.
//
// P1: join tran_stats to dimension on the six value columns, group by the
// six ids and count the groups. Every row of tran_stats matches exactly one
// row of dimension, so groups is the number of distinct combinations
// present (600 once N ≥ 600: lcm(40, 100, 3, 5, 8)) and rows is N.
const p1SQL = `SELECT count(*) AS %[1]s, CAST(sum(n) AS BIGINT) AS rows_counted FROM (
  SELECT d.server_config_id, d.thread_name_id, d.tran_type_id, d.tran_status_id, d.users_id, d.cpus_id, count(*) AS n
  FROM tran_stats t
  JOIN dimension d
    ON d.server_config = t.server_config AND d.thread_name = t.thread_name
   AND d.tran_type = t.tran_type AND d.tran_status = t.tran_status
   AND d.users = t.users AND d.cpus = t.cpus
  GROUP BY d.server_config_id, d.thread_name_id, d.tran_type_id, d.tran_status_id, d.users_id, d.cpus_id
) g`

// P2(t): the rows of the one-second window [t, t + 1 s) whose
// resultset_size is at most the average resultset_size of their
// server_config, where the average is over the whole table (not just the
// window), counted per combination of the six value columns and summed:
// rows is the number of such rows, groups the combinations they fall in.
//
// The average is a derived table over all of tran_stats (one scan and a
// 40-group aggregate per query: the part DOP can speed up), joined rather
// than correlated, so no engine runs a subquery per window row.
// "resultset_size ≤ avg" is written as resultset_size · count ≤ sum, in
// integers, which is the same condition without a floating-point or
// numeric average, so every engine decides ties alike.
const p2SQL = `SELECT count(*) AS %[3]s, CAST(coalesce(sum(n), 0) AS BIGINT) AS rows_counted FROM (
  SELECT t.server_config, t.users, t.cpus, t.thread_name, t.tran_type, t.tran_status, count(*) AS n
  FROM tran_stats t
  JOIN (SELECT server_config, sum(resultset_size) AS total, count(*) AS cnt
        FROM tran_stats GROUP BY server_config) a
    ON a.server_config = t.server_config
  WHERE t.tran_begin >= %[1]s AND t.tran_begin < %[2]s
    AND t.resultset_size * a.cnt <= a.total
  GROUP BY t.server_config, t.users, t.cpus, t.thread_name, t.tran_type, t.tran_status
) g`

// QueryText is the SQL of query q for the engine named name; sec
// (seconds after Start) is P2's t and is ignored for P1. The window's
// bounds are literals (timestamps numalab makes, never user text), so
// that EXPLAIN shows the very statement that runs. The engine spells the
// casts (MariaDB and MySQL cast to SIGNED, not BIGINT) and quotes groups
// (MySQL 8 reserves it).
func QueryText(name string, q string, sec int64) (string, error) {
	d := specOf(name).SQL
	if d == nil {
		return "", fmt.Errorf("no SQL for engine %q (expected %s)", name, engine.List(nil))
	}
	switch q {
	case P1:
		return d.IntCasts(fmt.Sprintf(p1SQL, d.Quote("groups"))), nil
	case P2:
		lo, hi := d.Timestamp(TimeAt(sec)), d.Timestamp(TimeAt(sec+1))
		return d.IntCasts(fmt.Sprintf(p2SQL, lo, hi, d.Quote("groups"))), nil
	}
	return "", fmt.Errorf("unknown query %q (expected P1 or P2)", q)
}

// Result is what a query returns.
type Result struct {
	Groups int64 `json:"groups"`
	Rows   int64 `json:"rows"`
}
