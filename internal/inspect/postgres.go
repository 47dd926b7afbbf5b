package inspect

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
)

// Postgres inspects the PostgreSQL database dsn names: every user schema,
// or opt.Schema. It reads the catalog (pg_class, pg_index), the size
// functions and the statistics views inside one READ ONLY transaction, with
// stats_fetch_consistency=snapshot (PostgreSQL 15 and later) so that every
// usage counter comes from the same snapshot. Row counts are reltuples
// unless opt.ExactRows, or a table was never analyzed (reltuples < 0): then
// count(*). Errors never show the DSN's password.
func Postgres(ctx context.Context, dsn string, opt Options) (*result.Inspection, error) {
	conn, err := engine.ConnectPG(ctx, dsn, opt.ConnectTimeout)
	if err != nil {
		return nil, fmt.Errorf("inspecting PostgreSQL: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	in := &result.Inspection{Engine: "postgres", Database: result.Redact(dsn)}
	if err := pgInspect(ctx, conn, in, opt); err != nil {
		return nil, fmt.Errorf("inspecting PostgreSQL %s: %w", in.Database, err)
	}
	return in, nil
}

// pgTable is a table row before its indexes are attached.
type pgTable struct {
	oid uint32
	ts  result.TableSpace
}

func pgInspect(ctx context.Context, conn *pgx.Conn, in *result.Inspection, opt Options) error {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("starting a read-only transaction: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))

	var num int
	var db string
	if err := tx.QueryRow(ctx, `select current_setting('server_version'), current_setting('server_version_num')::int,
		current_setting('block_size')::int8, current_database(), pg_database_size(current_database())`).
		Scan(&in.Version, &num, &in.PageSize, &db, &in.TotalBytes); err != nil {
		return fmt.Errorf("reading the server's version and sizes: %w", err)
	}
	if num >= 150000 {
		if _, err := tx.Exec(ctx, "set local stats_fetch_consistency = snapshot"); err != nil {
			return fmt.Errorf("asking for one statistics snapshot: %w", err)
		}
	}
	if opt.Schema != "" {
		var ok bool
		if err := tx.QueryRow(ctx, "select exists (select from pg_namespace where nspname = $1)",
			opt.Schema).Scan(&ok); err != nil {
			return fmt.Errorf("looking for schema %q: %w", opt.Schema, err)
		}
		if !ok {
			return fmt.Errorf("database %s has no schema %q (omit --schema to see every schema)", db, opt.Schema)
		}
	}
	if err := tx.QueryRow(ctx, "select stats_reset from pg_stat_database where datname = current_database()").Scan(
		&in.StatsSince); err != nil {
		return fmt.Errorf("reading when statistics were reset: %w", err)
	}

	tables, err := pgTables(ctx, tx, opt)
	if err != nil {
		return err
	}
	if err := pgIndexes(ctx, tx, tables, num); err != nil {
		return err
	}
	var asOf *time.Time
	if err := tx.QueryRow(ctx, "select pg_stat_get_snapshot_timestamp()").Scan(&asOf); err != nil {
		return fmt.Errorf("reading the statistics snapshot's time: %w", err)
	}
	in.StatsAsOf = asOf

	estimated := 0
	for _, t := range tables {
		if !t.ts.RowsExact && !opt.ExactRows {
			estimated++
			continue
		}
		q := "select count(*) from " + pgx.Identifier{t.ts.Schema, t.ts.Name}.Sanitize()
		if err := tx.QueryRow(ctx, q).Scan(&t.ts.Rows); err != nil {
			return fmt.Errorf("counting the rows of %s.%s: %w", t.ts.Schema, t.ts.Name, err)
		}
		t.ts.RowsExact = true
	}
	for _, t := range tables {
		t.ts.RowBytes = perRow(t.ts.Data, t.ts.Rows)
		in.Tables = append(in.Tables, t.ts)
	}
	sortTables(in.Tables)
	if estimated > 0 {
		in.Notes = append(in.Notes, fmt.Sprintf("postgres: rows of %d table(s) are the planner's estimate (reltuples, "+
			"as of the last VACUUM or ANALYZE); --exact-rows counts them", estimated))
	}
	in.Notes = append(in.Notes,
		"postgres: data is pg_table_size (heap, TOAST, free space and visibility maps), index is pg_indexes_size; "+
			"unused space inside pages is not measured (it needs the pgstattuple extension)",
		"postgres: total is pg_database_size, every schema and the system catalogs included")
	return nil
}

// pgTables lists the ordinary tables and materialized views of the user
// schemas (or of opt.Schema), with their sizes. A table whose reltuples is
// unknown (never analyzed) is marked RowsExact so that it gets counted.
func pgTables(ctx context.Context, tx pgx.Tx, opt Options) ([]*pgTable, error) {
	rows, err := tx.Query(ctx, `
select c.oid, n.nspname, c.relname, c.reltuples::int8,
       pg_table_size(c.oid), pg_indexes_size(c.oid), pg_total_relation_size(c.oid),
       s.last_analyze, s.last_autoanalyze
  from pg_class c
  join pg_namespace n on n.oid = c.relnamespace
  left join pg_stat_user_tables s on s.relid = c.oid
 where c.relkind in ('r', 'm')
   and n.nspname not in ('pg_catalog', 'information_schema')
   and n.nspname !~ '^pg_(toast|temp_|toast_temp_)'
   and ($1 = '' or n.nspname = $1)
 order by n.nspname, c.relname`, opt.Schema)
	if err != nil {
		return nil, fmt.Errorf("listing tables: %w", err)
	}
	defer rows.Close()
	var out []*pgTable
	for rows.Next() {
		t := &pgTable{}
		var idx int64
		if err := rows.Scan(&t.oid, &t.ts.Schema, &t.ts.Name, &t.ts.Rows, &t.ts.Data, &idx, &t.ts.Reserved,
			&t.ts.LastAnalyze, &t.ts.LastAutoanalyze); err != nil {
			return nil, fmt.Errorf("listing tables: %w", err)
		}
		t.ts.Index = &idx
		if t.ts.Rows < 0 { // never analyzed: count
			t.ts.Rows, t.ts.RowsExact = 0, true
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing tables: %w", err)
	}
	return out, nil
}

// pgIndexes attaches every index of the tables, with its columns, predicate,
// size and usage counters.
func pgIndexes(ctx context.Context, tx pgx.Tx, tables []*pgTable, num int) error {
	if len(tables) == 0 {
		return nil
	}
	byOID := map[uint32]*pgTable{}
	oids := make([]uint32, 0, len(tables))
	for _, t := range tables {
		byOID[t.oid] = t
		oids = append(oids, t.oid)
	}
	lastScan := "null::timestamptz"
	if num >= 160000 {
		lastScan = "s.last_idx_scan"
	}
	rows, err := tx.Query(ctx, `
select i.indrelid, i.indexrelid, c.relname, i.indisunique, i.indisprimary, i.indnkeyatts,
       coalesce(pg_get_expr(i.indpred, i.indrelid, true), ''), pg_relation_size(i.indexrelid),
       s.idx_scan, s.idx_tup_read, s.idx_tup_fetch, `+lastScan+`,
       array(select pg_get_indexdef(i.indexrelid, k, true) from generate_series(1, i.indnatts) k order by k),
       array(select coalesce((i.indoption[k - 1] & 1) = 1, false) from generate_series(1, i.indnkeyatts) k order by k)
  from pg_index i
  join pg_class c on c.oid = i.indexrelid
  left join pg_stat_user_indexes s on s.indexrelid = i.indexrelid
 where i.indrelid = any($1::oid[])
 order by i.indrelid, i.indisprimary desc, c.relname`, oids)
	if err != nil {
		return fmt.Errorf("listing indexes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var rel, oid uint32
		var nkey int
		var size int64
		var scans, read, fetch *int64
		var last *time.Time
		var cols []string
		var desc []bool
		ix := result.IndexSpace{}
		if err := rows.Scan(&rel, &oid, &ix.Name, &ix.Unique, &ix.Primary, &nkey, &ix.Where, &size,
			&scans, &read, &fetch, &last, &cols, &desc); err != nil {
			return fmt.Errorf("listing indexes: %w", err)
		}
		ix.Bytes = &size
		for k, c := range cols {
			if k >= nkey {
				ix.Include = append(ix.Include, c)
				continue
			}
			ix.Columns = append(ix.Columns, result.IndexColumn{Name: c, Desc: k < len(desc) && desc[k]})
		}
		if scans != nil {
			ix.Usage = &result.IndexUsage{Scans: *scans, TupRead: deref(read), TupFetch: deref(fetch), LastScan: last}
		}
		t := byOID[rel]
		t.ts.Indexes = append(t.ts.Indexes, ix)
		t.ts.IndexCount++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("listing indexes: %w", err)
	}
	return nil
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
