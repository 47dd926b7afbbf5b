package report

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/assess"
	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/golden"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/topo"
)

// checkGolden compares got with testdata/golden/name; -update rewrites it.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), got)
}

type scenario struct {
	name string
	runs func(t *testing.T) []*result.Run
}

var scenarios = []scenario{
	{"two-socket", func(t *testing.T) []*result.Run { return stored(t, syntheticRuns()) }},
	{"kvm-2vcpu", func(t *testing.T) []*result.Run { return stored(t, vmRuns(t)) }},
}

// assessed is Build with what assess concludes from runs, as numalab's
// report and eval build it.
func assessed(runs []*result.Run) (*Report, error) {
	in, err := assess.Runs("", runs)
	if err != nil {
		return nil, err
	}
	return Build(runs, in)
}

func build(t *testing.T, runs []*result.Run) *Report {
	t.Helper()
	r, err := assessed(runs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestGolden(t *testing.T) {
	writers := []struct {
		ext   string
		write func(*bytes.Buffer, *Report) error
	}{
		{"html", func(b *bytes.Buffer, r *Report) error { return WriteHTML(b, r) }},
		{"txt", func(b *bytes.Buffer, r *Report) error { return WriteText(b, r) }},
		{"json", func(b *bytes.Buffer, r *Report) error { return WriteJSON(b, r) }},
		{"csv", func(b *bytes.Buffer, r *Report) error { return WriteCSV(b, r) }},
	}
	for _, sc := range allScenarios {
		r := build(t, sc.runs(t))
		for _, w := range writers {
			t.Run(sc.name+"."+w.ext, func(t *testing.T) {
				var b bytes.Buffer
				if err := w.write(&b, r); err != nil {
					t.Fatal(err)
				}
				checkGolden(t, sc.name+"."+w.ext, b.Bytes())
			})
		}
	}
}

// The same runs give the same bytes, whatever the map order of the run.
func TestHTMLDeterministic(t *testing.T) {
	var first []byte
	for i := range 5 {
		var b bytes.Buffer
		if err := WriteHTML(&b, build(t, stored(t, syntheticRuns()))); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b.Bytes()
		} else if !bytes.Equal(first, b.Bytes()) {
			t.Fatalf("rendering %d differs from the first", i)
		}
	}
}

func renderHTML(t *testing.T, runs []*result.Run) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, build(t, runs)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The report refers to nothing outside itself and needs no script.
func TestHTMLSelfContained(t *testing.T) {
	for _, sc := range allScenarios {
		html := renderHTML(t, sc.runs(t))
		for _, bad := range []string{"<script", "<link", "<iframe", "<img", "<object", "<embed", "src=", "url(",
			"@import", "javascript:"} {
			if strings.Contains(strings.ToLower(html), bad) {
				t.Errorf("%s: report contains %q", sc.name, bad)
			}
		}
		// The only absolute URL allowed is the SVG namespace (a name,
		// never fetched).
		rest := strings.ReplaceAll(html, `xmlns="http://www.w3.org/2000/svg"`, "")
		if m := regexp.MustCompile(`(?i)(https?:|ftp:|file:)//`).FindString(rest); m != "" {
			t.Errorf("%s: report contains an external reference %q", sc.name, m)
		}
		for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(html, -1) {
			if !strings.HasPrefix(m[1], "#") {
				t.Errorf("%s: link %q leaves the report", sc.name, m[1])
			}
		}
	}
}

// Every finding and every link points at an element that exists.
func TestAnchorsResolve(t *testing.T) {
	for _, sc := range allScenarios {
		runs := sc.runs(t)
		r := build(t, runs)
		html := renderHTML(t, runs)
		ids := map[string]bool{}
		for _, m := range regexp.MustCompile(` id="([^"]+)"`).FindAllStringSubmatch(html, -1) {
			if ids[m[1]] {
				t.Errorf("%s: id %q used twice", sc.name, m[1])
			}
			ids[m[1]] = true
		}
		if len(r.Findings) < 5 {
			t.Errorf("%s: only %d findings", sc.name, len(r.Findings))
		}
		for _, f := range r.Findings {
			if !ids[f.Anchor] {
				t.Errorf("%s: finding %q links to #%s, which is not in the report", sc.name, f.Text, f.Anchor)
			}
		}
		for _, m := range regexp.MustCompile(`href="#([^"]*)"`).FindAllStringSubmatch(html, -1) {
			if !ids[m[1]] {
				t.Errorf("%s: link to #%s, which is not in the report", sc.name, m[1])
			}
		}
	}
}

func findingWith(r *Report, substr string) *Finding {
	for i := range r.Findings {
		if strings.Contains(r.Findings[i].Text, substr) {
			return &r.Findings[i]
		}
	}
	return nil
}

// The findings say what the fixture was built to show, no more strongly
// than its repeats allow: two a cell cannot tell a difference, five can.
func TestFindings(t *testing.T) {
	r := build(t, stored(t, syntheticRuns()))
	for _, want := range []struct{ text, anchor string }{
		{"DRAM latency", AnchorLadder},
		{"Remote memory costs 169.5 ns against 103.0 ns local: 1.65×", AnchorMatrix},
		{"Remote data measured 2", AnchorOLTPTable}, // remote data: 7,200 against 10,000 tps per core
		{"SMT measured +2", AnchorOLTPTable},        // 25% from siblings at 4 streams, within the fixture's ±2% noise
		{"2 streams gave", AnchorOLTPTable},
		{"P1 on duckdb: DOP 4 ran", AnchorSpeedup},
		{"Storage: 11,000 random 8 KiB reads", AnchorIO},
		{"Model: 2 sockets", AnchorModel},
		{"Effective cache sizes", AnchorLevels},
		{"Model error over the 4 points it was fitted to", AnchorModel},
	} {
		f := findingWith(r, want.text)
		if f == nil {
			t.Errorf("no finding with %q in %q", want.text, r.Findings)
			continue
		}
		if f.Anchor != want.anchor {
			t.Errorf("finding %q links to #%s, want #%s", f.Text, f.Anchor, want.anchor)
		}
	}
	for _, text := range []string{"Remote data measured", "SMT measured", "P1 on duckdb: DOP 4 ran"} {
		if f := findingWith(r, text); f != nil && !strings.Contains(f.Text, "too few to tell") {
			t.Errorf("finding %q: want it to say the repeats cannot tell", f.Text)
		}
	}
	five := build(t, stored(t, []*result.Run{syntheticRuns()[0], withRepeats(t, syntheticRuns()[1], 5)}))
	if f := findingWith(five, "Remote data cost"); f == nil ||
		!regexp.MustCompile(`cost 2[6-9]\.\d% of throughput .*p=0\.008, n=5\+5`).MatchString(f.Text) {
		t.Errorf("five repeats: remote data finding %v: want a cost near 28%% with its test", f)
	}
	if f := findingWith(five, "SMT added 2"); f == nil ||
		!regexp.MustCompile(`U test p=0\.0\d+, n=5\+5`).MatchString(f.Text) {
		t.Errorf("five repeats: SMT finding %v: want the gain with its test", f)
	}
	// A one-node, no-SMT machine says so instead of inventing numbers.
	vm := build(t, stored(t, vmRuns(t)))
	// Its DOP cells ran once each, and P2's response times vary by more
	// than half their mean inside each cell: the finding says both.
	if f := findingWith(vm, "P2 on duckdb: DOP 2 ran"); f == nil ||
		!strings.Contains(f.Text, "whether parallelism helped is not known") ||
		!regexp.MustCompile(`vary by 5\d\.\d% to 5\d\.\d% of their mean`).MatchString(f.Text) {
		t.Errorf("kvm-2vcpu: P2's DOP finding %v: want it unknown whether parallelism helped, and the cells' variation", f)
	}
	for _, want := range []string{"One NUMA node", "No SMT on this machine"} {
		if findingWith(vm, want) == nil {
			t.Errorf("kvm-2vcpu: no finding with %q in %q", want, vm.Findings)
		}
	}
}

// With two latency points (local and remote data, two cells each) the
// model fits A and M and passes between each latency's cells; with one it
// takes M from the published stall share and passes through the median.
func TestModelFit(t *testing.T) {
	r := build(t, stored(t, syntheticRuns()))
	md := r.Model
	if md == nil || md.Fit == nil || len(md.Points) != 4 || md.Fit.MInterval == nil {
		t.Fatalf("two-socket: want a fit of 4 cells at two latencies with intervals, got %+v", md)
	}
	for i := 0; i < len(md.Points); i += 2 {
		// The fit passes through the mean cycles of each latency's two cells.
		a, b := md.Points[i], md.Points[i+1]
		mean := (a.GHz*1e9/a.TPSPerCore + b.GHz*1e9/b.TPSPerCore) / 2
		if got := model.CyclesPerTxn(md.Workload, a.LatencyNS, a.GHz); math.Abs(got-mean)/mean > 1e-9 {
			t.Errorf("fitted model gives %v cycles at %v ns, the cells' mean is %v", got, a.LatencyNS, mean)
		}
	}
	if md.RemoteAssumed || md.RemoteNS != 169.5 || md.CoresPerSocket != 2 {
		t.Errorf("two-socket: remote %v (assumed %v), %d cores per socket; want measured 169.5 ns and 2",
			md.RemoteNS, md.RemoteAssumed, md.CoresPerSocket)
	}
	if len(md.Table.Rows) != 2*len(calib.PredictSockets) { // SMT 1 and 2
		t.Errorf("two-socket: %d model rows, want %d", len(md.Table.Rows), 2*len(calib.PredictSockets))
	}

	vm := build(t, stored(t, vmRuns(t))).Model
	if vm == nil || vm.Fit != nil || len(vm.Points) == 0 || !vm.RemoteAssumed {
		t.Fatalf("kvm-2vcpu: want a fit at one latency with an assumed remote latency, got %+v", vm)
	}
	if math.Abs(vm.StallShare-model.PublishedStallShare.Value) > 1e-9 ||
		!strings.Contains(vm.Method, "the published stall share 60%") {
		t.Errorf("kvm-2vcpu: stall share %v, method %q; want the published 0.6", vm.StallShare, vm.Method)
	}
	if vm.SMTMeasured {
		t.Errorf("kvm-2vcpu: SMT gain %v measured on a machine without SMT", vm.SMT)
	}
	if n := len(calib.PredictSockets); len(vm.Table.Rows) != n || vm.Table.Rows[n-1].Sockets != 4 {
		t.Errorf("kvm-2vcpu: model rows %+v, want 1, 2, 4 sockets", vm.Table.Rows)
	}
}

func TestBuildBadInput(t *testing.T) {
	if _, err := assessed(nil); !errors.Is(err, ErrNoRuns) {
		t.Errorf("Build(nil) = %v, want ErrNoRuns", err)
	}
	runs := stored(t, syntheticRuns())
	_, err := assessed([]*result.Run{runs[1], runs[1]})
	if err == nil || !strings.Contains(err.Error(), "both oltp") || !strings.Contains(err.Error(), "numalab compare") {
		t.Errorf("two oltp runs: %v, want an error that suggests compare", err)
	}
	// One run alone: the other sections say they are absent.
	r := build(t, runs[1:2])
	if r.Memory != nil || r.Model != nil || len(r.Absent) != 5 {
		t.Errorf("oltp alone: memory %v, model %v, absent %+v", r.Memory, r.Model, r.Absent)
	}
	html := renderHTML(t, runs[1:2])
	for _, want := range []string{"No probe-mem run was given", "numalab probe mem --quick", "No report run was given",
		"No probe-io run was given", "No null run was given"} {
		if !strings.Contains(html, want) {
			t.Errorf("oltp alone: HTML lacks %q", want)
		}
	}
}

// An interrupted or failed run is shown with its status.
func TestIncompleteRun(t *testing.T) {
	runs := syntheticRuns()
	runs[1].Status = result.StatusInterrupted
	runs[1].Results = runs[1].Results[:4]
	r := build(t, stored(t, runs[:2]))
	if !strings.Contains(strings.Join(r.Notes, "\n"), "is interrupted") {
		t.Errorf("notes %q do not say the oltp run was interrupted", r.Notes)
	}
}

// A big captured machine (hwloc XML, 24 nodes, 384 CPUs) draws every CPU
// once, and its text lists every node.
func TestMachineDrawingBig(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "topology", "192em64t-24n8c2t.xml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := topo.FromHwlocXML(f)
	if err != nil {
		t.Fatal(err)
	}
	html := machineHTML(m)
	if got := strings.Count(html, `<div class="pu">`); got != len(m.CPUs) {
		t.Errorf("drawing has %d CPU boxes, the machine %d CPUs", got, len(m.CPUs))
	}
	if got := strings.Count(html, `<div class="node">`); got != len(m.Nodes) {
		t.Errorf("drawing has %d node boxes, the machine %d nodes", got, len(m.Nodes))
	}
	lines := strings.Join(machineText(m), "\n")
	for _, n := range m.Nodes {
		if !strings.Contains(lines, fmt.Sprintf("node %d,", n.ID)) &&
			!strings.Contains(lines, fmt.Sprintf("node %d:", n.ID)) && !strings.Contains(lines, fmt.Sprintf("node %d\n", n.ID)) {
			t.Errorf("text lacks node %d:\n%s", n.ID, lines)
		}
	}
}

// Runs of two machines or two numalab versions are refused; Build, which
// the command calls only with --allow-mixed for such runs, notes them.
func TestCheckMixed(t *testing.T) {
	runs := syntheticRuns()
	if err := CheckMixed(runs); err != nil {
		t.Fatalf("one machine and version: %v", err)
	}
	other := *runs[1]
	other.Version = "v0.2.0"
	mixed := stored(t, []*result.Run{runs[0], &other})
	err := CheckMixed(mixed)
	if !errors.Is(err, ErrMixed) || !strings.Contains(err.Error(), "v0.2.0 (runs 2)") ||
		!strings.Contains(err.Error(), "--allow-mixed") {
		t.Errorf("two versions: %v, want ErrMixed naming each version's runs and --allow-mixed", err)
	}
	host := *runs[1]
	host.Host = "elsewhere"
	if err := CheckMixed([]*result.Run{runs[0], &host}); !errors.Is(err, ErrMixed) ||
		!strings.Contains(err.Error(), "elsewhere (Example Xeon 8000, 8 CPUs)") {
		t.Errorf("two hosts: %v, want ErrMixed naming the other machine", err)
	}
	r, err := assessed(mixed)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, "mixed runs: numalab versions") }) {
		t.Errorf("Build of mixed versions: notes %q, want a mixed-runs note", r.Notes)
	}
}

