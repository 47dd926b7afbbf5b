package main

import (
	"context"
	"fmt"

	"github.com/numalab/numalab/internal/workload/tpcc"
)

const checkHelp = `Usage:
  numalab check [--db FILE]

Checks a numalab TPC-C database against the specification's consistency
conditions (TPC-C clauses 3.3.2.1 to 3.3.2.12) and its row counts
(4.3.3.1), read-only. Every load is checked already; this is the check on
demand, for a file that was copied, kept for a long time or suspected.
It lists every violation found (up to 10 per condition) and exits non-zero
if there is any.

Examples:
  numalab check                          # numalab-tpcc-w1.db
  numalab check --db numalab-tpcc-w4.db
`

func cmdCheck(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "check", checkHelp)
	db := fs.String("db", "numalab-tpcc-w1.db", "TPC-C database `file` made by numalab run oltp")
	if done, err := parseNoArgs(e, fs, args); done {
		return err
	}
	if err := tpcc.CheckFile(ctx, *db); err != nil {
		return fmt.Errorf("checking %s: %w", *db, err)
	}
	fmt.Fprintf(e.stdout, "%s: consistent (TPC-C 3.3.2.1-3.3.2.12 and 4.3.3.1 row counts)\n", *db)
	return nil
}
