package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/place"
)

// Prewarm loads every table and index of numalab's schema into shared
// buffers: with pg_prewarm when it can (in whatever schema its extension
// is installed in, else created in numalab's schema), then by a sequential
// scan of each table and a
// full index scan of each index, which touches every buffer's page from
// this one backend. The prewarming backend runs on the calling thread's
// CPUs when backends are pinned. It then reads that backend's numa_maps
// (managed server, or a local one) to say where the shared memory lies: a
// process's numa_maps counts only the pages it touched itself, hence the
// scans even after pg_prewarm, which does not touch pages already
// buffered. Without pg_prewarm, a table larger than a quarter of
// shared_buffers is read through a small ring of buffers by its
// sequential scan and so is not fully cached: install the server's contrib
// package. pg_prewarm never fails a prewarm: when it is missing, cannot be
// created or fails, the scans alone read the data, and Method says why.
func (e *pgEngine) Prewarm(ctx context.Context) (PrewarmStats, error) {
	var st PrewarmStats
	cn, err := e.Connect(ctx)
	if err != nil {
		return st, fmt.Errorf("prewarming postgres: %w", err)
	}
	defer cn.Close()
	c := cn.(*pgConn).c
	type rel struct {
		oid            uint32
		name, kind, on string
		bytes          int64
	}
	var rels []rel
	rows, err := c.Query(ctx, `SELECT c.oid, c.relname, c.relkind, coalesce(t.relname, ''), pg_relation_size(c.oid)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_index i ON i.indexrelid = c.oid LEFT JOIN pg_class t ON t.oid = i.indrelid
		WHERE n.nspname = $1 AND c.relkind IN ('r', 'i', 'm') ORDER BY c.relkind DESC, c.relname`, e.schema)
	if err != nil {
		return st, fmt.Errorf("prewarming postgres: listing relations: %w", err)
	}
	for rows.Next() {
		var r rel
		if err := rows.Scan(&r.oid, &r.name, &r.kind, &r.on, &r.bytes); err != nil {
			rows.Close()
			return st, fmt.Errorf("prewarming postgres: %w", err)
		}
		rels = append(rels, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("prewarming postgres: %w", err)
	}
	// The scans must run in this backend, not in parallel workers.
	if _, err := c.Exec(ctx, "SET max_parallel_workers_per_gather = 0"); err != nil {
		return st, fmt.Errorf("prewarming postgres: %w", err)
	}
	prewarm, why := e.findPrewarm(ctx, c)
	for _, r := range rels {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if prewarm != "" {
			if _, err := c.Exec(ctx, "SELECT "+prewarm+"($1::oid)", r.oid); err != nil {
				prewarm, why = "", fmt.Sprintf("%s failed on %s: %v", prewarm, r.name, err)
			}
		}
		if err := scanRelation(ctx, c, e.schema, r.oid, r.name, r.kind, r.on); err != nil {
			return st, fmt.Errorf("prewarming postgres: %s: %w", r.name, err)
		}
		st.Objects++
		st.Bytes += r.bytes
	}
	st.Method = "pg_prewarm, scans"
	if prewarm == "" {
		st.Method = "scans (pg_prewarm not used: " + why + ")"
	}
	if e.server != nil || e.pin {
		if ms, err := place.ReadNumaMaps("/", cn.BackendPID()); err == nil {
			u := place.SumNumaMaps(sharedMappings(ms))
			st.Placement = &u
		}
	}
	return st, nil
}

// findPrewarm returns the qualified name of pg_prewarm's function, in the
// schema its extension is installed in (pg_extension), creating the
// extension in numalab's schema when the server has it and it is not
// installed; or "" and why it cannot be used.
func (e *pgEngine) findPrewarm(ctx context.Context, c *pgx.Conn) (fn, why string) {
	_, createErr := c.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_prewarm SCHEMA "+pgx.Identifier{e.schema}.Sanitize())
	var schema string
	err := c.QueryRow(ctx, `SELECT n.nspname FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
		WHERE x.extname = 'pg_prewarm'`).Scan(&schema)
	switch {
	case err == nil:
		return pgx.Identifier{schema, "pg_prewarm"}.Sanitize(), ""
	case errors.Is(err, pgx.ErrNoRows) && createErr != nil:
		return "", fmt.Sprintf("not installed, and creating it failed: %v", createErr)
	default:
		return "", fmt.Sprintf("finding its schema: %v", err)
	}
}

// sharedMappings keeps the mappings of PostgreSQL's main shared memory:
// shared anonymous memory (/dev/zero, SYSV or /dev/shm), the largest
// non-file mappings, excluding the heap and stack.
func sharedMappings(ms []place.NumaMapping) []place.NumaMapping {
	var out []place.NumaMapping
	for _, m := range ms {
		if m.Heap || m.Stack {
			continue
		}
		f := m.File
		if strings.HasPrefix(f, "/dev/zero") || strings.HasPrefix(f, "/SYSV") ||
			strings.HasPrefix(f, "/dev/shm/PostgreSQL") || strings.HasPrefix(f, "/anon_hugepage") {
			out = append(out, m)
		}
	}
	return out
}

// scanRelation reads a table with a sequential scan, or an index with a
// full index scan (sequential and bitmap scans disabled for the query).
func scanRelation(ctx context.Context, c *pgx.Conn, schema string, oid uint32, name, kind, table string) error {
	if kind != "i" {
		// count(t.*) forms every row, reading the tuples themselves, which
		// fill pages from their end; count(*) would read line pointers only.
		_, err := c.Exec(ctx, "SELECT count(t.*) FROM "+pgx.Identifier{schema, name}.Sanitize()+" t")
		return err
	}
	var cols []string
	rows, err := c.Query(ctx, `SELECT a.attname FROM pg_index i, unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
		JOIN pg_attribute a ON a.attnum = k.attnum WHERE i.indexrelid = $1 AND a.attrelid = i.indrelid ORDER BY k.ord`, oid)
	if err != nil {
		return err
	}
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			rows.Close()
			return err
		}
		cols = append(cols, pgx.Identifier{a}.Sanitize())
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(cols) == 0 {
		return err
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for _, s := range []string{"SET LOCAL enable_seqscan = off", "SET LOCAL enable_bitmapscan = off"} {
		if _, err := tx.Exec(ctx, s); err != nil {
			return err
		}
	}
	_, err = tx.Exec(ctx, fmt.Sprintf("SELECT count(*) FROM (SELECT %s FROM %s ORDER BY %[1]s) x",
		strings.Join(cols, ", "), pgx.Identifier{schema, table}.Sanitize()))
	return err
}
