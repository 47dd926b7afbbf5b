package inspect

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/go-sql-driver/mysql"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
)

// MariaDB inspects the MariaDB or MySQL server dsn names
// (go-sql-driver/mysql's form): every database but the system ones, or
// opt.Schema. It reads information_schema (TABLES, STATISTICS) and InnoDB's
// persistent index statistics (mysql.innodb_index_stats: each index's
// pages) inside one read-only transaction. Row counts are the engine's
// estimate (TABLES.TABLE_ROWS) unless opt.ExactRows. Errors never show the
// DSN's password.
func MariaDB(ctx context.Context, dsn string, opt Options) (*result.Inspection, error) {
	in := &result.Inspection{Engine: "mariadb", Database: result.Redact(dsn)}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("inspecting MariaDB: reading the DSN %s: %v (expected user:password@unix(/path)/ "+
			"or user:password@tcp(host:port)/)", in.Database, result.RedactWithDSN(err.Error(), dsn))
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("inspecting MariaDB %s: %v", in.Database, result.RedactWithDSN(err.Error(), dsn))
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	// Connect once, bounded, for a server that never answers; the
	// connection goes back to the pool for myInspect.
	c, err := engine.ConnectBound(ctx, opt.ConnectTimeout, db.Conn)
	if err != nil {
		return nil, fmt.Errorf("inspecting MariaDB %s: connecting: %s", in.Database, result.RedactWithDSN(err.Error(), dsn))
	}
	c.Close()
	if err := myInspect(ctx, db, in, opt); err != nil {
		return nil, fmt.Errorf("inspecting MariaDB %s: %s", in.Database, result.RedactWithDSN(err.Error(), dsn))
	}
	return in, nil
}

func myInspect(ctx context.Context, db *sql.DB, in *result.Inspection, opt Options) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("starting a read-only transaction: %w", err)
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, "SELECT version(), @@innodb_page_size").Scan(&in.Version, &in.PageSize); err != nil {
		return fmt.Errorf("reading the server's version: %w", err)
	}
	const system = "('mysql', 'information_schema', 'performance_schema', 'sys')"
	if opt.Schema != "" {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = ?",
			opt.Schema).Scan(&n); err != nil {
			return fmt.Errorf("looking for database %q: %w", opt.Schema, err)
		}
		if n == 0 {
			return fmt.Errorf("the server has no database %q (omit --schema to see every database)", opt.Schema)
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT table_schema, table_name, coalesce(table_rows, 0), coalesce(data_length, 0),
		coalesce(index_length, 0), coalesce(data_free, 0), update_time IS NOT NULL
		FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN `+system+`
		AND (? = '' OR table_schema = ?) ORDER BY 1, 2`, opt.Schema, opt.Schema)
	if err != nil {
		return fmt.Errorf("listing tables: %w", err)
	}
	type key struct{ schema, name string }
	byName := map[key]*result.TableSpace{}
	var tables []*result.TableSpace
	for rows.Next() {
		t := &result.TableSpace{}
		var idx, free int64
		var updated bool
		if err := rows.Scan(&t.Schema, &t.Name, &t.Rows, &t.Data, &idx, &free, &updated); err != nil {
			rows.Close()
			return fmt.Errorf("listing tables: %w", err)
		}
		t.Index, t.Unused = &idx, &free
		t.Reserved = t.Data + idx + free
		byName[key{t.Schema, t.Name}] = t
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("listing tables: %w", err)
	}
	// Each index's key columns, in order.
	rows, err = tx.QueryContext(ctx, `SELECT s.table_schema, s.table_name, s.index_name, s.non_unique = 0, s.column_name,
		coalesce(s.collation, 'A') = 'D', coalesce(st.stat_value, -1)
		FROM information_schema.statistics s
		LEFT JOIN mysql.innodb_index_stats st ON st.database_name = s.table_schema AND st.table_name = s.table_name
			AND st.index_name = s.index_name AND st.stat_name = 'size'
		WHERE s.table_schema NOT IN `+system+` AND (? = '' OR s.table_schema = ?)
		ORDER BY s.table_schema, s.table_name, s.index_name = 'PRIMARY' DESC, s.index_name, s.seq_in_index`,
		opt.Schema, opt.Schema)
	if err != nil {
		return fmt.Errorf("listing indexes: %w", err)
	}
	for rows.Next() {
		var schema, table, name, col string
		var unique, desc bool
		var pages int64
		if err := rows.Scan(&schema, &table, &name, &unique, &col, &desc, &pages); err != nil {
			rows.Close()
			return fmt.Errorf("listing indexes: %w", err)
		}
		t := byName[key{schema, table}]
		if t == nil {
			continue
		}
		if n := len(t.Indexes); n == 0 || t.Indexes[n-1].Name != name {
			ix := result.IndexSpace{Name: name, Unique: unique, Primary: name == "PRIMARY", Clustered: name == "PRIMARY"}
			if pages >= 0 {
				b := pages * in.PageSize
				ix.Bytes = &b
			}
			t.Indexes = append(t.Indexes, ix)
			if !ix.Clustered {
				t.IndexCount++
			}
		}
		ix := &t.Indexes[len(t.Indexes)-1]
		ix.Columns = append(ix.Columns, result.IndexColumn{Name: col, Desc: desc})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("listing indexes: %w", err)
	}
	exact := 0
	for _, t := range tables {
		if opt.ExactRows {
			q := fmt.Sprintf("SELECT count(*) FROM `%s`.`%s`", t.Schema, t.Name)
			if err := tx.QueryRowContext(ctx, q).Scan(&t.Rows); err != nil {
				return fmt.Errorf("counting the rows of %s.%s: %w", t.Schema, t.Name, err)
			}
			t.RowsExact = true
			exact++
		}
		t.RowBytes = perRow(t.Data, t.Rows)
		in.TotalBytes += t.Reserved
		in.Tables = append(in.Tables, *t)
	}
	sortTables(in.Tables)
	if exact < len(tables) {
		in.Notes = append(in.Notes, "mariadb: rows are the engine's estimate (information_schema.TABLES.TABLE_ROWS; "+
			"InnoDB samples); --exact-rows counts them")
	}
	in.Notes = append(in.Notes,
		"mariadb: data is DATA_LENGTH (InnoDB: the clustered primary key, which holds the rows), index is INDEX_LENGTH "+
			"(the secondary indexes), unused is DATA_FREE; an index's bytes are its pages in mysql.innodb_index_stats",
		"mariadb: total is the sum over the tables shown, not the server's whole data directory")
	return nil
}
