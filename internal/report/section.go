package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/numalab/numalab/internal/calibrated"
	"github.com/numalab/numalab/internal/result"
)

// Section is what a workload hands the report for its runs: its part of
// each output. The report builds its own sections (the machine, memory,
// OLTP, reporting queries, storage, the model, which server) and places
// every workload's section among them; it never names a workload.
//
// A Section's value is also its JSON: its fields, with their JSON keys
// ("null", "tpch", ...), stand in the report's top level after the
// model's, in the order the workloads registered. It must marshal into a
// JSON object.
type Section interface {
	// HTML is its sections of the HTML report, drawn with the report's
	// helpers (Table, Chart, Bars, FmtF, ...).
	HTML(r *Report) []HTMLSection
	// Text writes its part of the terminal report, its heading included.
	Text(b *strings.Builder, r *Report)
	// CSV writes its charted numbers, one row per figure (CSVHeader).
	CSV(row CSVRow)
	// Findings adds its plain-language sentences: add for those that
	// answer (they follow the report's own), detail for the details that
	// follow every answer.
	Findings(r *Report, add, detail Say)
}

// CSVRow writes one row of the CSV (CSVHeader's columns); lo and hi are
// the spread's bounds, nil when there is none, and repeats 0 when not
// counted.
type CSVRow func(section string, run int64, series, xName string, x float64, yName string, y float64, unit string,
	lo, hi *float64, repeats int)

// Say adds a finding: the anchor of the table or chart behind it, and
// its sentence.
type Say func(anchor, format string, a ...any)

// Workload is how a workload hands the report its section: the run kinds
// whose runs it shows and how it builds the section from them. A workload
// package says it once (Register), and the one list of workloads
// (internal/workloads) registers them, in the order of their sections.
type Workload struct {
	// Kinds are the run kinds whose runs it shows.
	Kinds []string
	// Default: its kinds are among those a report takes when no run is
	// named (Kinds); otherwise only a named run of them is shown.
	Default bool
	// BesideOLTP puts the section right after the OLTP section, whose
	// figures it explains; otherwise it follows the report's measurement
	// sections (after "Which server" in HTML, after storage in the text
	// and CSV).
	BesideOLTP bool
	// Variant tells apart runs of its kinds a report shows several of
	// ("on postgres"); two runs of one variant are refused. Nil: one run
	// of each kind.
	Variant func(run *result.Run) string
	// Absent says what would fill the section when none of its runs were
	// given, once the report's own sections are built; nil (or a nil
	// answer) when its absence goes unsaid.
	Absent func(r *Report) *Absent
	// Build makes the section from its runs, in the order given (none when
	// only its absence is reported), once the report's own sections are
	// built. It returns nil when there is nothing to show.
	Build func(r *Report, runs []*result.Run) (Section, error)
	// Figures, when set, are the figures of one of its runs that 'numalab
	// compare' sets against another run of the same kind.
	Figures func(run *result.Run) ([]Figure, error)
	// Complete, when set, adds what only the workload knows to the
	// report's own sections, from all the runs, before the workloads'
	// sections are built: the OLTP run's warehouses as its load found
	// them, the reporting queries' estimated speedup.
	Complete func(r *Report, runs []*result.Run) error
}

// workloads are the registered workloads, in the order of their sections.
var workloads []Workload

// Register hands the report a workload's section. It is called once per
// workload, at init, by internal/workloads; a kind registered twice is a
// programming error.
func Register(w Workload) {
	for _, k := range w.Kinds {
		if slices.Contains(coreKinds, k) || registered(k) != nil {
			panic("report: run kind " + k + " registered twice")
		}
	}
	workloads = append(workloads, w)
}

// registered is the workload that shows runs of kind; nil when none.
func registered(kind string) *Workload {
	for i := range workloads {
		if slices.Contains(workloads[i].Kinds, kind) {
			return &workloads[i]
		}
	}
	return nil
}

// coreKinds are the run kinds the report's own sections show, in their
// order: Kinds puts the workloads' among them.
var coreKinds = []string{result.RunProbeMem, result.RunOLTP, result.RunQueries, result.RunProbeIO, calibrated.RunFit}

// Kinds lists the run kinds a report takes when no run is named, in the
// order of its sections: its own and the registered workloads' (those
// beside the OLTP section after it, the others before the model's fit).
func Kinds() []string {
	var beside, after []string
	for _, w := range workloads {
		if !w.Default {
			continue
		}
		if w.BesideOLTP {
			beside = append(beside, w.Kinds...)
		} else {
			after = append(after, w.Kinds...)
		}
	}
	var out []string
	for _, k := range coreKinds {
		if k == calibrated.RunFit {
			out = append(out, after...)
		}
		out = append(out, k)
		if k == result.RunOLTP {
			out = append(out, beside...)
		}
	}
	return out
}

// shown is a built workload section with its placement.
type shown struct {
	Section
	beside bool
}

// Shown are the workloads' sections the report shows, in order.
func (r *Report) Shown() []Section {
	var out []Section
	for _, s := range r.sections {
		out = append(out, s.Section)
	}
	return out
}

// placed are the workloads' sections beside the OLTP section (beside) or
// after the measurement sections.
func (r *Report) placed(beside bool) []Section {
	var out []Section
	for _, s := range r.sections {
		if s.beside == beside {
			out = append(out, s.Section)
		}
	}
	return out
}

// buildSections builds each registered workload's section from its runs.
func buildSections(r *Report, runs []*result.Run) error {
	for _, w := range workloads {
		if w.Complete != nil {
			if err := w.Complete(r, runs); err != nil {
				return err
			}
		}
	}
	for _, w := range workloads {
		var mine []*result.Run
		for _, run := range runs {
			if slices.Contains(w.Kinds, run.Kind) {
				mine = append(mine, run)
			}
		}
		if len(mine) == 0 && !slices.ContainsFunc(r.Absent, func(a Absent) bool { return slices.Contains(w.Kinds, a.Kind) }) {
			continue
		}
		s, err := w.Build(r, mine)
		if err != nil {
			return err
		}
		if s != nil {
			r.sections = append(r.sections, shown{s, w.BesideOLTP})
		}
	}
	return nil
}

// MarshalJSON writes the report's own fields and, before its findings,
// each workload section's fields, so that their keys stay where they
// were ("null", "tpch", ...).
func (r Report) MarshalJSON() ([]byte, error) {
	type own Report // without this method
	head, err := members(own(r))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	write := func(ms []member) {
		for _, m := range ms {
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			b.Write(m.key)
			b.WriteByte(':')
			b.Write(m.value)
		}
	}
	for i, m := range head {
		if string(m.key) == `"findings"` {
			for _, s := range r.sections {
				ms, err := members(s.Section)
				if err != nil {
					return nil, err
				}
				write(ms)
			}
		}
		write(head[i : i+1])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// member is one key and value of a JSON object, as encoded.
type member struct{ key, value json.RawMessage }

// members encodes v, which must encode as an object, and splits it into
// its members in order.
func members(v any) ([]member, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("encoding %T: not a JSON object", v)
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		out = append(out, member{key, value})
	}
	return out, nil
}

// SectionOf is the report's workload section of type T, or T's zero
// value (nil) when the report (or r) shows none.
func SectionOf[T Section](r *Report) T {
	var zero T
	if r == nil {
		return zero
	}
	for _, s := range r.sections {
		if t, ok := s.Section.(T); ok {
			return t
		}
	}
	return zero
}
