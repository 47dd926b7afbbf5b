package inspect

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
)

// SQLite inspects the SQLite file at path. It refuses a path that does not
// exist (SQLite would create it) or a file that is not an SQLite database.
// It opens the file read-only: the catalog through SQLite with mode=ro and
// immutable=1 (no locks, no journal, no -shm file), the pages with a plain
// read-only open. A database with a non-empty -wal file is inspected as its
// main file stands (a note says so).
func SQLite(ctx context.Context, path string, opt Options) (*result.Inspection, error) {
	fail := func(err error) (*result.Inspection, error) {
		return nil, fmt.Errorf("inspecting SQLite database %s: %w", path, err)
	}
	f, size, err := openDatabaseFile(path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	sf, err := newSQLiteFile(f, size)
	if err != nil {
		if errors.Is(err, ErrNotSQLite) {
			err = fmt.Errorf("%w%s", err, engineHint(f, "sqlite"))
		}
		return fail(err)
	}
	in := &result.Inspection{
		Engine:     "sqlite",
		Database:   path,
		PageSize:   sf.h.pageSize,
		TotalBytes: size,
	}
	for _, suffix := range []string{"-wal", "-journal"} {
		if st, err := os.Stat(path + suffix); err == nil && st.Size() > 0 {
			in.Notes = append(in.Notes, fmt.Sprintf(
				"%s%s holds %d bytes not yet in the main file; the figures describe the main file only", path, suffix, st.Size()))
		}
	}

	db, err := engine.OpenSQLiteDB(path)
	if err != nil {
		return fail(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if err := db.QueryRowContext(ctx, "select sqlite_version()").Scan(&in.Version); err != nil {
		return fail(err)
	}
	cat, err := sqliteCatalog(ctx, db)
	if err != nil {
		return fail(err)
	}

	free, err := sf.freelist()
	if err != nil {
		return fail(err)
	}
	freeBytes := free * sf.h.pageSize
	in.FreeBytes = &freeBytes
	counted := free + sf.ptrmapPages() + sf.lockBytePage()
	for _, t := range cat {
		ts, pages, err := sqliteTable(ctx, db, sf, t)
		if err != nil {
			return fail(err)
		}
		counted += pages
		in.Tables = append(in.Tables, ts)
	}
	if counted != sf.h.pageCount {
		in.Notes = append(in.Notes, fmt.Sprintf("%d of the file's %d pages belong to no table, index or freelist",
			sf.h.pageCount-counted, sf.h.pageCount))
	}
	in.Notes = append(in.Notes, "sqlite: rows and index entries are counted exactly, by walking every b-tree "+
		"page of the file; unused is free space inside those pages")
	sortTables(in.Tables)
	return in, nil
}

// sqliteTab is a table of the catalog with its indexes.
type sqliteTab struct {
	name, sql  string
	root       uint32
	withoutRow bool
	indexes    []sqliteIdx
}

type sqliteIdx struct {
	name, sql string
	root      uint32
}

// sqliteCatalog reads the tables (with storage: no views or virtual tables)
// and their indexes from sqlite_schema, which itself is listed as a table.
func sqliteCatalog(ctx context.Context, db *sql.DB) ([]*sqliteTab, error) {
	rows, err := db.QueryContext(ctx, `select type, name, tbl_name, rootpage, coalesce(sql, '')
		from sqlite_schema where type in ('table', 'index') and rootpage > 0 order by type desc, name`)
	if err != nil {
		return nil, fmt.Errorf("reading the schema: %w", err)
	}
	defer rows.Close()
	tabs := map[string]*sqliteTab{"sqlite_schema": {name: "sqlite_schema", root: 1}}
	var order []*sqliteTab
	order = append(order, tabs["sqlite_schema"])
	for rows.Next() {
		var typ, name, tbl, stmt string
		var root int64
		if err := rows.Scan(&typ, &name, &tbl, &root, &stmt); err != nil {
			return nil, fmt.Errorf("reading the schema: %w", err)
		}
		if typ == "table" {
			t := &sqliteTab{name: name, sql: stmt, root: uint32(root)}
			tabs[name] = t
			order = append(order, t)
			continue
		}
		t := tabs[tbl]
		if t == nil {
			return nil, fmt.Errorf("reading the schema: index %s is on table %s, which has no storage", name, tbl)
		}
		t.indexes = append(t.indexes, sqliteIdx{name: name, sql: stmt, root: uint32(root)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the schema: %w", err)
	}
	return order, nil
}

// sqliteTable measures one table and its indexes; it returns the pages they
// occupy.
func sqliteTable(ctx context.Context, db *sql.DB, sf *sqliteFile, t *sqliteTab) (result.TableSpace, int64, error) {
	ts := result.TableSpace{Schema: "main", Name: t.name, RowsExact: true}
	bt, err := sf.btree(t.root)
	if err != nil {
		return ts, 0, fmt.Errorf("table %s: %w", t.name, err)
	}
	t.withoutRow = bt.index
	ps := sf.h.pageSize
	pages := bt.pages
	ts.Rows = bt.entries()
	ts.Data = bt.pages*ps - bt.unused
	unused := bt.unused
	var index int64

	meta, err := sqliteIndexMeta(ctx, db, t)
	if err != nil {
		return ts, 0, fmt.Errorf("table %s: %w", t.name, err)
	}
	roots := map[string]uint32{}
	for _, ix := range t.indexes {
		roots[ix.name] = ix.root
	}
	for _, ix := range meta {
		root, ok := roots[ix.Name]
		if !ok { // the table itself: WITHOUT ROWID primary key, or the rowid
			ix.Clustered = true
			ts.Indexes = append(ts.Indexes, ix)
			continue
		}
		s, err := sf.btree(root)
		if err != nil {
			return ts, 0, fmt.Errorf("index %s: %w", ix.Name, err)
		}
		b := s.pages * ps
		n := s.entries()
		ix.Bytes, ix.Entries = &b, &n
		pages += s.pages
		index += b - s.unused
		unused += s.unused
		ts.Indexes = append(ts.Indexes, ix)
		ts.IndexCount++
	}
	ts.Index, ts.Unused = &index, &unused
	ts.Reserved = pages * ps
	ts.RowBytes = perRow(ts.Data, ts.Rows)
	return ts, pages, nil
}

// sqliteIndexMeta describes a table's indexes from PRAGMA index_list and
// index_xinfo, with an entry for an INTEGER PRIMARY KEY (the rowid).
func sqliteIndexMeta(ctx context.Context, db *sql.DB, t *sqliteTab) ([]result.IndexSpace, error) {
	if t.name == "sqlite_schema" {
		return nil, nil
	}
	type entry struct {
		name    string
		unique  bool
		origin  string
		partial bool
	}
	var list []entry
	rows, err := db.QueryContext(ctx, "select name, \"unique\", origin, partial from pragma_index_list(?)", t.name)
	if err != nil {
		return nil, fmt.Errorf("listing indexes: %w", err)
	}
	for rows.Next() {
		var e entry
		if err := rows.Scan(&e.name, &e.unique, &e.origin, &e.partial); err != nil {
			rows.Close()
			return nil, fmt.Errorf("listing indexes: %w", err)
		}
		list = append(list, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing indexes: %w", err)
	}
	sqls := map[string]string{}
	for _, ix := range t.indexes {
		sqls[ix.name] = ix.sql
	}
	var out []result.IndexSpace
	hasPK := false
	for _, e := range list {
		ix := result.IndexSpace{Name: e.name, Unique: e.unique, Primary: e.origin == "pk"}
		hasPK = hasPK || ix.Primary
		if e.partial {
			ix.Where = partialWhere(sqls[e.name])
		}
		xr, err := db.QueryContext(ctx, "select cid, name, desc, key from pragma_index_xinfo(?) order by seqno", e.name)
		if err != nil {
			return nil, fmt.Errorf("index %s: reading its columns: %w", e.name, err)
		}
		for xr.Next() {
			var cid int
			var name sql.NullString
			var desc, key bool
			if err := xr.Scan(&cid, &name, &desc, &key); err != nil {
				xr.Close()
				return nil, fmt.Errorf("index %s: reading its columns: %w", e.name, err)
			}
			col := name.String
			switch cid {
			case -1: // the rowid, carried by every index of a rowid table
				continue
			case -2:
				col = "(expression)"
			}
			if key {
				ix.Columns = append(ix.Columns, result.IndexColumn{Name: col, Desc: desc})
			} else {
				ix.Include = append(ix.Include, col)
			}
		}
		xr.Close()
		if err := xr.Err(); err != nil {
			return nil, fmt.Errorf("index %s: reading its columns: %w", e.name, err)
		}
		out = append(out, ix)
	}
	if !hasPK && !t.withoutRow {
		// A primary key without an index of its own is an INTEGER PRIMARY
		// KEY: the rowid, by which the table itself is ordered.
		var cols []string
		pr, err := db.QueryContext(ctx, "select name from pragma_table_info(?) where pk > 0", t.name)
		if err != nil {
			return nil, fmt.Errorf("reading the primary key: %w", err)
		}
		for pr.Next() {
			var col string
			if err := pr.Scan(&col); err != nil {
				pr.Close()
				return nil, fmt.Errorf("reading the primary key: %w", err)
			}
			cols = append(cols, col)
		}
		pr.Close()
		if len(cols) == 1 {
			out = append([]result.IndexSpace{{
				Name: "(rowid)", Columns: []result.IndexColumn{{Name: cols[0]}}, Unique: true, Primary: true,
			}}, out...)
		}
	}
	return out, nil
}

// partialWhere returns the predicate of a CREATE INDEX ... WHERE statement:
// what follows the column list's closing parenthesis and WHERE.
func partialWhere(stmt string) string {
	depth, opened := 0, false
	var quote byte
	for i := 0; i < len(stmt); i++ {
		c := stmt[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '[':
			quote = ']'
		case c == '(':
			depth++
			opened = true
		case c == ')':
			depth--
			if depth == 0 && opened {
				rest := strings.TrimSpace(stmt[i+1:])
				if len(rest) > 5 && strings.EqualFold(rest[:5], "where") && strings.ContainsRune(" \t\r\n(", rune(rest[5])) {
					return strings.TrimSpace(rest[5:])
				}
				return ""
			}
		}
	}
	return ""
}

// openDatabaseFile opens an existing database file read-only, refusing a
// missing path (an embedded engine would create it), a directory and an
// empty file.
func openDatabaseFile(path string) (*os.File, int64, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("no such database file (check the path given to --db)")
	}
	if err != nil {
		return nil, 0, err
	}
	if st.IsDir() {
		return nil, 0, fmt.Errorf("it is a directory, not a database file (give the database file to --db)")
	}
	if st.Size() == 0 {
		return nil, 0, fmt.Errorf("the file is empty, not a database")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// engineHint names the engine whose file f looks like, if it is not want's.
func engineHint(f *os.File, want string) string {
	b := make([]byte, 16)
	n, _ := f.ReadAt(b, 0)
	got, ok := engine.Lookup(engine.HeaderEngine(b[:n]))
	if !ok || got.Name == want {
		return ""
	}
	return fmt.Sprintf(" (it is %s database: try --engine %s)", got.Article, got.Name)
}

// perRow is data bytes per row, nil without rows.
func perRow(data, rows int64) *float64 {
	if rows <= 0 {
		return nil
	}
	v := float64(data) / float64(rows)
	return &v
}

// sortTables orders tables by reserved bytes, largest first, then by name;
// and each table's indexes: the primary key first, then by size, largest
// first, then by name.
func sortTables(ts []result.TableSpace) {
	for _, t := range ts {
		sort.SliceStable(t.Indexes, func(i, j int) bool {
			a, b := t.Indexes[i], t.Indexes[j]
			if a.Primary != b.Primary {
				return a.Primary
			}
			if sa, sb := derefOr(a.Bytes), derefOr(b.Bytes); sa != sb {
				return sa > sb
			}
			return a.Name < b.Name
		})
	}
	sort.SliceStable(ts, func(i, j int) bool {
		if ts[i].Reserved != ts[j].Reserved {
			return ts[i].Reserved > ts[j].Reserved
		}
		if ts[i].Schema != ts[j].Schema {
			return ts[i].Schema < ts[j].Schema
		}
		return ts[i].Name < ts[j].Name
	})
}

// derefOr is *p, or -1 for nil.
func derefOr(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}
