package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/cliflag"
)

func cmdRun(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprint(e.stdout, helpText("run"))
			return nil
		}
		fmt.Fprint(e.stderr, helpText("run"))
		return cliflag.ErrUsage
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
	fmt.Fprint(e.stderr, helpText("run"))
	return cliflag.ErrUsage
}
