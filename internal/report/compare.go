package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/calibrated"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/units"
)

// ErrKindMismatch is wrapped when two runs of different kinds are compared.
var ErrKindMismatch = errors.New("runs of different kinds")

// Comparison is two runs of the same kind, figure by figure.
type Comparison struct {
	Kind    string   `json:"kind"`
	A       RunRef   `json:"a"`
	B       RunRef   `json:"b"`
	Figures []Figure `json:"figures"`
	Notes   []string `json:"notes,omitempty"`
	Summary []string `json:"summary"` // the differences the test shows, in words
}

// Figure is one number measured by both runs: the median of each run's
// repeats and a test of whether they differ (stats.Compare).
type Figure struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	A     float64 `json:"a"`     // the median of ARepeats
	B     float64 `json:"b"`     // the median of BRepeats
	Ratio float64 `json:"ratio"` // B / A; 0 when A is 0
	// ARepeats and BRepeats are the values tested: one per repeat of an
	// OLTP or reporting cell (run oltp --repeat N); a probe's figure is
	// one value, whatever windows its median was taken over.
	ARepeats []float64        `json:"a_repeats"`
	BRepeats []float64        `json:"b_repeats"`
	Test     stats.Difference `json:"test"`
	Verdict  stats.Verdict    `json:"verdict"`
}

func verdict(f *Figure) {
	f.A, f.B = stats.Median(f.ARepeats), stats.Median(f.BRepeats)
	if f.A != 0 {
		f.Ratio = f.B / f.A
	}
	f.Test = stats.Compare(f.ARepeats, f.BRepeats)
	f.Verdict = f.Test.Verdict
}

// Compare puts two runs of the same kind side by side.
func Compare(a, b *result.Run) (*Comparison, error) {
	if a.Kind != b.Kind {
		return nil, fmt.Errorf("comparing runs %d and %d: run %d is %s and run %d is %s: %w (compare two runs of "+
			"one kind; 'numalab runs' lists them)",
			a.ID, b.ID, a.ID, a.Kind, b.ID, b.Kind, ErrKindMismatch)
	}
	c := &Comparison{Kind: a.Kind, A: runRef(a), B: runRef(b), Figures: []Figure{}, Summary: []string{}}
	var fa, fb []Figure
	var err error
	switch a.Kind {
	case result.RunProbeMem:
		fa, fb, err = compareMemory(a, b)
	case result.RunOLTP:
		fa, fb, err = compareOLTP(a, b, c)
	case result.RunQueries:
		fa, fb, err = compareQueries(a, b)
	case result.RunProbeIO:
		fa, fb, err = compareIO(a, b)
	default:
		w := registered(a.Kind)
		if w == nil || w.Figures == nil {
			return nil,
				fmt.Errorf("comparing runs %d and %d: runs of kind %q have no figures to compare (numalab compares %s runs)",
					a.ID, b.ID, a.Kind, strings.Join(comparable(), ", "))
		}
		fa, fb, err = compareWith(a, b, w.Figures)
	}
	if err != nil {
		return nil, fmt.Errorf("comparing runs %d and %d: %w", a.ID, b.ID, err)
	}
	// Pair by name; a figure only one run has is noted once.
	index := map[string]int{}
	for i, f := range fb {
		index[f.Name+"\x00"+f.Unit] = i
	}
	used := map[int]bool{}
	var onlyA, onlyB int
	for _, f := range fa {
		i, ok := index[f.Name+"\x00"+f.Unit]
		if !ok {
			onlyA++
			continue
		}
		used[i] = true
		g := fb[i]
		f.BRepeats = g.ARepeats
		verdict(&f)
		c.Figures = append(c.Figures, f)
	}
	onlyB = len(fb) - len(used)
	if onlyA > 0 || onlyB > 0 {
		c.Notes = append(c.Notes,
			fmt.Sprintf("%d figures only in run %d and %d only in run %d are left out (different sweeps or probe settings)",
				onlyA, a.ID, onlyB, b.ID))
	}
	if len(c.Figures) == 0 {
		return nil, fmt.Errorf("comparing runs %d (%s, %d figures) and %d (%s, %d figures): nothing to compare, "+
			"no figure was measured by both (choose runs of the same sweep; 'numalab runs' lists them)",
			a.ID, a.Status, len(fa), b.ID, b.Status, len(fb))
	}
	for _, r := range []*result.Run{a, b} {
		if r.Status != result.StatusComplete {
			c.Notes = append(c.Notes,
				fmt.Sprintf("run %d is %s: its figures are what it measured before it stopped", r.ID, r.Status))
		}
	}
	if a.Host != b.Host {
		c.Notes = append(c.Notes, fmt.Sprintf("the runs come from different hosts: %s and %s", a.Host, b.Host))
	}
	for _, f := range c.Figures {
		if f.Verdict == stats.Higher || f.Verdict == stats.Lower {
			c.Summary = append(c.Summary, fmt.Sprintf("%s: %s %s, 95%% CI %s, against %s, 95%% CI %s (%s×; p=%s, n=%d+%d)",
				f.Name, FmtSig(f.B), f.Unit, ciText(f.Test.B), FmtSig(f.A), ciText(f.Test.A), FmtF(f.Ratio, 3), FmtF(f.Test.P, 3),
				f.Test.A.N, f.Test.B.N))
		}
	}
	return c, nil
}

