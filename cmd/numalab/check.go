package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

func cmdCheck(ctx context.Context, e *env, args []string) error {
	fs := cliflag.New(e.stderr, "check", helpText("check"))
	db := cliflag.AddDB(fs, "numalab-tpcc-w1.db", "TPC-C database `file` made by numalab run oltp (SQLite or DuckDB)",
		"PostgreSQL or MariaDB (--engine mariadb) `DSN` holding a numalab TPC-C load in numalab's schema")
	timeout := cliflag.ConnectTimeout(fs)
	if done, err := cliflag.ParseNoArgs(e.stdout, fs, args); done {
		return err
	}
	name, bad := db.Resolve()
	if err := errors.Join(bad...); err != nil {
		return err
	}
	where, opt := *db.Path, engine.Options{Path: *db.Path}
	if spec, _ := engine.Lookup(name); spec.Server {
		where, opt = "the --dsn database", engine.Options{DSN: *db.DSN, ConnectTimeout: *timeout}
	}
	eng, err := engine.Open(ctx, name, opt)
	if err != nil {
		return fmt.Errorf("checking %s: %w", where, err)
	}
	defer eng.Close()
	if err := tpcc.Check(ctx, eng); err != nil {
		return fmt.Errorf("checking %s: %w", where, err)
	}
	fmt.Fprintf(e.stdout, "%s: consistent (TPC-C 3.3.2.1-3.3.2.12 and 4.3.3.1 row counts)\n", where)
	return nil
}
