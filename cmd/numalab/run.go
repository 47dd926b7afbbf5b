package main

import (
	"context"
	"fmt"
	"strings"
)

const runHelp = `Usage:
  numalab run oltp [flags]     tpcc-ro: TPC-C's read-only transactions, streams x placement
  numalab run report [flags]   transtats reporting queries, streams x DOP
  numalab run insert [flags]   concurrent bulk loading into one table, streams x placement
  numalab run null [flags]     the null transaction: SELECT 1, client and backend placement
  numalab run tpch [flags]     TPC-H-derived queries: speedup against DOP, plans, costs

Each 'run' loads its database if needed, runs every cell of its sweep for a
fixed duration after a warm-up, prints a row per cell as it goes and stores
the run (--store). Ctrl-C ends the current cell early, marks it cut short and
keeps everything measured.

Examples:
  numalab run oltp --warehouses 2 --streams 1,2,4 --duration 10s
  numalab run report --engine duckdb --rows 1000000 --streams 1,2 --dop 1,2
  numalab run insert --engine duckdb --streams 1,2 --batch 1000
  numalab run null --engine sqlite --streams 1,2
  numalab run oltp --help     (likewise report, insert, null)
`

func cmdRun(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprint(e.stdout, runHelp)
			return nil
		}
		fmt.Fprint(e.stderr, runHelp)
		return errUsage
	}
	switch args[0] {
	case "oltp":
		return runOLTP(ctx, e, args[1:])
	case "report":
		return runReport(ctx, e, args[1:])
	case "insert":
		return runInsert(ctx, e, args[1:])
	case "null":
		return runNull(ctx, e, args[1:])
	case "tpch":
		return runTPCH(ctx, e, args[1:])
	}
	fmt.Fprintf(e.stderr, "numalab run: unknown workload %q (want oltp, report, insert, null or tpch)\n\n", args[0])
	fmt.Fprint(e.stderr, runHelp)
	return errUsage
}
