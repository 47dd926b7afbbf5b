package main

import (
	"github.com/numalab/numalab/internal/dop"
	"github.com/numalab/numalab/internal/workload/null"
	"github.com/numalab/numalab/internal/workload/tpcc"
	"github.com/numalab/numalab/internal/workload/tpch"
	"github.com/numalab/numalab/internal/workload/transtats"
)

// The command lines the run commands store, by their commands' names.

func oltpArgv(c tpcc.RunConfig) []string                          { return c.Argv() }
func reportArgv(c transtats.RunConfig) []string                   { return c.Argv() }
func nullArgv(c null.RunConfig) []string                          { return c.Argv() }
func tpchArgv(c tpch.RunConfig, threshold dop.Threshold) []string { return c.Argv(threshold) }