// comparable are the kinds Compare knows: its own and those whose
// workload gives figures, in the order of Kinds.
func comparable() []string {
	var out []string
	for _, k := range Kinds() {
		if w := registered(k); k != calibrated.RunFit && (w == nil || w.Figures != nil) {
			out = append(out, k)
		}
	}
	return out
}

// compareWith is each run's figures.
func compareWith(a, b *result.Run, figures func(*result.Run) ([]Figure, error)) ([]Figure, []Figure, error) {
	fa, err := figures(a)
	if err != nil {
		return nil, nil, err
	}
	fb, err := figures(b)
	return fa, fb, err
}

// NewFigure is a one-run figure (the A side): its repeats, their median
// its value.
func NewFigure(name, unit string, repeats ...float64) Figure {
	return Figure{Name: name, Unit: unit, A: stats.Median(repeats), ARepeats: repeats}
}

func compareMemory(a, b *result.Run) ([]Figure, []Figure, error) {
	one := func(in *result.Run) ([]Figure, error) {
		m, err := buildMemory(in)
		if err != nil {
			return nil, err
		}
		var out []Figure
		out = append(out, NewFigure("core clock", "GHz", m.GHz))
		for _, l := range m.Ladders {
			for _, p := range l.Points {
				out = append(out,
					NewFigure(fmt.Sprintf("latency %s %s pages %s", l.Chain, l.Pages, units.Bytes(p.Bytes)), "ns", p.NS.Median))
			}
		}
		if mx := m.Matrix; mx != nil {
			for i, row := range mx.NS {
				for j, st := range row {
					out = append(out,
						NewFigure(fmt.Sprintf("matrix node %d to node %d", mx.CPUNodes[i], mx.MemNodes[j]), "ns", st.Median))
				}
			}
		}
		if ml := m.MLP; ml != nil {
			for _, p := range ml.Points {
				out = append(out,
					NewFigure(fmt.Sprintf("MLP %d chains %d threads", p.Chains, p.Threads), "ns/load", p.NSPerLoad.Median))
			}
		}
		if bw := m.Bandwidth; bw != nil {
			for _, p := range bw.Read {
				out = append(out, NewFigure(fmt.Sprintf("read bandwidth %d threads", p.Threads), "GB/s", p.GBps))
			}
		}
		return out, nil
	}
	fa, err := one(a)
	if err != nil {
		return nil, nil, err
	}
	fb, err := one(b)
	return fa, fb, err
}

