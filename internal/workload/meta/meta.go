// Package meta reads the marker table numalab writes into a database it
// loads (tpcc's numalab_meta, tpch_meta, transtats_meta): key/value pairs
// saying which workload's data it holds, of what size and seed, and
// whether the load finished. Each workload judges the pairs itself.
//
// It does not write the table, and does not say what a key means.
package meta

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/numalab/numalab/internal/engine"
)

// Read is every key/value pair of table in db, read as the engine's SQL
// spells it (engine.SQL.ReadMeta).
func Read(ctx context.Context, db *sql.DB, d engine.SQL, table string) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, d.ReadMeta(table))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", table, err)
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("reading %s: %w", table, err)
		}
		m[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", table, err)
	}
	return m, nil
}
