package report_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/workload/insert"
	"github.com/numalab/numalab/internal/workload/null"
	"github.com/numalab/numalab/internal/workload/tpch"
)

// The tests of the null, insert and TPC-H sections as the report shows
// them, on the fixture of real runs (WorkloadRuns).

// nullOf is the report's null section; the tests that call it expect one.
func nullOf(r *report.Report) *null.Section { return report.SectionOf[*null.Section](r) }

func itoa(n int) string     { return strconv.Itoa(n) }
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// The null section's figures are the stored cells' own: the medians over
// repeats computed here from the stored items, equal in JSON, and to the
// printed precision in the HTML and text tables. Pairings the machine
// cannot offer are labelled unavailable, with why.
func TestNullFigures(t *testing.T) {
	runs := report.WorkloadRuns(t, 1, 2, 3, 4, 5, 6, 8)
	r := report.BuildRuns(t, runs)
	page, txt, js := report.RenderAll(t, r)
	var j struct {
		Null []null.ReportRun `json:"null"`
	}
	if err := json.Unmarshal([]byte(js), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Null) != 2 || j.Null[0].Engine != "sqlite" || j.Null[1].Engine != "postgres" {
		t.Fatalf("json: null runs %+v, want SQLite's run 1 and PostgreSQL's run 2", j.Null)
	}
	points := 0
	for ri, run := range runs[:2] {
		cells, err := null.KindCell.All(run)
		if err != nil {
			t.Fatal(err)
		}
		type key struct {
			tr, pair string
			streams  int
		}
		calls, p50, csc := map[key][]float64{}, map[key][]float64{}, map[key][]float64{}
		for _, c := range cells {
			k := key{c.Transport, c.Pairing.Name, c.Cell.Streams}
			calls[k] = append(calls[k], c.Cell.TPS)
			if c.Cell.Total.Count > 0 {
				p50[k] = append(p50[k], c.Cell.Total.P50US)
			}
			if c.Cell.TPS > 0 {
				csc[k] = append(csc[k], c.CtxSwitchesPerSec/c.Cell.TPS)
			}
		}
		if len(j.Null[ri].Points) != len(calls) {
			t.Errorf("run %d: %d points, want %d (transport × pairing × streams)", run.ID, len(j.Null[ri].Points), len(calls))
		}
		for _, p := range j.Null[ri].Points {
			points++
			k := key{p.Transport, p.Pairing, p.Streams}
			want, wantP50, wantCS := stats.Median(calls[k]), stats.Median(p50[k]), stats.Median(csc[k])
			if p.Calls != want || p.P50US != wantP50 || !report.Near(p.CtxPerCall, wantCS) ||
				p.PerStream != want/float64(p.Streams) {
				t.Errorf("json: run %d %v: %v calls/s, p50 %v µs, %v cs/call, %v per stream; want %v, %v, %v, %v",
					run.ID, k, p.Calls, p.P50US, p.CtxPerCall, p.PerStream, want, wantP50, wantCS, want/float64(p.Streams))
			}
			row := report.HTMLRow(t, page, null.CellsAnchor(run.ID), p.Transport, p.Pairing, p.CPUs(), itoa(p.Streams))
			if !strings.HasPrefix(row[5], report.FmtN(want)+" [") || row[6] != report.FmtN(want/float64(p.Streams)) ||
				!strings.HasPrefix(row[7], report.FmtF(wantP50, 1)+" / ") || row[8] != report.FmtF(wantCS, 2) {
				t.Errorf("html: run %d row %q: want %s calls/s, %s per stream, p50 %s, %s cs/call", run.ID, row,
					report.FmtN(want), report.FmtN(want/float64(p.Streams)), report.FmtF(wantP50, 1), report.FmtF(wantCS, 2))
			}
			line := regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(p.Transport) +
				`\s+` + regexp.QuoteMeta(p.Pairing) + `\s+` + regexp.QuoteMeta(p.CPUs()) + `\s+` + itoa(p.Streams) +
				`\s+\d+\s+(\S+)\s+\S+\s+(\S+)\s+(\S+)\s+\S+\s+\S+\s+\S+\s+(\S+)`).FindStringSubmatch(txt)
			if line == nil {
				t.Errorf("text: no row for run %d %v", run.ID, k)
			} else if line[1] != report.FmtN(want) || line[2] != report.FmtN(want/float64(p.Streams)) ||
				line[3] != report.FmtF(wantP50, 1) || line[4] != report.FmtF(wantCS, 2) {
				t.Errorf("text: run %d row %q: want %s calls/s, %s per stream, p50 %s, %s cs/call", run.ID, line[0],
					report.FmtN(want), report.FmtN(want/float64(p.Streams)), report.FmtF(wantP50, 1), report.FmtF(wantCS, 2))
			}
		}
	}
	if points < 5 {
		t.Errorf("%d null points in all, want SQLite's 2 and PostgreSQL's 4", points)
	}
	// The matrix: both pairings this machine lacks are there, labelled.
	for _, want := range [][]string{
		{"smt-sibling", "–", "–", "unavailable: one thread per core", "unavailable: one thread per core"},
		{"other-node", "–", "–", "unavailable: one NUMA node", "unavailable: one NUMA node"},
	} {
		if row := report.HTMLRow(t, page, "null-2-matrix", want[0]); !slices.Equal(row, want) {
			t.Errorf("html matrix row %q, want %q", row, want)
		}
	}
	// The pairings' finding, per transport, with its figures and test.
	for _, tr := range []string{null.Unix, null.TCP} {
		f := report.FindingWith(r, "Null transaction on postgres over "+tr)
		if f == nil || f.Anchor != null.CellsAnchor(2) {
			t.Errorf("%s: finding %v, want one linked to #%s", tr, f, null.CellsAnchor(2))
			continue
		}
		for _, p := range j.Null[1].Points {
			if p.Transport == tr &&
				(!strings.Contains(f.Text, p.Pairing) || !strings.Contains(f.Text, report.FmtN(p.Calls)+"/s")) {
				t.Errorf("%s: finding %q lacks %s's %s/s", tr, f.Text, p.Pairing, report.FmtN(p.Calls))
			}
		}
		if !strings.Contains(f.Text, "n=3+3") {
			t.Errorf("%s: finding %q does not give its repeats", tr, f.Text)
		}
	}
	for _, want := range []string{"smt-sibling: unavailable (one thread per core)",
		"other-node: unavailable (one NUMA node)"} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q", want)
		}
	}
}