func TestStreamCPUs(t *testing.T) {
	many := make([]int, 20)
	for i := range many {
		many[i] = i
	}
	for _, c := range []struct {
		cpus    []int
		spread  bool
		streams int
		want    string
	}{
		{nil, false, 2, "not pinned"},
		{[]int{3, 1, 2}, false, 4, "all share 1-3"},
		{[]int{0, 2, 1, 3}, true, 6, "per stream 0,2,1,3,0,2"},
		{many, true, 20, "per stream 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,…"},
	} {
		if got := StreamCPUs(c.cpus, c.spread, c.streams); got != c.want {
			t.Errorf("streamCPUs(%v, %v, %d) = %q, want %q", c.cpus, c.spread, c.streams, got, c.want)
		}
	}
}

// TestFindingsAsLines: each finding is one short sentence, the answers
// (the decision first) listed on the first screen and the details folded
// under a disclosure, each linking to the section that shows it; the
// text report lists the same lines.
func TestFindingsAsLines(t *testing.T) {
	sentences := regexp.MustCompile(`[.:;] [A-Z][a-z]+ [a-z]`) // a second sentence starts
	for _, sc := range allScenarios {
		r := build(t, sc.runs(t))
		page := html.UnescapeString(renderHTML(t, sc.runs(t)))
		var txt bytes.Buffer
		if err := WriteText(&txt, r); err != nil {
			t.Fatal(err)
		}
		i, j := strings.Index(page, `<section id="findings">`), strings.Index(page, `<details id="findings-details">`)
		if i < 0 || j < i {
			t.Fatalf("%s: no findings section with its details folded", sc.name)
		}
		if p := Purchase(r); p != nil && (len(r.Findings) == 0 || r.Findings[0].Anchor != AnchorBuy ||
			!strings.HasPrefix(r.Findings[0].Text, "Which server: ")) {
			t.Errorf("%s: the first finding %v is not the decision, linked to #%s", sc.name, r.Findings[0], AnchorBuy)
		}
		for _, f := range r.Findings {
			if n := len(strings.Fields(f.Text)); n > 50 {
				t.Errorf("%s: finding of %d words, want at most 50: %q", sc.name, n, f.Text)
			}
			if m := sentences.FindString(f.Text); m != "" || !strings.HasSuffix(f.Text, ".") {
				t.Errorf("%s: finding %q is not one sentence (%q)", sc.name, f.Text, m)
			}
			li := `<li><a href="#` + f.Anchor + `">` + f.Text + `</a></li>`
			at := strings.Index(page, li)
			switch {
			case at < 0:
				t.Errorf("%s: the HTML does not list %q linked to #%s", sc.name, f.Text, f.Anchor)
			case (f.Kind == FindingDetail) != (at > j):
				t.Errorf("%s: finding %q (%s) is on the wrong side of the fold", sc.name, f.Text, f.Kind)
			}
			if !strings.Contains(txt.String(), "  - "+f.Text+"\n") {
				t.Errorf("%s: the text report does not list %q", sc.name, f.Text)
			}
		}
	}
}
