package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

func cmdCheck(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "check", helpText("check"))
	name := fs.String("engine", "", "sqlite, duckdb or postgres (default: from the --db file's first bytes; postgres with --dsn)")
	db := fs.String("db", "numalab-tpcc-w1.db", "TPC-C database `file` made by numalab run oltp (SQLite or DuckDB)")
	dsn := fs.String("dsn", "", "PostgreSQL `DSN` holding a numalab TPC-C load in numalab's schema")
	if done, err := parseNoArgs(e, fs, args); done {
		return err
	}
	where := *db
	opt := engine.Options{Path: *db}
	if *dsn != "" {
		where, opt = "the --dsn database", engine.Options{DSN: *dsn}
	}
	var bad []string
	if flagGiven(fs, "db") && (*dsn != "" || *name == "postgres") {
		bad = append(bad, "-db: a file is for --engine sqlite or duckdb (PostgreSQL takes --dsn)")
	}
	switch {
	case *name == "" && *dsn != "":
		*name = "postgres"
	case *name == "":
		n, err := engine.FileEngine(*db)
		if errors.Is(err, engine.ErrUnknownFile) {
			return fmt.Errorf("checking %s: %w (give --engine)", *db, err)
		}
		if err != nil {
			return fmt.Errorf("checking %s: %w", *db, err)
		}
		*name = n
	case *name == "postgres" && *dsn == "":
		bad = append(bad, "-engine postgres checks a server: give --dsn DSN")
	case *name != "postgres" && *dsn != "":
		bad = append(bad, fmt.Sprintf("-engine %s checks a file: give --db FILE, not --dsn", *name))
	case *name == "sqlite" || *name == "duckdb":
		if err := checkFileEngine(*name, *db); err != nil {
			bad = append(bad, err.Error())
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("check: %s", strings.Join(bad, "; "))
	}
	eng, err := engine.Open(ctx, *name, opt)
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