// The insert section's figures are the stored cells' own, and MB/s is
// rows/s × the row's bytes, in JSON, HTML and text alike; the insert runs'
// own findings are carried into the report's, with their repeats' test.
func TestInsertFigures(t *testing.T) {
	runs := report.WorkloadRuns(t, 1, 2, 3, 4, 5, 6, 8)
	r := report.BuildRuns(t, runs)
	page, txt, js := report.RenderAll(t, r)
	var j struct {
		Insert []insert.ReportRun `json:"insert"`
	}
	if err := json.Unmarshal([]byte(js), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Insert) != 3 {
		t.Fatalf("json: %d insert runs, want 3 (sqlite, duckdb, postgres)", len(j.Insert))
	}
	drops := 0
	for i, run := range runs[2:5] {
		in := j.Insert[i]
		sts, err := insert.KindCellStats.All(run)
		if err != nil {
			t.Fatal(err)
		}
		rows := map[int][]float64{}
		for _, st := range sts {
			rows[st.Streams] = append(rows[st.Streams], st.RowsPerSec)
		}
		if len(in.Series) != 1 || len(in.Series[0].Points) != len(rows) {
			t.Fatalf("run %d: series %+v, want one placement with %d stream counts", run.ID, in.Series, len(rows))
		}
		for _, p := range in.Series[0].Points {
			want := stats.Median(rows[p.Streams])
			mb := want * insert.RowBytes / 1e6
			if p.RowsPerSec != want || !report.Near(p.MBPerSec, mb) || p.Repeats != 3 {
				t.Errorf("json: run %d at %d streams: %v rows/s, %v MB/s, %d repeats; want %v, %v, 3",
					run.ID, p.Streams, p.RowsPerSec, p.MBPerSec, p.Repeats, want, mb)
			}
			row := report.HTMLRow(t, page, insert.AnchorInsertTable, itoa64(run.ID), in.Label, "all CPUs", itoa(p.Streams))
			if !strings.HasPrefix(row[5], report.FmtN(want)+" [") || row[6] != report.FmtF(mb, 1) {
				t.Errorf("html: run %d row %q: want %s rows/s and %s MB/s", run.ID, row, report.FmtN(want), report.FmtF(mb, 1))
			}
			if !regexp.MustCompile(`(?m)^\s+all CPUs\s+` + itoa(p.Streams) + `\s+3\s+` + regexp.QuoteMeta(report.FmtN(want)) +
				`\s+\S+\s+` + regexp.QuoteMeta(report.FmtF(mb, 1)) + `\s`).MatchString(txt) {
				t.Errorf("text: no row of run %d at %d streams with %s rows/s and %s MB/s",
					run.ID, p.Streams, report.FmtN(want), report.FmtF(mb, 1))
			}
		}
		stored, err := insert.KindFinding.All(run)
		if err != nil {
			t.Fatal(err)
		}
		if len(stored) == 0 {
			continue
		}
		drops++
		f := report.FindingWith(r, "on "+in.Label+" (all CPUs, run "+itoa64(run.ID)+")")
		if f == nil {
			t.Errorf("run %d stored %d findings, the report carries none: %q", run.ID, len(stored), r.Findings)
			continue
		}
		if f.Anchor != insert.AnchorInsertTable {
			t.Errorf("finding %q links to #%s", f.Text, f.Anchor)
		}
		// Three repeats a side: the U test cannot reach p ≤ 0.05, so no
		// finding may say more streams loaded less outright.
		if strings.HasPrefix(f.Text, "More streams loaded less") || !strings.Contains(f.Text, "n=3+3") {
			t.Errorf("finding %q: want it no stronger than 3 repeats a side allow, with n", f.Text)
		}
	}
	if drops == 0 {
		t.Error("no insert run stored a finding: the fixture should have some")
	}
}

