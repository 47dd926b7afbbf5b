package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/result"
)

// Caveat is a preflight warning that the machine of one or more of the
// report's runs carried when it was measured: a setting that distorts
// the figures it names.
type Caveat struct {
	Setting string             `json:"setting"`
	Effect  string             `json:"effect"`
	Fix     string             `json:"fix"`
	Affects []preflight.Figure `json:"affects"`
	Runs    []int64            `json:"runs"` // the runs whose preflight warned
}

// sectionFigures is, per report section of its own, the figures it
// shows, so that a caveat is printed beside every figure it affects; a
// workload's section names its own (HTMLSection.Shows).
var sectionFigures = map[string][]preflight.Figure{
	"memory":      {preflight.Latency, preflight.Bandwidth, preflight.NUMA},
	AnchorOLTP:    {preflight.OLTP, preflight.Scaling, preflight.NUMA},
	AnchorQueries: {preflight.Queries, preflight.Scaling},
	AnchorModel:   {preflight.Latency, preflight.OLTP},
}

// caveats gathers the preflight warnings stored with runs, one per
// setting, naming the runs that carried it. Runs stored before numalab
// read a preflight have none.
func caveats(runs []*result.Run) ([]Caveat, error) {
	var out []Caveat
	for _, run := range runs {
		pf, err := preflight.Kind.Last(run)
		if err != nil {
			return nil, err
		}
		if pf == nil {
			continue
		}
		for _, w := range pf.Warnings {
			i := slices.IndexFunc(out, func(c Caveat) bool { return c.Setting == w.Setting })
			if i < 0 {
				out = append(out, Caveat{Setting: w.Setting, Effect: w.Effect, Fix: w.Fix, Affects: w.Affects})
				i = len(out) - 1
			}
			out[i].Runs = append(out[i].Runs, run.ID)
		}
	}
	for i := range out {
		slices.Sort(out[i].Runs)
	}
	return out, nil
}

// caveatNotes are the caveats that affect any of figs, as sentences.
func caveatNotes(cs []Caveat, figs []preflight.Figure) []string {
	var out []string
	for _, c := range cs {
		if slices.ContainsFunc(c.Affects, func(f preflight.Figure) bool { return slices.Contains(figs, f) }) {
			out = append(out, c.String())
		}
	}
	return out
}

// String is "Preflight warning (runs 3, 4): governor powersave: effect; fix".
func (c Caveat) String() string {
	runs := "run"
	if len(c.Runs) > 1 {
		runs = "runs"
	}
	return fmt.Sprintf("Preflight warning (%s %s): %s: %s; %s", runs, joinIDs(c.Runs), c.Setting, c.Effect, c.Fix)
}

// affectsText is "memory latency, tpcc-ro tps".
func (c Caveat) affectsText() string {
	var s []string
	for _, f := range c.Affects {
		s = append(s, string(f))
	}
	return strings.Join(s, ", ")
}
