package main

import (
	"context"
	"errors"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/inspect"
)

func cmdInspect(ctx context.Context, e *env, args []string) error {
	fs := cliflag.New(e.stderr, "inspect", helpText("inspect"))
	db := cliflag.AddDB(fs, "", "the database file (SQLite or DuckDB)", "the PostgreSQL database: postgres://user:password@host:port/dbname or \"host=... dbname=...\"; with --engine mariadb a MariaDB or MySQL server: user:password@unix(/path/to/socket)/ or user:password@tcp(host:port)/")
	schema := fs.String("schema", "", "PostgreSQL: only this schema; MariaDB: only this database (default: every one but the system's)")
	exact := fs.Bool("exact-rows", false, "count rows with count(*) where the engine would give an estimate")
	asJSON := fs.Bool("json", false, "print JSON")
	asCSV := fs.Bool("csv", false, "print CSV: one row per table and one per index")
	timeout := cliflag.ConnectTimeout(fs)
	if done, err := cliflag.ParseNoArgs(e.stdout, fs, args); done {
		return err
	}
	name, bad := db.Resolve()
	if *schema != "" && *db.Path != "" {
		bad = append(bad, errors.New("-schema: only PostgreSQL has schemas to choose from"))
	}
	if *asJSON && *asCSV {
		bad = append(bad, errors.New("-json and -csv: choose one output format"))
	}
	if err := errors.Join(bad...); err != nil {
		return err
	}

	in, err := inspect.Database(ctx, inspect.Target{Engine: name, Path: *db.Path, DSN: *db.DSN}, inspect.Options{Schema: *schema, ExactRows: *exact, ConnectTimeout: *timeout})
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
