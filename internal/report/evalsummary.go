package report

// eval's summary: what 'numalab eval' prints when its steps are done.

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/numalab/numalab/internal/calibrated"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sentinel"
)

// StepRun is one step of a composed run ('numalab eval') as its summary
// lists it: its title, the run it stored (nil: none) and how it ended.
type StepRun struct {
	Title string
	Run   *result.Run
	Err   error // why it failed, or was left out (Skipped) or cut (Cut)
	// Skipped: left out, not failed (no server binaries, no room in the
	// budget).
	Skipped bool
	// Cut says where a deadline cut the step, what it measured stored:
	// "at the budget's end", "at its share of the budget"; "" not cut.
	Cut string
}

// WriteSummary is what eval prints when its steps are done, took after
// it started: what the text report opens with (the decision card's
// sentence, then r's findings), what the decision rests on, the model's
// fit with its residuals and held-out prediction, the speed sentinel's series sent judged at tol (and
// whether it held around fitStep, the step whose cells the model is
// fitted to when no page-size fit is), and each step's run (WriteStepRuns).
func WriteSummary(w io.Writer, r *Report, steps []StepRun, sent *sentinel.Series, tol float64, fitStep string,
	took time.Duration) error {
	verdict := sent.Check(tol)
	fmt.Fprintf(w, "== findings (%v in all)\n  The answer: %s\n", took.Round(time.Second), cardText(r))
	if err := WriteFindings(w, r, 0); err != nil {
		return err
	}
	if md := r.Model; md != nil && len(md.Table.Rows) > 0 {
		fmt.Fprintln(w, "\n== which server (what the decision rests on)")
		if line := DecisionLine(r); line != "" {
			fmt.Fprintln(w, "  "+line)
		}
		p := Purchase(r)
		if p != nil && p.Decision == "" && p.Decider != "" {
			fmt.Fprintln(w, "  the measurement that would decide: "+p.Decider)
		}
		fmt.Fprintln(w, "  it rests on: "+md.Derived())
		if md.SMTMeasured {
			fmt.Fprintf(w, "  SMT gain %s, %s\n", strconv.FormatFloat(md.SMT.Value, 'g', 3, 64), md.SMT.Source)
		} else {
			fmt.Fprintf(w, "  SMT gain %s, assumed: the published band is %s to %s (%s; docs/model.md); a run with "+
				"smt=on and smt=off cells measures it\n",
				strconv.FormatFloat(md.SMT.Value, 'g', 3, 64), strconv.FormatFloat(md.SMT.Low, 'g', 3, 64),
				strconv.FormatFloat(md.SMT.High, 'g', 3, 64), md.SMT.Source)
		}
		if md.FitRun == 0 {
			if off := offSpeed(sent, verdict, fitStep); off != "" {
				fmt.Fprintln(w, "  "+off)
			}
		}
		// The decision's assumptions: the model's, and the purchase's
		// own (the licence price per core).
		assumed := md.Assumptions
		if p != nil {
			assumed = p.Assumptions
		}
		for _, a := range assumed {
			// The SMT gain has its line above.
			if a.Basis == calibrated.Assumed && a.Name != calibrated.AssumeSMT {
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
		if md.Measured != nil && len(md.Measured.HeldOut) == 0 {
			fmt.Fprintln(w, "  no held-out prediction from the page-size fit: it gave none (its note above says why)")
		}
		if md.HeldOut == nil && md.Other == nil {
			fmt.Fprintln(w, "  no held-out prediction of the OLTP run's cells: it has neither remote-data cells nor "+
				"pairs of neighbour and control cells (numalab run oltp --neighbour)")
		}
	}
	fmt.Fprintln(w, "\n== "+verdict.String(sent))
	fmt.Fprintln(w, "\n== runs (numalab runs show ID: each with the command that runs it again)")
	WriteStepRuns(w, steps, r)
	return nil
}

// WriteStepRuns lists each step's run with its headline, the TPC-H step's
// speedups, and the steps that stored none.
func WriteStepRuns(w io.Writer, steps []StepRun, r *Report) {
	for _, s := range steps {
		run := s.Run
		switch {
		case s.Cut != "" && run != nil:
			fmt.Fprintf(w, "  %s: run %d (%s): %s; cut %s\n", s.Title, run.ID, run.Status, run.Headline, s.Cut)
		case s.Skipped && run != nil:
			fmt.Fprintf(w, "  %s: skipped: %v (run %d stored, %s)\n", s.Title, s.Err, run.ID, run.Status)
		case s.Skipped:
			fmt.Fprintf(w, "  %s: skipped: %v\n", s.Title, s.Err)
		case s.Err != nil && run == nil:
			fmt.Fprintf(w, "  %s: failed: %v\n", s.Title, s.Err)
		case s.Err != nil:
			fmt.Fprintf(w, "  %s: failed: %v (run %d, %s: what it measured is in the report)\n", s.Title,
				s.Err, run.ID, run.Status)
		case run == nil:
			fmt.Fprintf(w, "  %s: no run stored\n", s.Title)
		default:
			fmt.Fprintf(w, "  %s: run %d (%s): %s\n", s.Title, run.ID, run.Status, run.Headline)
		}
		if run == nil {
			continue
		}
		for _, sec := range r.sections {
			if rl, ok := sec.Section.(RunLiner); ok {
				for _, l := range rl.RunLines(run.ID) {
					fmt.Fprintln(w, "    "+l)
				}
			}
		}
	}
}

// RunLiner is a workload's section with lines of its own under one of its
// runs in a composed run's summary (TPC-H's speedups under its step's
// run); none for a run it does not show.
type RunLiner interface {
	RunLines(run int64) []string
}

// offSpeed says, when the sentinel's verdict v on series s has a sample
// off next to the step of that title, that the model's fit came from
// cells taken while the machine was not at its usual speed; "" when it
// held.
func offSpeed(s *sentinel.Series, v sentinel.Verdict, title string) string {
	for i, sm := range s.Samples {
		if sm.Label != "before "+title || i+1 >= len(s.Samples) {
			continue
		}
		if v.Between(i, i+1) {
			return fmt.Sprintf("the speed sentinel read more than %.0f%% off its median next to the %s step, whose "+
				"cells the model is fitted to: the fit is not to be trusted (run eval again)", 100*v.Tolerance, title)
		}
		return fmt.Sprintf(
			"the speed sentinel held within %.0f%% of its median around the %s step, whose cells the model is fitted to",
			100*v.Tolerance, title)
	}
	return ""
}