// The floor finding sets one-stream OLTP against the null floor on the
// same engine, with the figures it rests on: on SQLite as how many calls
// would fill a transaction, on PostgreSQL (one call a transaction) as the
// round trip's share, no more firmly than the repeats' extremes allow.
func TestFloorFinding(t *testing.T) {
	r := report.BuildRuns(t, report.WorkloadRuns(t, 1, 2, 3, 4, 5, 6, 8))
	one := report.PointAt(r.OLTP.Series[0].Points, 1)
	_, floor := nullOf(r).Floor("sqlite")
	if floor == nil || floor.Transport != null.InProcess {
		t.Fatalf("SQLite's floor %+v, want the in-process one-stream point", floor)
	}
	f := report.FindingWith(r, "One-stream OLTP on sqlite")
	if f == nil {
		t.Fatalf("no floor finding in %q", r.Findings)
	}
	for _, want := range []string{report.FmtF(1e6/floor.Calls, 1) + " µs round trip",
		report.FmtF(1e6/one.TPS, 1) + " µs transaction", "null run 1", "OLTP run 6",
		"only if it made " + report.FmtN(floor.Calls/one.TPS) + " of them"} {
		if !strings.Contains(f.Text, want) {
			t.Errorf("floor finding %q lacks %q", f.Text, want)
		}
	}

	pg := report.BuildRuns(t, report.WorkloadRuns(t, 2, 7))
	one = report.PointAt(pg.OLTP.Series[0].Points, 1)
	_, floor = nullOf(pg).Floor("postgres")
	if floor == nil || floor.Transport != null.Unix || floor.Streams != 1 {
		t.Fatalf("PostgreSQL's floor %+v, want a one-stream unix point", floor)
	}
	for _, p := range nullOf(pg).Runs[0].Points {
		if p.Transport == null.Unix && p.Calls > floor.Calls {
			t.Errorf("the floor %v calls/s is not the fastest unix point (%v)", floor.Calls, p.Calls)
		}
	}
	f = report.FindingWith(pg, "One-stream OLTP on postgres")
	if f == nil {
		t.Fatalf("no floor finding in %q", pg.Findings)
	}
	lo, hi := one.TPSMin/floor.CallsMax, one.TPSMax/floor.CallsMin
	for _, want := range []string{"is at least " + report.PctAbs(one.TPS/floor.Calls) +
		" of a " + report.FmtF(1e6/one.TPS, 1) + " µs transaction", report.PctAbs(lo) + " to " + report.PctAbs(hi),
		"3 and 3 repeats", "its one call"} {
		if !strings.Contains(f.Text, want) {
			t.Errorf("floor finding %q lacks %q", f.Text, want)
		}
	}
	switch {
	case lo >= null.LatencyBound && !strings.Contains(f.Text, "is latency-bound"),
		hi <= null.NotLatencyBound && !strings.Contains(f.Text, "not latency-bound"),
		lo < null.LatencyBound && hi > null.NotLatencyBound && !strings.Contains(f.Text, "do not show"):
		t.Errorf("floor finding %q: share %v–%v, verdict does not follow", f.Text, lo, hi)
	}
}

