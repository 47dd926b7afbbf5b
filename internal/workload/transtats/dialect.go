package transtats

// transtats' SQL and load steps per engine, keyed by the registry's
// dialect: the one file of this package that names engines.

import (
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/engine"
)

// specOf is the engine whose dialect d is (transtats' engines each speak
// their own).
func specOf(d engine.Dialect) engine.Spec {
	s, _ := engine.ByDialect(d)
	return s
}

// createTranStats is the fact table. SQLite keeps it in tran_begin order as
// a WITHOUT ROWID table whose primary key starts with tran_begin; MariaDB
// gets the same key here (InnoDB clusters a table by its primary key, and
// rows arrive in key order, so the index grows at its end); PostgreSQL
// gets it after the load (rows are copied in tran_begin order, so the heap
// is in that order too); DuckDB relies on the load order, which its zone
// maps use to skip row groups outside a window. MariaDB's times are
// DATETIME: its TIMESTAMP converts to and from the session's time zone.
func createTranStats(d engine.Dialect) string {
	text, ts := "VARCHAR(20)", "TIMESTAMP"
	key := ""
	tail := ""
	switch d {
	case engine.SQLite:
		text, ts = "TEXT", "TEXT"
		key = ",\n  PRIMARY KEY (tran_begin, tran_count)"
		tail = " WITHOUT ROWID"
	case engine.MariaDB:
		ts = "DATETIME"
		key = ",\n  PRIMARY KEY (tran_begin, tran_count)"
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
)%[5]s`, text, ts, map[bool]string{true: "TEXT", false: "VARCHAR(100)"}[d == engine.SQLite], key, tail)
}

// dimSQL creates and fills the six dimension tables and dimension, their
// cross join with every id and value. On SQLite, MariaDB and PostgreSQL
// dimension's primary key is the six value columns, so that P1 looks rows
// up (SQLite would build an automatic index on every run, MariaDB, whose
// joins are nested loops, would scan dimension per row, and PostgreSQL,
// which prices a hash join on six columns by its most selective one,
// sorted all of dimension for a merge join: 5.5 s at 20,000 rows against
// 0.1 s); MariaDB fills it in that key's order. DuckDB hash-joins.
func dimSQL(d engine.Dialect) []string {
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
			typ = "VARCHAR(20)"
			if d == engine.SQLite {
				typ = "TEXT"
			}
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
	sel := fmt.Sprintf("SELECT %s FROM %s ORDER BY %s", strings.Join(cols, ", "), strings.Join(joins, " CROSS JOIN "), strings.Join(ids, ", "))
	if d == engine.SQLite || d == engine.MariaDB {
		text, tail := "TEXT", " WITHOUT ROWID"
		if d == engine.MariaDB {
			text, tail = "VARCHAR(20)", ""
			sel = fmt.Sprintf("SELECT %s FROM %s ORDER BY %s", strings.Join(cols, ", "), strings.Join(joins, " CROSS JOIN "), strings.Join(key, ", "))
		}
		var defs []string
		for _, dim := range Dims() {
			typ := "INTEGER"
			if dim.Text != nil {
				typ = text
			}
			defs = append(defs, dim.IDColumn+" INTEGER NOT NULL", dim.Column+" "+typ+" NOT NULL")
		}
		out = append(out,
			fmt.Sprintf("CREATE TABLE dimension (%s, PRIMARY KEY (%s))%s", strings.Join(defs, ", "), strings.Join(key, ", "), tail),
			"INSERT INTO dimension "+sel)
	} else {
		out = append(out, "CREATE TABLE dimension AS "+sel)
		if d == engine.Postgres {
			out = append(out, fmt.Sprintf("ALTER TABLE dimension ADD PRIMARY KEY (%s)", strings.Join(key, ", ")))
		}
	}
	return out
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
const p1SQL = `SELECT count(*) AS groups, CAST(sum(n) AS BIGINT) AS rows_counted FROM (
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
const p2SQL = `SELECT count(*) AS groups, CAST(coalesce(sum(n), 0) AS BIGINT) AS rows_counted FROM (
  SELECT t.server_config, t.users, t.cpus, t.thread_name, t.tran_type, t.tran_status, count(*) AS n
  FROM tran_stats t
  JOIN (SELECT server_config, sum(resultset_size) AS total, count(*) AS cnt
        FROM tran_stats GROUP BY server_config) a
    ON a.server_config = t.server_config
  WHERE t.tran_begin >= %[1]s AND t.tran_begin < %[2]s
    AND t.resultset_size * a.cnt <= a.total
  GROUP BY t.server_config, t.users, t.cpus, t.thread_name, t.tran_type, t.tran_status
) g`

// myText writes a query for MariaDB and MySQL: they cast to SIGNED (a
// BIGINT), not BIGINT, and MySQL 8 reserves groups.
var myText = strings.NewReplacer("AS BIGINT", "AS SIGNED", "AS groups", "AS `groups`")

// QueryText is the SQL of query q for engine d; sec (seconds after Start)
// is P2's t and is ignored for P1. The window's bounds are literals
// (timestamps numalab makes, never user text), so that EXPLAIN shows the
// very statement that runs.
func QueryText(d engine.Dialect, q string, sec int64) (string, error) {
	switch q {
	case P1:
		if d == engine.MariaDB {
			return myText.Replace(p1SQL), nil
		}
		return p1SQL, nil
	case P2:
		lo := TimeAt(sec).Format(TimeFormat)
		hi := TimeAt(sec + 1).Format(TimeFormat)
		switch d {
		case engine.SQLite:
			return fmt.Sprintf(p2SQL, "'"+lo+"'", "'"+hi+"'"), nil
		case engine.MariaDB:
			return myText.Replace(fmt.Sprintf(p2SQL, "TIMESTAMP '"+lo+"'", "TIMESTAMP '"+hi+"'")), nil
		}
		return fmt.Sprintf(p2SQL, "TIMESTAMP '"+lo+"'", "TIMESTAMP '"+hi+"'"), nil
	}
	return "", fmt.Errorf("unknown query %q (expected P1 or P2)", q)
}

// Result is what a query returns.
type Result struct {
	Groups int64 `json:"groups"`
	Rows   int64 `json:"rows"`
}

// What a load does its own way per engine, beside the SQL above.
var (
	// fixedLoadBytes is what a load writes whatever the rows:
	// PostgreSQL's primary key of dimension, MariaDB's dimension table;
	// loadWAL the write-ahead log it may keep beside the data.
	fixedLoadBytes = map[engine.Dialect]int64{engine.Postgres: pgDimensionKeyBytes, engine.MariaDB: myDimensionBytes}
	loadWAL        = map[engine.Dialect]int64{engine.Postgres: pgMaxWAL}
	// cachedBytes is what a managed server's cache holds beside the rows,
	// so that P1's lookups in MariaDB's dimension table stay in memory.
	cachedBytes = map[engine.Dialect]int64{engine.MariaDB: myDimensionBytes}
	// afterInsert builds tran_stats' key after the rows (PostgreSQL: the
	// heap is already in key order, as rows were copied so: the key is
	// marked the clustering index without rewriting the table).
	afterInsert = map[engine.Dialect][]string{engine.Postgres: {
		"ALTER TABLE tran_stats ADD PRIMARY KEY (tran_begin, tran_count)",
		"ALTER TABLE tran_stats CLUSTER ON tran_stats_pkey"}}
	// analyze gathers the statistics at the load's end.
	analyze = map[engine.Dialect]string{engine.SQLite: "ANALYZE", engine.DuckDB: "ANALYZE", engine.Postgres: "VACUUM ANALYZE",
		engine.MariaDB: "ANALYZE TABLE " + strings.Join(tables[1:], ", ")}
	// afterComplete runs once the load is marked complete (DuckDB writes
	// its checkpoint).
	afterComplete = map[engine.Dialect]string{engine.DuckDB: "CHECKPOINT"}
	// timesAsText says times are loaded as text (SQLite has no time type).
	timesAsText = map[engine.Dialect]bool{engine.SQLite: true}
)

// loadMethod names each engine's bulk path, for the record.
var loadMethod = map[engine.Dialect]string{
	engine.SQLite:   "prepared multi-row INSERT in large transactions",
	engine.DuckDB:   "appender",
	engine.Postgres: "COPY",
	engine.MariaDB:  "prepared multi-row INSERT",
}

// Bytes a row of tran_stats takes loaded, per engine, with its indexes and
// its share of the dimension tables: measured on loads of 500,000 rows
// (SQLite's file 192,004,096 bytes, DuckDB's 16,789,504, PostgreSQL's
// tables with their indexes 275,832,832) and rounded up. MariaDB's from a
// load of 100,000 rows (InnoDB's tran_stats 20,512,768 bytes, dimension
// 130,990,080 whatever the rows), taken at 500,000 rows and rounded up.
var loadBytesPerRow = map[engine.Dialect]int64{engine.SQLite: 400, engine.DuckDB: 40, engine.Postgres: 560, engine.MariaDB: 480}
