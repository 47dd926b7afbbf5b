package main

import (
	"context"
	"fmt"

	"github.com/numalab/numalab/internal/report"
)

const compareHelp = `Usage: numalab compare [--store FILE] [--json] A B

Puts two stored runs of the same kind side by side (for example SMT on
against SMT off, two machines, or two engine versions): every figure both
runs measured, A's median, B's, the ratio B/A, each median's 95%
confidence interval, the repeats n behind each, and a verdict from a
Mann-Whitney U test of A's repeats against B's (p <= 0.05, the statistics
of golang.org/x/perf/benchmath): "B higher", "B lower", "no difference
shown", or "cannot tell".

The repeats are the cells' (run oltp --repeat N). A
cell run once, and every probe figure, is one value: its verdict is
"cannot tell", whatever the ratio. The test needs 4 repeats a side to show
a difference at all, and a confidence interval needs 6. Pairs of OLTP
placements with different names (smt=on in A, smt=off in B) are compared
in the order the runs measured them, and the output says so.

Runs of different kinds cannot be compared.

Examples:
  numalab compare 3 7
  numalab compare --store fleet.db 12 15
  numalab compare --json 3 7 | jq '.figures[] | select(.verdict == "B higher" or .verdict == "B lower")'
`

func cmdCompare(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "compare", compareHelp)
	storePath := storeFlag(fs)
	asJSON := fs.Bool("json", false, "print the comparison as JSON")
	if done, err := parseFlags(e, fs, args); done {
		return err
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("compare: want two run ids, A and B, got %d argument(s) (try 'numalab runs' to list them; flags go before run ids)", fs.NArg())
	}
	ids, err := runIDs("compare", fs.Args())
	if err != nil {
		return err
	}
	if ids[0] == ids[1] {
		return fmt.Errorf("compare: A and B are both run %d: give two different runs", ids[0])
	}
	runs, err := loadRuns(*storePath, ids)
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	c, err := report.Compare(runs[0], runs[1])
	if err != nil {
		return err
	}
	if *asJSON {
		return report.WriteCompareJSON(e.stdout, c)
	}
	return report.WriteCompareText(e.stdout, c)
}
