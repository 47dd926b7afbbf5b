package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/numalab/numalab/internal/inspect"
	"github.com/numalab/numalab/internal/result"
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

	opt := inspect.Options{Schema: *schema, ExactRows: *exact}
	var in *result.Inspection
	var err error
	switch engine := inspectEngine(*eng, *dbPath, *dsn); engine {
	case "sqlite":
		in, err = inspect.SQLite(ctx, *dbPath, opt)
	case "duckdb":
		in, err = inspect.DuckDB(ctx, *dbPath, opt)
	case "postgres":
		in, err = inspect.Postgres(ctx, *dsn, opt)
	default:
		err = fmt.Errorf("inspecting %s: cannot tell the engine from the file's first bytes (%s)", *dbPath, engine)
	}
	if err != nil {
		return err
	}
	switch {
	case *asJSON:
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(in)
	case *asCSV:
		return writeInspectCSV(e.stdout, in)
	}
	writeInspectText(e.stdout, in)
	return nil
}

// inspectEngine is the engine to use: the flag, else postgres for a DSN,
// else what the file's first bytes say. When it cannot tell, it returns why.
func inspectEngine(flagged, path, dsn string) string {
	switch {
	case flagged != "":
		return flagged
	case dsn != "":
		return "postgres"
	}
	f, err := os.Open(path)
	if err != nil {
		// Let the SQLite reader give the error for a missing file.
		return "sqlite"
	}
	defer f.Close()
	b := make([]byte, 16)
	n, _ := io.ReadFull(f, b)
	switch {
	case n == 16 && string(b) == "SQLite format 3\x00":
		return "sqlite"
	case n >= 12 && string(b[8:12]) == "DUCK":
		return "duckdb"
	}
	return "neither SQLite nor DuckDB; give --engine to be told more"
}

