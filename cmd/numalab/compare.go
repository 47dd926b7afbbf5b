package main

import (
	"context"
	"fmt"

	"github.com/numalab/numalab/internal/report"
)

const compareHelp = `Usage: numalab compare [--store FILE] [--json] A B

Puts two stored runs of the same kind side by side (for example SMT on
against SMT off, two machines, or two engine versions): every figure both
runs measured, A's value, B's, the ratio B/A, each run's own spread and a
verdict: "B higher" or "B lower" when the two spreads do not overlap,
"within noise" when they do, "no spread stored" when a run kept none.

The spread is what the run itself measured: the min-max of its repeats
(run oltp --repeat N), or for a cell run once its slowest and fastest whole
second; for a memory probe point, the min-max of its timed windows. Pairs
of OLTP placements with different names (smt=on in A, smt=off in B) are
compared in the order the runs measured them, and the output says so.

Runs of different kinds cannot be compared.

Examples:
  numalab compare 3 7
  numalab compare --store fleet.db 12 15
  numalab compare --json 3 7 | jq '.figures[] | select(.verdict != "within noise")'
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
