package inspect

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/units"
)

// DuckDB inspects the DuckDB file at path, opened with
// access_mode=READ_ONLY. It refuses a path that does not exist (DuckDB would
// create it) and a file without DuckDB's magic bytes. Tables' data bytes are
// the spans of their column segments in the file's blocks
// (pragma_storage_info); DuckDB reports no size per index, so index bytes are
// left unknown and the blocks no table segment uses (indexes and catalog
// metadata) are given in a note.
func DuckDB(ctx context.Context, path string, opt Options) (*result.Inspection, error) {
	fail := func(err error) (*result.Inspection, error) {
		return nil, fmt.Errorf("inspecting DuckDB database %s: %w", path, err)
	}
	f, size, err := openDatabaseFile(path)
	if err != nil {
		return fail(err)
	}
	magic := make([]byte, 12)
	n, _ := f.ReadAt(magic, 0)
	hint := engineHint(f, "duckdb")
	f.Close()
	if n < 12 || string(magic[8:12]) != "DUCK" {
		return fail(fmt.Errorf("not a DuckDB database: the file lacks DuckDB's magic bytes%s", hint))
	}

	db, closeDB, err := engine.OpenDuckDBReadOnly(path)
	if err != nil {
		return fail(fmt.Errorf("opening read-only: %w (is another process writing it?)", err))
	}
	defer closeDB()
	db.SetMaxOpenConns(1)

	in := &result.Inspection{Engine: "duckdb", Database: path, TotalBytes: size}
	var total, used, free int64
	if err := db.QueryRowContext(ctx, `select version(), block_size, total_blocks, used_blocks, free_blocks
		from pragma_database_size() where database_name = current_database()`).
		Scan(&in.Version, &in.PageSize, &total, &used, &free); err != nil {
		return fail(fmt.Errorf("reading the database's size: %w", err))
	}
	freeBytes := free * in.PageSize
	in.FreeBytes = &freeBytes

	tables, err := duckTables(ctx, db)
	if err != nil {
		return fail(err)
	}
	if err := duckIndexes(ctx, db, tables); err != nil {
		return fail(err)
	}
	// Segments of all tables, by block, to split shared blocks.
	type seg struct {
		t      *result.TableSpace
		offset int64
	}
	blocks := map[int64][]seg{}
	var segBytes int64
	unpersisted := 0
	for _, t := range tables {
		segs, extra, transient, err := duckSegments(ctx, db, t.Schema, t.Name)
		if err != nil {
			return fail(err)
		}
		for _, s := range segs {
			blocks[s[0]] = append(blocks[s[0]], seg{t, s[1]})
		}
		t.Data += extra * in.PageSize
		segBytes += extra * in.PageSize
		if transient {
			unpersisted++
		}
	}
	for _, segs := range blocks {
		sort.Slice(segs, func(i, j int) bool { return segs[i].offset < segs[j].offset })
		for i, s := range segs {
			end := in.PageSize
			if i+1 < len(segs) {
				end = segs[i+1].offset
			}
			s.t.Data += end - s.offset
			segBytes += end - s.offset
		}
	}
	for _, t := range tables {
		if opt.ExactRows {
			q := "select count(*) from " + duckIdent(t.Schema) + "." + duckIdent(t.Name)
			if err := db.QueryRowContext(ctx, q).Scan(&t.Rows); err != nil {
				return fail(fmt.Errorf("counting the rows of %s.%s: %w", t.Schema, t.Name, err))
			}
			t.RowsExact = true
		}
		t.Reserved = t.Data
		t.RowBytes = perRow(t.Data, t.Rows)
		in.Tables = append(in.Tables, *t)
	}
	sortTables(in.Tables)

	meta := used*in.PageSize - segBytes
	in.Notes = append(in.Notes,
		"duckdb: data is the span of each table's column segments in the file's blocks (a block's unfilled tail "+
			"counts to its last segment); reserved is data alone",
		fmt.Sprintf("duckdb: keeps no size per index or for unused space inside blocks; indexes (ART) and catalog "+
			"metadata together occupy %d bytes (%s) in blocks no table segment uses", meta, units.Bytes(meta)),
		"duckdb: indexes keep no sort direction and cannot be partial")
	if !opt.ExactRows {
		in.Notes = append(in.Notes, "duckdb: rows are estimated_size from duckdb_tables(); --exact-rows counts them")
	}
	if st, err := os.Stat(path + ".wal"); err == nil && st.Size() > 0 {
		in.Notes = append(in.Notes,
			fmt.Sprintf("%s.wal holds %d bytes not yet checkpointed: rows include them, data bytes do not", path, st.Size()))
	} else if unpersisted > 0 {
		in.Notes = append(in.Notes, fmt.Sprintf("%d tables have segments not yet written to the file", unpersisted))
	}
	return in, nil
}

