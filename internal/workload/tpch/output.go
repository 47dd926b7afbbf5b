package tpch

import (
	"errors"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/dop"
	"github.com/numalab/numalab/internal/result"
)

// Output is a tpch run's answer, what 'numalab run tpch --json' prints:
// the measured cells, their analysis and, on PostgreSQL, the storage
// advice.
type Output struct {
	Cells    []*Cell  `json:"cells"`
	Analysis Analysis `json:"analysis"`
	Storage  []string `json:"storage,omitempty"`
}

// Conclude analyses the cells s measured on machine, with the DOP rule of
// thumb from threshold (a time is turned into a cost with the run's
// fitted seconds per cost unit) and the machine's sockets and cores; on
// PostgreSQL it adds the storage advice from the server's settings and
// probe (nil: no stored storage probe).
func (s *Sweep) Conclude(measured []*Cell, machine *result.Topology, threshold dop.Threshold,
	probe *result.IORatio) Output {
	all := make([]Cell, 0, len(measured))
	for _, c := range measured {
		all = append(all, *c)
	}
	sockets := max(1, len(machine.Packages))
	spec := &RuleSpec{Threshold: threshold, CoresPerSocket: max(1, len(machine.Cores)/sockets), Sockets: sockets}
	out := Output{Cells: append([]*Cell{}, measured...), Analysis: Analyze(all, spec)}
	if s.cfg.Paced() {
		// A paced throughput cell's queries per hour are its schedule's:
		// no DOP is chosen by them.
		out.Analysis.Advice = nil
	}
	if inf := s.Info(); inf != nil && pageCosts(s.cfg.Engine) {
		out.Storage = StorageAdvice(inf.Settings, probe, out.Analysis.Cost)
	}
	return out
}

// ParseQueries parses a list of query numbers: "1-22" or "1,6,14".
func ParseQueries(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(p), "-")
		a, err := strconv.Atoi(lo)
		b := a
		if isRange && err == nil {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 1 || b > Queries || a > b {
			return nil, errors.New("is not a list of TPC-H query numbers 1 to 22: want e.g. 1-22 or 1,6,14")
		}
		for q := a; q <= b; q++ {
			out = append(out, q)
		}
	}
	return out, nil
}
