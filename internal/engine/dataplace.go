package engine

// Data on a chosen NUMA node for the reporting workloads (run report, run
// tpch), verified as run oltp verifies its data. PlaceData runs on a
// thread pinned to the node's CPUs and bound to its memory (sweep's
// Prewarm thread), so what it touches first lands there:
//
//   - SQLite: the file's clean cached pages are dropped and the file read
//     back (PrewarmSQLiteFile), and every page still elsewhere is moved
//     (place.MoveFilePages); at least 99% must be on the node.
//   - DuckDB: the file as SQLite's; then DuckDB's buffer pool is filled
//     by reading every value of every table (a hash of each row: count
//     of a column can come from statistics and read nothing) with one
//     thread (SET threads = 1: the worker threads are not bound),
//     and the anonymous memory this process gained, per node, is read from
//     numa_maps before and after (see PoolOnNode for what must hold).
//     Blocks DuckDB held before (a load in the same process) are not
//     moved: open the database fresh first.
//   - PostgreSQL: the server's shared memory is prewarmed by a backend
//     pinned to the node (Prewarm) and must be at least 99% there.

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
)

// KindPlacedData is the stored item kind of a PlacedData.
const KindPlacedData result.Kind[PlacedData] = "engine.PlacedData"

// PlacedData is where PlaceData put the data, and what it checked.
type PlacedData struct {
	Node  int          `json:"data_node"`
	Stats PrewarmStats `json:"stats"`
	// File are the database file's cached pages by node (SQLite, DuckDB).
	File *place.PageSummary `json:"file_pages,omitempty"`
	// BufferBytes is DuckDB's buffer memory after the prewarm, and
	// GainedBytes the anonymous memory this process gained meanwhile, per
	// node (numa_maps).
	BufferBytes int64         `json:"buffer_bytes,omitempty"`
	GainedBytes map[int]int64 `json:"gained_bytes,omitempty"`
	// Memory names the server memory Stats.Placement measured:
	// PostgreSQL's shared memory, MariaDB's buffer pool.
	Memory string `json:"memory,omitempty"`
}

// minOnNode is the share of the data that must land on the node asked for.
const minOnNode = 0.99

// otherThreadsBytes is the new memory that the process's other threads
// may take on their own nodes while DuckDB's buffer pool is filled (the Go
// heap and stacks of the progress and sampling goroutines, which run in the
// cell's placement): in the two-node guest, up to 548 KiB (561,152 bytes)
// appeared on the placement's node beside an 18 MB pool on the data node
// in 14 runs.
const otherThreadsBytes = 1 << 20

// PlaceData prewarms e's data on node from the calling thread, which must
// be pinned to node's CPUs and bound to its memory, and checks where it
// landed; an error says what did not land there.
func PlaceData(ctx context.Context, e Engine, node int) (PlacedData, error) {
	pd := PlacedData{Node: node}
	var err error
	switch x := e.(type) {
	case *sqliteEngine:
		pd.Stats, err = x.Prewarm(ctx)
		if err == nil {
			pd.File, err = placeFile(x.path, node)
		}
	case *duckEngine:
		err = x.placeData(ctx, node, &pd)
	case *pgEngine, *myEngine:
		// The server's own memory, as its Prewarm reads it from numa_maps.
		spec, _ := Lookup(e.Name())
		pd.Memory = spec.Placement.ServerMemory
		pd.Stats, err = e.Prewarm(ctx)
		if err == nil && pd.Stats.Placement != nil {
			if f := pd.Stats.Placement.Local(node); f < minOnNode {
				err = fmt.Errorf("placing %s on node %d: only %.1f%% landed there", pd.Memory, node, 100*f)
			}
		}
	default:
		pd.Stats, err = e.Prewarm(ctx)
	}
	return pd, err
}

// placeFile moves the file's cached pages to node and checks them.
func placeFile(path string, node int) (*place.PageSummary, error) {
	s, err := place.MoveFilePages(path, node)
	if err != nil {
		return nil, fmt.Errorf("placing %s on node %d: %w", path, node, err)
	}
	if s.Pages > 0 && float64(s.PerNode[node]) < minOnNode*float64(s.Pages) {
		return &s, fmt.Errorf("placing %s on node %d: %s, fewer than %.0f%% there", path, node, s, 100*minOnNode)
	}
	return &s, nil
}