// duckIdent quotes an identifier.
func duckIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// duckTables lists the user tables of the opened database.
func duckTables(ctx context.Context, db *sql.DB) ([]*result.TableSpace, error) {
	rows, err := db.QueryContext(ctx, `select schema_name, table_name, estimated_size, index_count
		from duckdb_tables() where database_name = current_database() and not internal and not temporary
		order by schema_name, table_name`)
	if err != nil {
		return nil, fmt.Errorf("listing tables: %w", err)
	}
	defer rows.Close()
	var out []*result.TableSpace
	for rows.Next() {
		t := &result.TableSpace{}
		if err := rows.Scan(&t.Schema, &t.Name, &t.Rows, &t.IndexCount); err != nil {
			return nil, fmt.Errorf("listing tables: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing tables: %w", err)
	}
	return out, nil
}

// duckIndexes attaches the indexes: PRIMARY KEY and UNIQUE constraints
// (each backed by an ART index) and CREATE INDEX ones.
func duckIndexes(ctx context.Context, db *sql.DB, tables []*result.TableSpace) error {
	byName := map[[2]string]*result.TableSpace{}
	for _, t := range tables {
		byName[[2]string{t.Schema, t.Name}] = t
	}
	q := `select schema_name, table_name, constraint_name, constraint_type = 'PRIMARY KEY', true, constraint_column_names
		from duckdb_constraints() where database_name = current_database() and constraint_type in ('PRIMARY KEY', 'UNIQUE')
		union all
		select schema_name, table_name, index_name, is_primary, is_unique, expressions
		from duckdb_indexes() where database_name = current_database()
		order by 1, 2, 4 desc, 5 desc, 3`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("listing indexes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var schema, table string
		var ix result.IndexSpace
		var cols []any
		if err := rows.Scan(&schema, &table, &ix.Name, &ix.Primary, &ix.Unique, &cols); err != nil {
			return fmt.Errorf("listing indexes: %w", err)
		}
		t := byName[[2]string{schema, table}]
		if t == nil {
			continue
		}
		for _, c := range cols {
			ix.Columns = append(ix.Columns, result.IndexColumn{Name: fmt.Sprint(c)})
		}
		t.Indexes = append(t.Indexes, ix)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("listing indexes: %w", err)
	}
	return nil
}

// duckSegments returns a table's persistent column segments as (block,
// offset), the number of extra blocks they use whole, and whether some
// segments are not yet in the file.
func duckSegments(ctx context.Context, db *sql.DB, schema, table string) (segs [][2]int64, extra int64,
	transient bool, err error) {
	name := duckIdent(schema) + "." + duckIdent(table)
	rows, err := db.QueryContext(ctx,
		"select block_id, block_offset, len(additional_block_ids), persistent from pragma_storage_info('"+
			strings.ReplaceAll(name, "'", "''")+"')")
	if err != nil {
		return nil, 0, false, fmt.Errorf("reading the storage of %s.%s: %w", schema, table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var block, offset, more int64
		var persistent bool
		if err := rows.Scan(&block, &offset, &more, &persistent); err != nil {
			return nil, 0, false, fmt.Errorf("reading the storage of %s.%s: %w", schema, table, err)
		}
		if !persistent {
			transient = true
			continue
		}
		if block < 0 { // constant segment: no storage
			continue
		}
		segs = append(segs, [2]int64{block, offset})
		extra += more
	}
	return segs, extra, transient, rows.Err()
}
