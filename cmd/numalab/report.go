package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/numalab/numalab/internal/assess"
	"io"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/outfile"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	_ "github.com/numalab/numalab/internal/workloads" // the workloads' report sections (report, compare)
)

func cmdReport(_ context.Context, e *env, args []string) error {
	fs := cliflag.New(e.stderr, "report", helpText("report"))
	storePath := cliflag.Store(fs)
	out := fs.String("out", "numalab-report.html", "`file` the HTML report is written to (other formats: stdout unless given)")
	format := fs.String("format", "html", "output format: html, text, json or csv")
	force := fs.Bool("force", false, "let --out replace a file numalab did not write (never a database or the store)")
	allowMixed := fs.Bool("allow-mixed", false, "combine runs from different machines or numalab versions in one report")
	if done, err := cliflag.Parse(e.stdout, fs, args); done {
		return err
	}
	var errs []error
	switch *format {
	case "html", "text", "json", "csv":
	default:
		errs = append(errs, cliflag.Bad("format", *format, "is not a format: want html, text, json or csv"))
	}
	ids, err := runIDs("report", fs.Args())
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	runs, newer, err := loadRuns(*storePath, ids)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if !*allowMixed {
		if err := report.CheckMixed(runs); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	in, err := assess.Runs("", runs)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	r, err := report.Build(runs, in)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for _, w := range newer {
		fmt.Fprintf(e.stderr, "numalab report: warning: %s\n", w)
		r.Notes = append(r.Notes, w)
	}
	write := map[string]func(io.Writer, *report.Report) error{
		"html": report.WriteHTML, "text": report.WriteText, "json": report.WriteJSON, "csv": report.WriteCSV,
	}[*format]
	if *format != "html" && !cliflag.Given(fs, "out") {
		return write(e.stdout, r)
	}
	kind := map[string]outfile.Kind{
		"html": outfile.HTMLReport, "text": outfile.TextReport, "json": outfile.JSONReport, "csv": outfile.CSVReport,
	}[*format]
	opt := outfile.Options{Flag: "out", Force: *force, Keep: []string{*storePath}}
	if err := outfile.Write(*out, kind, opt, func(w io.Writer) error { return write(w, r) }); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprintln(e.stdout, *out)
	return nil
}

// runIDs parses run ids given as arguments.
func runIDs(cmd string, args []string) ([]int64, error) {
	var ids []int64
	for _, a := range args {
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id <= 0 {
			return nil, fmt.Errorf("%s: %q is not a run id (want a positive number; 'numalab runs' lists them; flags go before run ids)", cmd, a)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// loadRuns reads the given runs, or with none the latest run of each kind
// the report shows (complete or interrupted ones first), and says which of
// them the store holds newer complete runs of (report.NewerRuns).
func loadRuns(storePath string, ids []int64) (runs []*result.Run, newer []string, err error) {
	st, err := store.OpenToRead(storePath)
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	if runs, err = st.GetRuns(ids, report.Kinds()); err != nil {
		return nil, nil, err
	}
	if len(runs) == 0 {
		return nil, nil, fmt.Errorf("store %s has no runs yet of a kind the report shows (%s): measure first (numalab probe mem --quick, numalab run oltp, or numalab eval); 'numalab runs' lists what it has",
			result.Redact(storePath), strings.Join(report.Kinds(), ", "))
	}
	all, err := st.List()
	return runs, report.NewerRuns(runs, all), err
}