func (e *duckEngine) placeData(ctx context.Context, node int, pd *PlacedData) error {
	if _, err := PrewarmSQLiteFile(e.path, true); err != nil {
		return err
	}
	var err error
	if pd.File, err = placeFile(e.path, node); err != nil {
		return err
	}
	if err := e.SetDOP(ctx, 1); err != nil {
		return err
	}
	before, err := anonBytes()
	if err != nil {
		return err
	}
	if pd.Stats, err = e.Prewarm(ctx); err != nil {
		return err
	}
	pd.Stats.Method += ", one thread"
	after, err := anonBytes()
	if err != nil {
		return err
	}
	if err := e.db.QueryRowContext(ctx,
		"SELECT coalesce(sum(memory_usage_bytes), 0)::BIGINT FROM duckdb_memory()").Scan(&pd.BufferBytes); err != nil {
		return fmt.Errorf("reading duckdb's buffer memory: %w", err)
	}
	pd.GainedBytes = map[int]int64{}
	for n, b := range after {
		if d := b - before[n]; d != 0 {
			pd.GainedBytes[n] = d
		}
	}
	return PoolOnNode(node, pd.BufferBytes, pd.GainedBytes)
}

// PoolOnNode says whether a DuckDB buffer pool of pool bytes, filled by a
// thread bound to node, is on node, from the anonymous memory the process
// gained per node meanwhile. Either of two things shows it, and each can
// read wrong on its own, so it is refused only when both fail:
//
//   - the new memory on node covers at least 99% of the pool. It can read
//     low: the allocator reuses memory the process already had, and frees
//     some as DuckDB reads (on one node under a CPU hog, 1 MB of a 4.7 MB
//     pool showed as new);
//   - the new memory on other nodes is at most 1% of the pool plus
//     otherThreadsBytes. It can read high: the process's other threads run
//     on the cell's placement and take memory there (in the two-node guest
//     under a loaded host, 2.7 MB beside an 18.4 MB pool of which 18.7 MB
//     was new on the data node).
func PoolOnNode(node int, pool int64, gained map[int]int64) error {
	var elsewhere int64
	for n, d := range gained {
		if n != node && d > 0 {
			elsewhere += d
		}
	}
	covered := float64(gained[node]) >= minOnNode*float64(pool)
	quiet := float64(elsewhere) <= (1-minOnNode)*float64(pool)+otherThreadsBytes
	if covered || quiet {
		return nil
	}
	return fmt.Errorf(
		"placing duckdb's buffer pool on node %d: it holds %d bytes, "+
			"only %d bytes of new memory appeared on the node and %d bytes on other nodes (per node: %v); "+
			"open the database fresh, so that no block is already loaded",
		node, pool, gained[node], elsewhere, gained)
}

// readAll reads every value of every table of the database's schema (a
// hash of each whole row, which statistics cannot answer as they can
// count(column)), so that DuckDB's buffer manager loads every block.
func (e *duckEngine) readAll(ctx context.Context) (PrewarmStats, error) {
	st := PrewarmStats{Method: "sum(hash(row)) per table"}
	rows, err := e.db.QueryContext(ctx, `SELECT table_name FROM duckdb_tables()
		WHERE database_name = current_database() AND schema_name = current_schema() AND NOT internal ORDER BY table_name`)
	if err != nil {
		return st, fmt.Errorf("listing duckdb's tables: %w", err)
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return st, fmt.Errorf("listing duckdb's tables: %w", err)
		}
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("listing duckdb's tables: %w", err)
	}
	for _, t := range tables {
		q := fmt.Sprintf("SELECT sum(hash(r)) FROM %s AS r", quoteIdent(t))
		if _, err := e.db.ExecContext(ctx, q); err != nil {
			return st, fmt.Errorf("reading duckdb table %s: %w", t, err)
		}
		st.Objects++
	}
	return st, nil
}

// anonBytes is this process's anonymous memory per node (numa_maps).
func anonBytes() (map[int]int64, error) {
	ms, err := place.ReadNumaMaps("/", os.Getpid())
	if err != nil {
		return nil, err
	}
	var anon []place.NumaMapping
	for _, m := range ms {
		if m.File == "" && !m.Stack {
			anon = append(anon, m)
		}
	}
	return place.SumNumaMaps(anon).Bytes, nil
}

// PlacedText says what PlaceData checked.
func PlacedText(pd PlacedData) string {
	var parts []string
	if pd.File != nil {
		parts = append(parts, "file pages "+pd.File.String())
	}
	if pd.BufferBytes > 0 {
		s := fmt.Sprintf("buffer pool %d bytes, new memory by node %v bytes", pd.BufferBytes, pd.GainedBytes)
		if short := pd.BufferBytes - pd.GainedBytes[pd.Node]; short > 0 {
			s += fmt.Sprintf(" (%d bytes of the pool did not show as new memory on node %d: "+
				"memory the process already had, reused, on a node not known)", short, pd.Node)
		}
		parts = append(parts, s)
	}
	if p := pd.Stats.Placement; p != nil {
		what := pd.Memory
		if what == "" {
			what = "server memory"
		}
		parts = append(parts, fmt.Sprintf("%s %.1f%% on node %d", what, 100*p.Local(pd.Node), pd.Node))
	}
	if len(parts) == 0 {
		return pd.Stats.Method
	}
	return strings.Join(parts, "; ")
}