// A null or insert run alone, as 'numalab report ID' gives it, shows its
// section; two null runs of one engine are refused, as two runs of any
// other kind are.
func TestNullInsertAlone(t *testing.T) {
	// Stored afresh, each run alone is run 1.
	for _, c := range []struct {
		id   int64
		want []string
	}{
		{2, []string{`<section id="null">`, "null-1-matrix", "null-1-bars-svg", "unix", "tcp"}},
		{1, []string{`<section id="null">`, "null-1-streams-svg", "in-process"}},
		{5, []string{`<section id="insert">`, "insert-rows-svg", "Client:ClientRead"}},
	} {
		runs := report.WorkloadRuns(t, c.id)
		page := report.RenderHTML(t, runs)
		for _, w := range c.want {
			if !strings.Contains(page, w) {
				t.Errorf("run %d alone: HTML lacks %q", c.id, w)
			}
		}
		r := report.BuildRuns(t, runs)
		for _, a := range r.Absent {
			if a.Kind == null.RunKind || a.Kind == insert.RunKind {
				t.Errorf("run %d alone: absent %+v; a null or insert run is missed only beside an OLTP run", c.id, a)
			}
		}
	}
	one := report.WorkloadRuns(t, 1)
	_, err := report.Assessed([]*result.Run{one[0], one[0]})
	if err == nil || !strings.Contains(err.Error(), "both null on sqlite") {
		t.Errorf("two null runs on sqlite: %v, want refused", err)
	}
	// OLTP without a null run: the report says what would fill it.
	r := report.BuildRuns(t, report.WorkloadRuns(t, 6))
	if a := report.AbsentOf(r, null.AnchorNull); a == nil || a.Hint != "numalab run null --engine sqlite" {
		t.Errorf("OLTP alone: absent %+v, want a hint to run null on sqlite", r.Absent)
	}
}

