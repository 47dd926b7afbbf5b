package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/inspect"
)

func cmdInspect(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "inspect", helpText("inspect"))
	eng := fs.String("engine", "", "sqlite, duckdb or postgres (default: from the --db file's first bytes; postgres with --dsn)")
	dbPath := fs.String("db", "", "the database file (SQLite or DuckDB)")
	dsn := fs.String("dsn", "", "the PostgreSQL database: postgres://user:password@host:port/dbname or \"host=... dbname=...\"")
	schema := fs.String("schema", "", "PostgreSQL: only this schema (default: every schema but the system's)")
	exact := fs.Bool("exact-rows", false, "count rows with count(*) where the engine would give an estimate")
	asJSON := fs.Bool("json", false, "print JSON")
	asCSV := fs.Bool("csv", false, "print CSV: one row per table and one per index")
	if done, err := parseNoArgs(e, fs, args); done {
		return err
	}
	var bad []string
	switch {
	case *dbPath == "" && *dsn == "":
		bad = append(bad, "give --db FILE (SQLite, DuckDB) or --dsn DSN (PostgreSQL)")
	case *dbPath != "" && *dsn != "":
		bad = append(bad, "-db and -dsn: give one database, not both")
	}
	switch *eng {
	case "":
	case "sqlite", "duckdb":
		if *dsn != "" {
			bad = append(bad, fmt.Sprintf("-engine %s reads a file: give --db FILE, not --dsn", *eng))
		}
		if err := checkFileEngine(*eng, *dbPath); err != nil {
			bad = append(bad, err.Error())
		}
	case "postgres":
		if *dbPath != "" {
			bad = append(bad, "-engine postgres reads a server: give --dsn DSN, not --db")
		}
	default:
		bad = append(bad, badFlag("engine", *eng, "is not an engine (want sqlite, duckdb or postgres)").Error())
	}
	if *schema != "" && *dbPath != "" {
		bad = append(bad, "-schema: only PostgreSQL has schemas to choose from")
	}
	if *asJSON && *asCSV {
		bad = append(bad, "-json and -csv: choose one output format")
	}
	if len(bad) > 0 {
		return fmt.Errorf("inspect: %s", strings.Join(bad, "; "))
	}

	in, err := inspect.Database(ctx, inspect.Target{Engine: *eng, Path: *dbPath, DSN: *dsn}, inspect.Options{Schema: *schema, ExactRows: *exact})
	if err != nil {
		return err
	}
	switch {
	case *asJSON:
		return inspect.WriteJSON(e.stdout, in)
	case *asCSV:
		return inspect.WriteCSV(e.stdout, in)
	}
	inspect.WriteText(e.stdout, in)
	return nil
}
