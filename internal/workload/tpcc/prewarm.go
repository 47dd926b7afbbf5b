package tpcc

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/place"
)

// PrewarmStats say what Prewarm read.
type PrewarmStats struct {
	FileBytes int64 `json:"file_bytes"` // read from the file (SQLite); relation or database bytes (others)
	Objects   int   `json:"objects"`    // tables and indexes scanned (DuckDB: columns)
	Entries   int64 `json:"entries"`    // rows and index entries visited (SQLite)
	// Method and Placement are the engine's (engine.PrewarmStats), on
	// DuckDB and PostgreSQL.
	Method    string           `json:"method,omitempty"`
	Placement *place.NumaUsage `json:"placement,omitempty"`
}

// Prewarm brings the whole database into memory from the calling thread:
// it reads the file (after dropping its cached pages first, when evict is
// set), then scans every table and every index through SQLite's memory map,
// so that the streams find every page cached and mapped.
//
// Placement: the page cache pages are allocated when the file is read, on
// the NUMA node of the thread that reads them (under the default local
// policy). To put the data on node N, call Prewarm with evict set from a
// goroutine locked to an OS thread pinned to node N, before any stream
// opens the file: eviction only drops pages that are clean and not mapped
// by anyone, so pages mapped by open connections, or still dirty from the
// load (Prewarm syncs the file first), stay where they are. Verify the
// result from the pages' locations.
//
// On DuckDB and PostgreSQL it calls the engine's Prewarm (evict does not
// apply): DuckDB reads every column; PostgreSQL loads every table and index
// of numalab's schema into shared buffers, and reports where the shared
// memory lies. A managed PostgreSQL server started with a memory policy
// bound to node N (pgserver.Config.MemPolicy) allocates its buffers there
// whichever thread prewarms.
func (w *Workload) Prewarm(ctx context.Context, evict bool) (PrewarmStats, error) {
	var st PrewarmStats
	if !w.kind.oneWriter {
		es, err := w.eng.Prewarm(ctx)
		st = PrewarmStats{FileBytes: es.Bytes, Objects: es.Objects, Method: es.Method, Placement: es.Placement}
		return st, err
	}
	n, err := engine.PrewarmSQLiteFile(w.path, evict)
	st.FileBytes = n
	if err != nil {
		return st, err
	}
	c, err := engine.OpenSQLiteConn(w.path)
	if err != nil {
		return st, fmt.Errorf("prewarming: %w", err)
	}
	defer c.Close()
	q := func(query string) ([][]driver.Value, error) {
		rows, err := c.Query(query, nil)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out [][]driver.Value
		for {
			v := make([]driver.Value, len(rows.Columns()))
			err := rows.Next(v)
			if err == io.EOF {
				return out, nil
			}
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
	}
	objs, err := q(
		`SELECT type, name, tbl_name FROM sqlite_schema WHERE type IN ('table', 'index') ORDER BY tbl_name, type DESC, name`)
	if err != nil {
		return st, fmt.Errorf("prewarming: listing tables: %w", err)
	}
	for _, o := range objs {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		typ, name, tbl := asString(o[0]), asString(o[1]), asString(o[2])
		var scan string
		if typ == "table" {
			// The last column, so that every row (and every page) is read.
			cols, err := q(fmt.Sprintf("SELECT name FROM pragma_table_info('%s') ORDER BY cid DESC LIMIT 1", name))
			if err != nil || len(cols) == 0 {
				return st, fmt.Errorf("prewarming: columns of %s: %v", name, err)
			}
			scan = fmt.Sprintf(`SELECT count("%s") FROM "%s" NOT INDEXED`, asString(cols[0][0]), name)
		} else {
			// A condition on the index's first column keeps SQLite from
			// answering count(*) from another b-tree.
			cols, err := q(fmt.Sprintf("SELECT name FROM pragma_index_info('%s') ORDER BY seqno LIMIT 1", name))
			if err != nil || len(cols) == 0 {
				return st, fmt.Errorf("prewarming: columns of index %s: %v", name, err)
			}
			scan = fmt.Sprintf(`SELECT count(*) FROM "%s" INDEXED BY "%s" WHERE "%s" IS NOT NULL OR "%[3]s" IS NULL`,
				tbl, name, asString(cols[0][0]))
		}
		res, err := q(scan)
		if err != nil {
			return st, fmt.Errorf("prewarming: %s: %w", scan, err)
		}
		st.Objects++
		st.Entries += asNumber[int64](res[0][0])
	}
	return st, nil
}