// inspectBytes prints bytes with one decimal in binary units, "-" if unknown.
func inspectBytes(b *int64) string {
	if b == nil {
		return "-"
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, i := float64(*b), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", *b)
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// inspectTableName is schema.table, or the table alone for SQLite's main.
func inspectTableName(in *result.Inspection, t result.TableSpace) string {
	if t.Schema == "" || (in.Engine == "sqlite" && t.Schema == "main") {
		return t.Name
	}
	return t.Schema + "." + t.Name
}

// inspectRows prints a row count, "~" before an estimate.
func inspectRows(t result.TableSpace) string {
	if t.RowsExact {
		return strconv.FormatInt(t.Rows, 10)
	}
	return "~" + strconv.FormatInt(t.Rows, 10)
}

// inspectKey prints an index's key columns, " DESC" after descending ones.
func inspectKey(ix result.IndexSpace) string {
	cols := make([]string, len(ix.Columns))
	for i, c := range ix.Columns {
		cols[i] = c.Name
		if c.Desc {
			cols[i] += " DESC"
		}
	}
	return strings.Join(cols, ", ")
}

func inspectKind(ix result.IndexSpace) string {
	var k []string
	switch {
	case ix.Primary:
		k = append(k, "primary")
	case ix.Unique:
		k = append(k, "unique")
	}
	if ix.Clustered {
		k = append(k, "clustered")
	}
	if ix.Where != "" {
		k = append(k, "partial")
	}
	if len(k) == 0 {
		return "-"
	}
	return strings.Join(k, ",")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func inspectTime(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// writeInspectText prints the tables (largest first), the indexes and the
// notes.
func writeInspectText(w io.Writer, in *result.Inspection) {
	fmt.Fprintf(w, "%s database %s", in.Engine, in.Database)
	if in.Version != "" {
		fmt.Fprintf(w, " (%s %s)", in.Engine, in.Version)
	}
	total := in.TotalBytes
	fmt.Fprintf(w, ": %s", inspectBytes(&total))
	if in.PageSize > 0 {
		ps := in.PageSize
		fmt.Fprintf(w, " in %s pages", inspectBytes(&ps))
	}
	if in.FreeBytes != nil {
		fmt.Fprintf(w, ", %s free", inspectBytes(in.FreeBytes))
	}
	fmt.Fprintln(w)
	if in.Engine == "postgres" {
		fmt.Fprintf(w, "usage counters since %s (statistics reset), read at %s\n", inspectTime(in.StatsSince), inspectTime(in.StatsAsOf))
	}
	if len(in.Tables) == 0 {
		fmt.Fprintln(w, "\nno tables")
	}

	if len(in.Tables) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		wide := len("TABLE")
		for _, t := range in.Tables {
			wide = max(wide, len(inspectTableName(in, t)))
		}
		head := fmt.Sprintf("%-*s\tROWS\tRESERVED\tDATA\tINDEX\tUNUSED\tBYTES/ROW\tINDEXES\t", wide, "TABLE")
		if in.Engine == "postgres" {
			head += "LAST ANALYZE\t"
		}
		fmt.Fprintln(tw, head)
		for _, t := range in.Tables {
			res, data := t.Reserved, t.Data
			per := "-"
			if t.RowBytes != nil {
				per = fmt.Sprintf("%.1f", *t.RowBytes)
			}
			line := fmt.Sprintf("%-*s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t", wide, inspectTableName(in, t), inspectRows(t),
				inspectBytes(&res), inspectBytes(&data), inspectBytes(t.Index), inspectBytes(t.Unused), per, t.IndexCount)
			if in.Engine == "postgres" {
				last := t.LastAnalyze
				if t.LastAutoanalyze != nil && (last == nil || t.LastAutoanalyze.After(*last)) {
					last = t.LastAutoanalyze
				}
				line += inspectTime(last) + "\t"
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
	}

	var nix int
	for _, t := range in.Tables {
		nix += len(t.Indexes)
	}
	if nix > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		head := "INDEX\tTABLE\tKEY\tINCLUDE\tKIND\tWHERE\tSIZE\tENTRIES"
		if in.Engine == "postgres" {
			head += "\tSCANS\tTUP READ\tTUP FETCH\tLAST SCAN"
		}
		fmt.Fprintln(tw, head)
		for _, t := range in.Tables {
			for _, ix := range t.Indexes {
				size := inspectBytes(ix.Bytes)
				if ix.Clustered {
					size = "(table)"
				}
				entries := "-"
				if ix.Entries != nil {
					entries = strconv.FormatInt(*ix.Entries, 10)
				}
				line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", ix.Name, inspectTableName(in, t), inspectKey(ix),
					orDash(strings.Join(ix.Include, ", ")), inspectKind(ix), orDash(ix.Where), size, entries)
				if in.Engine == "postgres" {
					if u := ix.Usage; u != nil {
						last := "-"
						if u.LastScan != nil {
							last = inspectTime(u.LastScan)
						}
						line += fmt.Sprintf("\t%d\t%d\t%d\t%s", u.Scans, u.TupRead, u.TupFetch, last)
					} else {
						line += "\t-\t-\t-\t-"
					}
				}
				fmt.Fprintln(tw, line)
			}
		}
		tw.Flush()
	}
	if len(in.Notes) > 0 {
		fmt.Fprintln(w, "\nNotes:")
		for _, n := range in.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
}

// writeInspectCSV writes one row per table and one per index; byte counts
// are plain bytes, unknown values empty.
func writeInspectCSV(w io.Writer, in *result.Inspection) error {
	cw := csv.NewWriter(w)
	num := func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	}
	cw.Write([]string{"kind", "engine", "schema", "table", "index", "rows", "rows_exact", "reserved_bytes", "data_bytes",
		"index_bytes", "unused_bytes", "bytes_per_row", "index_count", "key", "include", "unique", "primary", "clustered",
		"where", "entries", "scans", "tuples_read", "tuples_fetched"})
	for _, t := range in.Tables {
		per := ""
		if t.RowBytes != nil {
			per = strconv.FormatFloat(*t.RowBytes, 'f', 2, 64)
		}
		cw.Write([]string{"table", in.Engine, t.Schema, t.Name, "", strconv.FormatInt(t.Rows, 10), strconv.FormatBool(t.RowsExact),
			strconv.FormatInt(t.Reserved, 10), strconv.FormatInt(t.Data, 10), num(t.Index), num(t.Unused), per,
			strconv.Itoa(t.IndexCount), "", "", "", "", "", "", "", "", "", ""})
		for _, ix := range t.Indexes {
			var scans, read, fetch string
			if u := ix.Usage; u != nil {
				scans, read, fetch = strconv.FormatInt(u.Scans, 10), strconv.FormatInt(u.TupRead, 10), strconv.FormatInt(u.TupFetch, 10)
			}
			cw.Write([]string{"index", in.Engine, t.Schema, t.Name, ix.Name, "", "", "", "", num(ix.Bytes), "", "", "",
				inspectKey(ix), strings.Join(ix.Include, ", "), strconv.FormatBool(ix.Unique), strconv.FormatBool(ix.Primary),
				strconv.FormatBool(ix.Clustered), ix.Where, num(ix.Entries), scans, read, fetch})
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	return nil
}
