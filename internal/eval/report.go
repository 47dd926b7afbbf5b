package eval

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sentinel"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/workload/tpch"
	_ "github.com/numalab/numalab/internal/workloads" // the workloads' report sections
)

// buildReport builds the report from the runs the steps stored in the store
// at storePath (both null runs: the report shows one per engine), and
// returns them by id. A PostgreSQL step skipped for want of binaries
// stored a failed run with nothing in it: it is left out.
func buildReport(storePath string, steps []*step) (*report.Report, map[int64]*result.Run, error) {
	st, err := store.Open(storePath)
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	all := map[int64]*result.Run{}
	var runs []*result.Run
	for _, s := range steps {
		if s.id == 0 {
			continue
		}
		r, err := st.Get(s.id)
		if err != nil {
			return nil, nil, err
		}
		all[s.id] = r
		if !errors.Is(s.err, pgserver.ErrNoBinaries) {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return nil, nil, errors.New("no step stored a run: nothing to report")
	}
	r, err := report.Build(runs)
	return r, all, err
}

// writeSummary is what eval prints when its steps are done, took after
// it started: the report's findings, the lines its text and HTML open
// with (the decision first); what the decision rests on; the model's fit
// with its residuals and held-out prediction; and each step's run
// (writeRuns).
func writeSummary(w io.Writer, r *report.Report, steps []*step, runs map[int64]*result.Run, sent *sentinel.Series, took time.Duration) error {
	verdict := sent.Check(SentinelTolerance)
	fmt.Fprintf(w, "== findings (%v in all)\n", took.Round(time.Second))
	if err := report.WriteFindings(w, r, 0); err != nil {
		return err
	}
	if md := r.Model; md != nil && len(md.Table.Rows) > 0 {
		// The decision line again, heading what it rests on.
		fmt.Fprintln(w, "\n== which server (what the decision rests on)")
		if line := report.DecisionLine(r); line != "" {
			fmt.Fprintln(w, "  "+line)
		}
		if p := report.Purchase(r); p != nil && p.Decision == "" && p.Decider != "" {
			fmt.Fprintln(w, "  the measurement that would decide: "+p.Decider)
		}
		fmt.Fprintln(w, "  it rests on: "+md.Derived())
		if md.SMTMeasured {
			fmt.Fprintf(w, "  SMT gain %s, %s\n", strconv.FormatFloat(md.SMT.Value, 'g', 3, 64), md.SMT.Source)
		} else {
			fmt.Fprintf(w, "  SMT gain %s, assumed: the published band is %s to %s (docs/model.md); a run with smt=on and smt=off cells measures it\n",
				strconv.FormatFloat(md.SMT.Value, 'g', 3, 64), strconv.FormatFloat(md.SMT.Low, 'g', 3, 64), strconv.FormatFloat(md.SMT.High, 'g', 3, 64))
		}
		if md.FitRun == 0 {
			if off := offSpeed(sent, verdict, "tpcc-ro on SQLite"); off != "" {
				fmt.Fprintln(w, "  "+off)
			}
		}
		for _, a := range md.Assumptions {
			if a.Basis == calib.Assumed {
				fmt.Fprintln(w, "  assumed: "+a.String())
			}
		}
		switch {
		case md.Measured == nil:
			fmt.Fprintln(w, "  page-size points: none (the step did not run or failed), so A and M rest on the OLTP run alone")
		case md.FitRun == 0:
			fmt.Fprintln(w, "  page-size points: their cells did not fit, so A and M rest on the OLTP run alone:")
			fallthrough
		default:
			for _, l := range md.Measured.Lines() {
				fmt.Fprintln(w, "  "+l)
			}
		}
	}
	if md := r.Model; md != nil {
		fmt.Fprintln(w, "\n== model fit (residuals and held-out prediction)")
		for _, c := range md.Checks() {
			fmt.Fprintln(w, "  "+c)
		}
		switch {
		case md.HeldOut != nil:
		case md.Measured != nil && len(md.Measured.HeldOut) == 0:
			fmt.Fprintln(w, "  no held-out prediction: the page-size fit gave none (its note above says why)")
		case md.Measured == nil:
			fmt.Fprintln(w, "  no held-out prediction: the OLTP run has neither remote-data nor neighbour cells (numalab run oltp --neighbour)")
		}
	}
	fmt.Fprintln(w, "\n== "+verdict.String(sent))
	fmt.Fprintln(w, "\n== runs (numalab runs show ID: each with the command that runs it again)")
	writeRuns(w, steps, runs, r)
	return nil
}

// writeRuns lists each step's run with its headline, the TPC-H step's
// speedups, and the steps that stored none.
func writeRuns(w io.Writer, steps []*step, runs map[int64]*result.Run, r *report.Report) {
	for _, s := range steps {
		run := runs[s.id]
		switch {
		case errors.Is(s.err, errBudgetEnd) && run != nil:
			fmt.Fprintf(w, "  %s: run %d (%s): %s; cut at the budget's end\n", s.title, run.ID, run.Status, run.Headline)
		case skipped(s.err):
			fmt.Fprintf(w, "  %s: skipped: %v\n", s.title, s.err)
		case s.err != nil && run == nil:
			fmt.Fprintf(w, "  %s: failed: %v\n", s.title, s.err)
		case s.err != nil:
			fmt.Fprintf(w, "  %s: failed: %v (run %d, %s: what it measured is in the report)\n", s.title, s.err, run.ID, run.Status)
		case run == nil:
			fmt.Fprintf(w, "  %s: no run stored\n", s.title)
		default:
			fmt.Fprintf(w, "  %s: run %d (%s): %s\n", s.title, run.ID, run.Status, run.Headline)
		}
		t := report.SectionOf[*tpch.Section](r)
		if t == nil || s.id != t.Run.Run {
			continue
		}
		for _, q := range t.Run.Analysis.Queries {
			if len(q.Points) == 0 {
				continue
			}
			var sp []string
			for _, p := range q.Points {
				sp = append(sp, fmt.Sprintf("DOP %d %.2fx", p.DOP, p.Speedup))
			}
			fmt.Fprintf(w, "    %s: %.4f s at DOP %d; speedup %s (median of %d); best DOP %d\n",
				tpch.QueryName(q.Query), q.Points[0].Seconds, q.Points[0].DOP, strings.Join(sp, ", "), q.Points[0].Repeats, q.BestDOP)
		}
		fmt.Fprintf(w, "    plan changes between DOPs: %d\n", len(t.Run.Analysis.Changes))
	}
}
