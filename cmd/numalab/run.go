package main

import (
	"context"
	"flag"

	"github.com/numalab/numalab/internal/cliflag"
)

// cmdRun runs a workload sweep: run oltp, report, insert, null, tpch, pages or sql.
func cmdRun(ctx context.Context, e *env, args []string) error {
	return subcommands(ctx, e, args, "run", "workload", []command{
		{"oltp", "", runOLTP}, {"report", "", runReport}, {"insert", "", runInsert}, {"null", "", runNull}, {"tpch", "", runTPCH}, {"pages", "", runPages},
		{"sql", "", runSQL}})
}

// runFlagSet is the flag set of run command name: the flags of its
// configuration's settings ss, then --store and --json (jsonUsage).
func runFlagSet(e *env, name string, ss cliflag.Settings, jsonUsage string) (fs *flag.FlagSet, storePath *string, asJSON *bool) {
	fs = cliflag.New(e.stderr, "run "+name, helpText("run-"+name))
	ss.Define(fs)
	return fs, cliflag.Store(fs), fs.Bool("json", false, jsonUsage)
}
