package inspect

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/units"
)

// WriteJSON writes the inspection as indented JSON.
func WriteJSON(w io.Writer, in *result.Inspection) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(in)
}

// sizeText prints bytes as units.Bytes does, "-" if unknown.
func sizeText(b *int64) string {
	if b == nil {
		return "-"
	}
	return units.Bytes(*b).String()
}

// tableName is schema.table, or the table alone for the engine's
// unqualified schema (SQLite's main).
func tableName(in *result.Inspection, t result.TableSpace) string {
	if spec, _ := engine.Lookup(in.Engine); t.Schema == "" ||
		(spec.Inspect.Unqualified != "" && t.Schema == spec.Inspect.Unqualified) {
		return t.Name
	}
	return t.Schema + "." + t.Name
}

// rowsText prints a row count, "~" before an estimate.
func rowsText(t result.TableSpace) string {
	if t.RowsExact {
		return strconv.FormatInt(t.Rows, 10)
	}
	return "~" + strconv.FormatInt(t.Rows, 10)
}

// keyText prints an index's key columns, " DESC" after descending ones.
func keyText(ix result.IndexSpace) string {
	cols := make([]string, len(ix.Columns))
	for i, c := range ix.Columns {
		cols[i] = c.Name
		if c.Desc {
			cols[i] += " DESC"
		}
	}
	return strings.Join(cols, ", ")
}

func kindText(ix result.IndexSpace) string {
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

func timeText(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// WriteText prints the tables (largest first), the indexes and the
// notes.
func WriteText(w io.Writer, in *result.Inspection) {
	fmt.Fprintf(w, "%s database %s", in.Engine, in.Database)
	if in.Version != "" {
		fmt.Fprintf(w, " (%s %s)", in.Engine, in.Version)
	}
	total := in.TotalBytes
	fmt.Fprintf(w, ": %s", sizeText(&total))
	if in.PageSize > 0 {
		ps := in.PageSize
		fmt.Fprintf(w, " in %s pages", sizeText(&ps))
	}
	if in.FreeBytes != nil {
		fmt.Fprintf(w, ", %s free", sizeText(in.FreeBytes))
	}
	fmt.Fprintln(w)
	spec, _ := engine.Lookup(in.Engine)
	usage := spec.Inspect.Usage
	if usage {
		fmt.Fprintf(w, "usage counters since %s (statistics reset), read at %s\n", timeText(in.StatsSince),
			timeText(in.StatsAsOf))
	}
	if len(in.Tables) == 0 {
		fmt.Fprintln(w, "\nno tables")
	}

	if len(in.Tables) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		wide := len("TABLE")
		for _, t := range in.Tables {
			wide = max(wide, len(tableName(in, t)))
		}
		head := fmt.Sprintf("%-*s\tROWS\tRESERVED\tDATA\tINDEX\tUNUSED\tBYTES/ROW\tINDEXES\t", wide, "TABLE")
		if usage {
			head += "LAST ANALYZE\t"
		}
		fmt.Fprintln(tw, head)
		for _, t := range in.Tables {
			res, data := t.Reserved, t.Data
			per := "-"
			if t.RowBytes != nil {
				per = fmt.Sprintf("%.1f", *t.RowBytes)
			}
			line := fmt.Sprintf("%-*s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t", wide, tableName(in, t), rowsText(t),
				sizeText(&res), sizeText(&data), sizeText(t.Index), sizeText(t.Unused), per, t.IndexCount)
			if usage {
				last := t.LastAnalyze
				if t.LastAutoanalyze != nil && (last == nil || t.LastAutoanalyze.After(*last)) {
					last = t.LastAutoanalyze
				}
				line += timeText(last) + "\t"
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
		if usage {
			head += "\tSCANS\tTUP READ\tTUP FETCH\tLAST SCAN"
		}
		fmt.Fprintln(tw, head)
		for _, t := range in.Tables {
			for _, ix := range t.Indexes {
				size := sizeText(ix.Bytes)
				if ix.Clustered {
					size = "(table)"
				}
				entries := "-"
				if ix.Entries != nil {
					entries = strconv.FormatInt(*ix.Entries, 10)
				}
				line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", ix.Name, tableName(in, t), keyText(ix),
					orDash(strings.Join(ix.Include, ", ")), kindText(ix), orDash(ix.Where), size, entries)
				if usage {
					if u := ix.Usage; u != nil {
						last := "-"
						if u.LastScan != nil {
							last = timeText(u.LastScan)
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

// WriteCSV writes one row per table and one per index; byte counts
// are plain bytes, unknown values empty.
func WriteCSV(w io.Writer, in *result.Inspection) error {
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
		cw.Write([]string{"table", in.Engine, t.Schema, t.Name, "", strconv.FormatInt(t.Rows, 10),
			strconv.FormatBool(t.RowsExact),
			strconv.FormatInt(t.Reserved, 10), strconv.FormatInt(t.Data, 10), num(t.Index), num(t.Unused), per,
			strconv.Itoa(t.IndexCount), "", "", "", "", "", "", "", "", "", ""})
		for _, ix := range t.Indexes {
			var scans, read, fetch string
			if u := ix.Usage; u != nil {
				scans, read, fetch = strconv.FormatInt(u.Scans, 10), strconv.FormatInt(u.TupRead, 10),
					strconv.FormatInt(u.TupFetch, 10)
			}
			cw.Write([]string{"index", in.Engine, t.Schema, t.Name, ix.Name, "", "", "", "", num(ix.Bytes), "", "", "",
				keyText(ix), strings.Join(ix.Include, ", "), strconv.FormatBool(ix.Unique), strconv.FormatBool(ix.Primary),
				strconv.FormatBool(ix.Clustered), ix.Where, num(ix.Entries), scans, read, fetch})
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	return nil
}
