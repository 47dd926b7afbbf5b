package report

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/numalab/numalab/internal/result"
)

// ErrMixed is wrapped by CheckMixed when runs come from different machines
// or numalab versions.
var ErrMixed = errors.New("runs from different machines or numalab versions")

// machineOf names the machine a run was measured on: its host, CPU model
// and logical CPU count, as recorded with the run.
func machineOf(r *result.Run) string {
	if r.Machine == nil {
		return r.Host
	}
	return fmt.Sprintf("%s (%s, %d CPUs)", r.Host, r.Machine.CPUModel, len(r.Machine.CPUs))
}

// CheckMixed refuses runs measured on different machines or by different
// numalab versions: their figures do not belong in one report, and the
// model would combine them as if one machine measured them all.
func CheckMixed(runs []*result.Run) error {
	var problems []string
	for _, f := range []struct {
		what string
		of   func(*result.Run) string
	}{{"machines", machineOf}, {"numalab versions", func(r *result.Run) string { return r.Version }}} {
		by := map[string][]int64{}
		for _, r := range runs {
			by[f.of(r)] = append(by[f.of(r)], r.ID)
		}
		if len(by) < 2 {
			continue
		}
		var parts []string
		for _, k := range sortedKeys(by) {
			parts = append(parts, fmt.Sprintf("%s (runs %s)", k, joinIDs(by[k])))
		}
		problems = append(problems, f.what+" "+strings.Join(parts, ", "))
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s (choose runs of one machine and version, or give --allow-mixed to combine them anyway)",
		ErrMixed, strings.Join(problems, "; "))
}

// NewerRuns says, for each run used, which later complete run of the same
// kind (and for null and insert runs the same engine and method) on the
// same host the store also holds, and the report does not use: a report
// of the used runs is not the machine's latest measurement, and one of the
// newer runs would change its figures (and refit the model, for a probe or
// an OLTP run). all is the store's listing.
func NewerRuns(used []*result.Run, all []result.Run) []string {
	var out []string
	for _, u := range used {
		var newer []int64
		for _, r := range all {
			if r.Kind == u.Kind && r.Host == u.Host && r.ID > u.ID && r.Status == result.StatusComplete &&
				variant(&r) == variant(u) && !slices.ContainsFunc(used, func(x *result.Run) bool { return x.ID == r.ID }) {
				newer = append(newer, r.ID)
			}
		}
		if len(newer) == 0 {
			continue
		}
		sort.Slice(newer, func(i, j int) bool { return newer[i] < newer[j] })
		out = append(out,
			fmt.Sprintf("run %d (%s) is used, but the store holds newer complete %s runs of %s: %s (name them to use one)",
				u.ID, u.Kind, u.Kind, u.Host, joinIDs(newer)))
	}
	return out
}

// modelNote says which runs the model was calibrated to.
func modelNote(md *Model) string {
	s := fmt.Sprintf("the model is calibrated to memory probe run %d", md.ProbeRun)
	if md.OLTPRun > 0 {
		s += fmt.Sprintf(" and fitted to %s %d", md.OLTPRunLabel(), md.OLTPRun)
	} else {
		s += " with no OLTP run fitted"
	}
	return s
}
