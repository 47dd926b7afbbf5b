// Command numalab measures what the hardware does to a database: memory
// latency, NUMA placement, SMT, core count and parallelism, on SQLite,
// DuckDB and PostgreSQL, and models machines you do not have.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/store"
)

func main() {
	// A writer waiting for another's lock on the store says so on stderr.
	store.Waiting = func(l string) { fmt.Fprintln(os.Stderr, "numalab: "+l) }
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, cliflag.ErrUsage) {
		fmt.Fprintf(os.Stderr, "numalab: %v\n", err)
	}
	if err != nil {
		os.Exit(exitCode(err))
	}
}
