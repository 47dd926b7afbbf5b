package calib

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// measureSMT takes the SMT gain from the run's smt=on and smt=off cells:
// the best median tps over stream counts of smt=on (one placement on every
// thread of some cores) over that of smt=off (one thread of each of the
// same number of cores), both with the same rest of the selector
// ("node=0,data=node0,smt=on" against "node=0,data=node0,smt=off", as
// eval places them on a machine of several nodes); of several such pairs,
// the one whose smt=on is fastest.
func (m *Calibration) measureSMT(run *result.Run) error {
	if run.Machine == nil || run.Machine.ThreadsPerCore() < 2 {
		return nil
	}
	cells, err := result.KindCell.All(run)
	if err != nil {
		return err
	}
	type series struct {
		tps   map[int][]float64
		cores int
	}
	on, off := map[string]*series{}, map[string]*series{}
	var bases []string
	for _, c := range cells {
		base, smt := splitSMT(c.Placement)
		by := map[string]map[string]*series{"smt=on": on, "smt=off": off}[smt]
		if by == nil || !(c.TPS > 0) {
			continue
		}
		if by[base] == nil {
			by[base] = &series{tps: map[int][]float64{}}
			if !slices.Contains(bases, base) {
				bases = append(bases, base)
			}
		}
		by[base].tps[c.Streams] = append(by[base].tps[c.Streams], c.TPS)
		by[base].cores = c.Cores
	}
	best := func(s *series) float64 {
		var b float64
		for _, v := range s.tps {
			b = math.Max(b, stats.Median(v))
		}
		return b
	}
	var g, bestOn, bestOff float64
	var cores int
	var pair string
	for _, b := range bases {
		if on[b] == nil || off[b] == nil || on[b].cores != off[b].cores || best(on[b]) <= bestOn {
			continue
		}
		bestOn, bestOff, cores, pair = best(on[b]), best(off[b]), on[b].cores, b
		g = bestOn / bestOff
	}
	if !(g > 0) {
		return nil
	}
	where := ""
	if pair != "" {
		where = " (" + pair + ")"
	}
	m.SMT = model.Range{Value: g, Low: g, High: g, Source: fmt.Sprintf(
		"measured: %s %d's best smt=on median, %s tps, over its best smt=off median, %s tps, on %d cores%s",
		RunLabel(run.Kind), run.ID, model.Fixed(bestOn, 0), model.Fixed(bestOff, 0), cores, where)}
	m.SMTMeasured = true
	return nil
}

// splitSMT splits a selector into its smt= term and the rest:
// "node=0,data=node0,smt=on" is "node=0,data=node0" and "smt=on".
func splitSMT(sel string) (rest, smt string) {
	var keep []string
	for _, term := range strings.Split(sel, ",") {
		if strings.HasPrefix(term, "smt=") {
			smt = term
		} else {
			keep = append(keep, term)
		}
	}
	return strings.Join(keep, ","), smt
}
