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

// AnchorPreflight is the box of preflight warnings, each shown once.
const AnchorPreflight = "preflight"

// sectionFigures is, per report section of its own, the figures it
// shows, so that a section links to every caveat that affects them; a
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

// affects says whether the caveat affects any of figs.
func (c Caveat) affects(figs []preflight.Figure) bool {
	return slices.ContainsFunc(c.Affects, func(f preflight.Figure) bool { return slices.Contains(figs, f) })
}

// warningView is one preflight warning in the HTML report's box: its
// sentence, what it affects, and the sections that show those figures.
type warningView struct {
	Text, Affects string
	Sections      []sectionLink
}

// sectionLink is a link to a section of the report.
type sectionLink struct{ ID, Title string }

// warningViews puts each caveat once in the box, with links to the
// sections whose figures it affects, and has each of those sections name
// it (HTMLSection.Warned) instead of repeating it.
func warningViews(cs []Caveat, secs []HTMLSection) []warningView {
	var out []warningView
	for _, c := range cs {
		w := warningView{Text: c.line(), Affects: c.affectsText()}
		for i := range secs {
			s := &secs[i]
			if s.Absent == "" && c.affects(append(slices.Clone(sectionFigures[s.ID]), s.Shows...)) {
				w.Sections = append(w.Sections, sectionLink{s.ID, s.Title})
				s.Warned = append(s.Warned, c.Setting)
			}
		}
		out = append(out, w)
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

// line is "governor powersave (runs 3, 4): effect; fix".
func (c Caveat) line() string {
	runs := "run"
	if len(c.Runs) > 1 {
		runs = "runs"
	}
	return fmt.Sprintf("%s (%s %s): %s; %s", c.Setting, runs, joinIDs(c.Runs), c.Effect, c.Fix)
}

// affectsText is "memory latency, tpcc-ro tps".
func (c Caveat) affectsText() string {
	var s []string
	for _, f := range c.Affects {
		s = append(s, string(f))
	}
	return strings.Join(s, ", ")
}
