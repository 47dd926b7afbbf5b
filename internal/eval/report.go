package eval

import (
	"errors"
	"github.com/numalab/numalab/internal/assess"

	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	_ "github.com/numalab/numalab/internal/workloads" // the workloads' report sections
)

// buildReport builds the report from the runs the steps stored in the store
// at storePath (both null runs: the report shows one per engine), its model
// resting on engine's fit ("": the OLTP step's engine), and
// returns them by id. A PostgreSQL step skipped for want of binaries
// stored a failed run with nothing in it: it is left out.
func buildReport(storePath, engine string, steps []*step) (*report.Report, map[int64]*result.Run, error) {
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
	in, err := assess.Runs(engine, runs)
	if err != nil {
		return nil, nil, err
	}
	r, err := report.Build(runs, in)
	return r, all, err
}

// cutAt says where a step whose error is err was cut, "" if it was not.
func cutAt(err error) string {
	switch {
	case errors.Is(err, errBudgetEnd):
		return "at the budget's end"
	case errors.Is(err, errShareEnd):
		return "at its share of the budget"
	}
	return ""
}

// stepRuns are the steps as the summary lists them.
func stepRuns(steps []*step, runs map[int64]*result.Run) []report.StepRun {
	var out []report.StepRun
	for _, s := range steps {
		out = append(out,
			report.StepRun{Title: s.title, Run: runs[s.id], Err: s.err, Skipped: skipped(s.err), Cut: cutAt(s.err)})
	}
	return out
}