// An OLTP run on an engine the null transaction does not run on (DuckDB)
// gets no hint to run it there, and no floor from another engine.
func TestFloorOtherEngine(t *testing.T) {
	runs := report.WorkloadRuns(t, 1, 6)
	runs[1].Config = json.RawMessage(
		regexp.MustCompile(`"engine":\s*"sqlite"`).ReplaceAllString(string(runs[1].Config), `"engine":"duckdb"`))
	r := report.BuildRuns(t, runs)
	if r.OLTP.Engine != "duckdb" {
		t.Fatalf("OLTP engine %q, want the edited duckdb", r.OLTP.Engine)
	}
	if report.FindingWith(r, "One-stream OLTP") != nil {
		t.Errorf("a floor finding across engines: %q", r.Findings)
	}
	f := report.FindingWith(r, "No one-stream null cell on duckdb")
	if f == nil || !strings.Contains(f.Text, "the null transaction does not run on it") ||
		!strings.Contains(f.Text, "run 1 on sqlite") {
		t.Errorf("finding %v: want it to say the null transaction does not run on duckdb, naming the null run it has", f)
	}
	alone := report.BuildRuns(t, runs[1:])
	if a := report.AbsentOf(alone, null.AnchorNull); a != nil {
		t.Errorf("duckdb OLTP alone: absent %+v, want no hint to run null on duckdb", a)
	}
}

// The TPC-H section shows each throughput cell's range over repeats, as
// the stored cells give it (a stored analysis keeps only medians), in the
// HTML and the text alike.
func TestTPCHRanges(t *testing.T) {
	runs := report.WorkloadRuns(t, 1, 2, 3, 4, 5, 6, 8)
	r := report.BuildRuns(t, runs)
	page, txt, _ := report.RenderAll(t, r)
	cells, err := tpch.KindCell.All(runs[6])
	if err != nil {
		t.Fatal(err)
	}
	if report.SectionOf[*tpch.Section](r).Run == nil || report.SectionOf[*tpch.Section](r).Run.Analysis.Advice == nil {
		t.Fatal("no TPC-H throughput test in the report")
	}
	checked := 0
	for _, ps := range report.SectionOf[*tpch.Section](r).Run.Analysis.Advice.PerStreams {
		for _, p := range ps.Points {
			var qph []float64
			for _, c := range cells {
				if c.Mode == tpch.ModeThroughput && c.Streams == ps.Streams && c.DOP == p.DOP {
					qph = append(qph, c.QueriesPerHour)
				}
			}
			lo, hi := slices.Min(qph), slices.Max(qph)
			if lo == hi {
				t.Fatalf("%d streams, DOP %d: the fixture's repeats agree (%v): nothing to check", ps.Streams, p.DOP, qph)
			}
			want := report.FmtN(stats.Median(qph)) + " [" + report.FmtN(lo) + "–" + report.FmtN(hi) + "]"
			row := report.HTMLRow(t, page, tpch.AnchorTPCH+"-dop", itoa(ps.Streams), itoa(p.DOP))
			if row[2] != want {
				t.Errorf("html: %d streams, DOP %d: %q, want %q", ps.Streams, p.DOP, row[2], want)
			}
			if !strings.Contains(txt, "DOP "+itoa(p.DOP)+": "+report.FmtN(stats.Median(qph))+" queries per hour ["+
				report.FmtN(lo)+"-"+report.FmtN(hi)+"]") {
				t.Errorf("text: %d streams, DOP %d: no %s [%s-%s]",
					ps.Streams, p.DOP, report.FmtN(stats.Median(qph)), report.FmtN(lo), report.FmtN(hi))
			}
			checked++
		}
	}
	if checked == 0 {
		t.Error("no throughput point checked")
	}
	// The findings: the DOP advice with its ranges, no firmer than they
	// overlap; the speedups no firmer than two repeats a DOP allow.
	f := report.FindingWith(r,
		"throughput test with 2 streams: DOP 1 gave the most queries per hour, 552,600 against 435,600 at DOP 2")
	if f == nil || f.Anchor != tpch.AnchorTPCH+"-dop" || !strings.Contains(f.Text, "overlap: not settled") {
		t.Errorf("DOP finding %v: want the ranges, linked to the table, and that they overlap", f)
	}
	f = report.FindingWith(r, "3 of 4 queries ran fastest at the highest DOP")
	if f == nil || !strings.Contains(f.Text, "too few for a U test") || !strings.Contains(f.Text, "Q9 at DOP 1") {
		t.Errorf("speedup finding %v: want 3 of 4 with Q9 stopping at DOP 1, and the test too weak", f)
	}
}
