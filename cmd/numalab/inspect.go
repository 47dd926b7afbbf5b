package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/inspect"
)

const inspectHelp = `Usage: numalab inspect [--engine sqlite|duckdb|postgres] (--db FILE | --dsn DSN) [--schema S] [--exact-rows] [--json | --csv]

Shows where the space goes in a database, numalab's own or any other:
per table its rows, reserved bytes (table and indexes), data, index and
unused bytes, average data bytes per row and number of indexes, largest
first; per index its key columns (DESC marked), included columns, whether
it is unique or the primary key, its WHERE clause if partial, its size and
entries, and on PostgreSQL its usage counters (scans, index entries read,
table rows fetched) with how fresh they are.

It never writes: SQLite files are opened read-only and immutable, DuckDB
files with access_mode=READ_ONLY, PostgreSQL is read inside a READ ONLY
transaction. A --db file that does not exist is refused, not created.
Without --engine, a --db file's engine is told by its first bytes and a
--dsn means PostgreSQL.

What each engine can tell differs, and the output says what is missing:
SQLite's figures come from reading every page of the file (exact rows,
exact free space inside pages); DuckDB keeps no size per index;
PostgreSQL's rows are the planner's estimate unless --exact-rows, and its
free space inside pages is not measured.

Examples:
  numalab inspect --db numalab-tpcc.db                 # an SQLite file
  numalab inspect --engine duckdb --db tpch.duckdb --exact-rows
  numalab inspect --dsn 'postgres://me@localhost/shop' --schema public
  numalab inspect --db app.db --json > space.json      # machine-readable
  numalab inspect --db app.db --csv                    # one row per table and per index
`

func cmdInspect(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "inspect", inspectHelp)
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