func compareOLTP(a, b *result.Run, c *Comparison) ([]Figure, []Figure, error) {
	oa, err := buildOLTP(a)
	if err != nil {
		return nil, nil, err
	}
	ob, err := buildOLTP(b)
	if err != nil {
		return nil, nil, err
	}
	// Series pair by label; those left over pair in order (SMT on in one
	// run against SMT off in the other), named by both labels.
	names := func(o *OLTP) []string {
		var s []string
		for _, sr := range o.Series {
			s = append(s, sr.Label)
		}
		return s
	}
	la, lb := names(oa), names(ob)
	nameA, nameB := map[string]string{}, map[string]string{}
	var restA, restB []string
	for _, l := range la {
		if contains(lb, l) {
			nameA[l], nameB[l] = l, l
		} else {
			restA = append(restA, l)
		}
	}
	for _, l := range lb {
		if !contains(la, l) {
			restB = append(restB, l)
		}
	}
	for i := 0; i < len(restA) && i < len(restB); i++ {
		n := restA[i] + " | " + restB[i]
		nameA[restA[i]], nameB[restB[i]] = n, n
		c.Notes = append(c.Notes, fmt.Sprintf("placement %q of run %d is compared with %q of run %d",
			restA[i], a.ID, restB[i], b.ID))
	}
	one := func(o *OLTP, name map[string]string) []Figure {
		var out []Figure
		for _, sr := range o.Series {
			n, ok := name[sr.Label]
			if !ok {
				n = sr.Label
			}
			for _, p := range sr.Points {
				key := fmt.Sprintf("%s, %s", n, Plural(p.Streams, "stream"))
				if p.Interrupted {
					c.Notes = append(c.Notes,
						fmt.Sprintf("%s of run %d was cut short: its figures cover less than the planned window", key, o.Run))
				}
				out = append(out, NewFigure(key+": throughput", "tps", p.TPSRepeats...))
				out = append(out, NewFigure(key+": p95 latency", "ms", p.P95Repeats...))
			}
		}
		return out
	}
	fa, fb := one(oa, nameA), one(ob, nameB)
	return fa, fb, nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func compareQueries(a, b *result.Run) ([]Figure, []Figure, error) {
	one := func(in *result.Run) ([]Figure, error) {
		q, err := buildReporting(in)
		if err != nil {
			return nil, err
		}
		var out []Figure
		for _, sr := range q.ByDOP {
			for _, p := range sr.Points {
				key := fmt.Sprintf("%s DOP %d, %s", sr.Query, p.DOP, Plural(p.Streams, "stream"))
				out = append(out, NewFigure(key+": queries per hour", "queries/h", p.QPHRepeats...))
				out = append(out, NewFigure(key+": mean response", "ms", p.MeanMS))
			}
		}
		return out, nil
	}
	fa, err := one(a)
	if err != nil {
		return nil, nil, err
	}
	fb, err := one(b)
	return fa, fb, err
}

func compareIO(a, b *result.Run) ([]Figure, []Figure, error) {
	one := func(in *result.Run) ([]Figure, error) {
		x, err := buildIO(in)
		if err != nil {
			return nil, err
		}
		var out []Figure
		for _, p := range x.Probe.Patterns {
			key := fmt.Sprintf("%s %s QD %d", p.Name, units.Bytes(p.BlockSize), p.QD)
			out = append(out, NewFigure(key+": IOPS", "IOPS", p.Read.IOPS))
			out = append(out, NewFigure(key+": MB/s", "MB/s", p.Read.MBps))
			out = append(out, NewFigure(key+": p99 latency", "µs", p.Read.P99Us))
		}
		return out, nil
	}
	fa, err := one(a)
	if err != nil {
		return nil, nil, err
	}
	fb, err := one(b)
	return fa, fb, err
}

// WriteCompareText writes a comparison as a table.
func WriteCompareText(w io.Writer, c *Comparison) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Comparing %s runs: A = run %d (%s, %s), B = run %d (%s, %s)\n", c.Kind, c.A.ID, c.A.Host,
		c.A.Started, c.B.ID, c.B.Host, c.B.Started)
	fmt.Fprintf(&b, "  A: %s\n  B: %s\n", c.A.Command, c.B.Command)
	for _, n := range c.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tunit\tA\tB\tB/A\tA 95% CI\tB 95% CI\tn\tp\tverdict")
	cannot := 0
	for _, f := range c.Figures {
		p := "–"
		if f.Verdict != stats.CannotTell {
			p = FmtF(f.Test.P, 3)
		} else {
			cannot++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d+%d\t%s\t%s\n", f.Name, f.Unit, FmtSig(f.A), FmtSig(f.B), ratioText(f),
			ciText(f.Test.A), ciText(f.Test.B), f.Test.A.N, f.Test.B.N, p, f.Verdict)
	}
	tw.Flush()
	b.WriteString("\n")
	fmt.Fprintf(&b,
		"Each verdict is a Mann-Whitney U test of the two runs' repeats at p <= %s (golang.org/x/perf/benchmath); "+
			"A and B are medians, n their repeats; a CI needs %s.\n", FmtF(stats.Alpha, 2), "6 or more repeats")
	if cannot > 0 {
		fmt.Fprintf(&b, "%d of %d figures cannot be told apart by any test: one repeat on a side, or too few on "+
			"both (a difference needs 4 or more repeats each; run each again with --repeat 5).\n",
			cannot, len(c.Figures))
	}
	if len(c.Summary) == 0 {
		b.WriteString("No figure differs by the test.\n")
	} else {
		fmt.Fprintf(&b, "%d of %d figures differ by the test:\n", len(c.Summary), len(c.Figures))
		for _, s := range c.Summary {
			fmt.Fprintf(&b, "  - %s\n", s)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCompareJSON writes a comparison as indented JSON.
func WriteCompareJSON(w io.Writer, c *Comparison) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

func ratioText(f Figure) string {
	if f.A == 0 {
		return "–"
	}
	return FmtF(f.Ratio, 3)
}

// ciText is a median's confidence interval, "[9,812, 10,192]", or "–"
// when there are too few repeats for one.
func ciText(iv stats.Interval) string {
	if !iv.HasCI {
		return "–"
	}
	return "[" + FmtSig(iv.Lo) + ", " + FmtSig(iv.Hi) + "]"
}
