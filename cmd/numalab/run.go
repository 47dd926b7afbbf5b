package main

import "context"

// cmdRun runs a workload sweep: run oltp, report, insert, null or tpch.
func cmdRun(ctx context.Context, e *env, args []string) error {
	return subcommands(ctx, e, args, "run", "workload", []command{
		{"oltp", "", runOLTP}, {"report", "", runReport}, {"insert", "", runInsert}, {"null", "", runNull}, {"tpch", "", runTPCH}, {"pages", "", runPages}})
}
