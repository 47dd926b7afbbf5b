package main

import (
	"context"
	"fmt"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/report"
)

func cmdCompare(_ context.Context, e *env, args []string) error {
	fs := cliflag.New(e.stderr, "compare", helpText("compare"))
	storePath := cliflag.Store(fs)
	asJSON := fs.Bool("json", false, "print the comparison as JSON")
	if done, err := cliflag.Parse(e.stdout, fs, args); done {
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
	runs, _, err := loadRuns(*storePath, ids)
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
