package tpch

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
)

// AnchorPaced is the section of paced query runs.
const AnchorPaced = "paced-queries"

// Paced kinds the report shows in their own section: 'run tpch' and 'run
// report' with --think or an arrival rate. Their queries per hour are
// their schedule's, so no capacity chart reads them.
var (
	KindTPCHPaced    = RunKind + "-paced"
	KindReportPaced  = result.RunQueries + "-paced"
	pacedQueryKinds  = []string{KindTPCHPaced, KindReportPaced}
	pacedQueryTitles = map[string]string{KindTPCHPaced: "TPC-H-derived", KindReportPaced: "reporting"}
)

// PacedReport is what the report shows of paced tpch and reporting runs:
// one section, both kinds in one table each run, one run per kind and
// engine. A report takes them only when named.
var PacedReport = report.Workload{
	Kinds:   pacedQueryKinds,
	Variant: report.EngineVariant,
	Build: func(_ *report.Report, runs []*result.Run) (report.Section, error) {
		sec := &PacedSection{}
		for _, run := range runs {
			pr, err := buildPaced(run)
			if err != nil {
				return nil, err
			}
			sec.Runs = append(sec.Runs, *pr)
		}
		return sec, nil
	},
}

// PacedSection is the paced tpch and reporting runs, cell by cell.
type PacedSection struct {
	Runs []PacedRun `json:"paced_queries,omitempty"`
}

var _ report.Section = (*PacedSection)(nil)

// PacedRun is one paced tpch or reporting run, cell by cell.
type PacedRun struct {
	Run    int64       `json:"run"`
	Kind   string      `json:"kind"`
	Engine string      `json:"engine"`
	Cells  []PacedCell `json:"cells"`
}

// PacedCell is one paced cell: what was asked and what came of it.
// Latency percentiles run from each query's intended start in an open loop
// (Pace.Mode "rate"), from its actual start with a think time.
type PacedCell struct {
	Cell     int         `json:"cell"`
	Query    string      `json:"query"` // "Q6", "P2", or "all" (tpch's throughput test)
	Streams  int         `json:"streams"`
	DOP      int         `json:"dop"`
	Repeat   int         `json:"repeat"`
	Pace     result.Pace `json:"pace"`
	Done     int64       `json:"completed"`
	Errors   int64       `json:"errors"`
	Achieved float64     `json:"achieved_per_s"`
	P50US    float64     `json:"p50_us"`
	P95US    float64     `json:"p95_us"`
	P99US    float64     `json:"p99_us"`
}

// buildPaced reads a paced tpch or reporting run's cells.
func buildPaced(run *result.Run) (*PacedRun, error) {
	var cfg struct {
		Engine string `json:"engine"`
	}
	if len(run.Config) > 0 {
		if err := json.Unmarshal(run.Config, &cfg); err != nil {
			return nil, fmt.Errorf("reading the configuration of run %d: %w", run.ID, err)
		}
	}
	pr := &PacedRun{Run: run.ID, Kind: run.Kind, Engine: cfg.Engine}
	add := func(query string, m *result.Cell) {
		if m == nil || m.Pace == nil {
			return
		}
		pr.Cells = append(pr.Cells,
			PacedCell{Cell: m.Index, Query: query, Streams: m.Streams, DOP: max(m.DOP, 1), Repeat: m.Repeat, Pace: *m.Pace,
				Done: m.Total.Count, Errors: m.Total.Errors, Achieved: m.TPS, P50US: m.Total.P50US, P95US: m.Total.P95US,
				P99US: m.Total.P99US})
	}
	if run.Kind == KindTPCHPaced {
		cells, err := KindCell.All(run)
		if err != nil {
			return nil, err
		}
		for _, c := range cells {
			q := "all"
			if c.Mode == ModePower {
				q = QueryName(c.Query)
			}
			add(q, c.Cell)
		}
		return pr, nil
	}
	cells, err := result.KindQueryCell.All(run)
	if err != nil {
		return nil, err
	}
	for _, c := range cells {
		add(c.Query, c.Cell)
	}
	return pr, nil
}

// pacedHead is the paced cells' table heading, in the HTML and the text.
var pacedHead = []string{"cell", "query", "streams", "DOP", "pacing", "due", "completed", "per s", "late",
	"never started", "p50 ms", "p95 ms", "p99 ms", "service p99 ms", "errors"}

// pacedRow is one paced cell as pacedHead's columns.
func pacedRow(c PacedCell) []string {
	due, late, backlog, service := "-", "-", "-", "-"
	pace := fmt.Sprintf("think %v (%s)", c.Pace.Think, c.Pace.ThinkDist)
	if c.Pace.Mode == "rate" {
		pace = fmt.Sprintf("%s/s (%s)", strconv.FormatFloat(c.Pace.Rate, 'g', 4, 64), c.Pace.Arrivals)
		due, late, backlog = strconv.FormatInt(c.Pace.Offered, 10), strconv.FormatInt(c.Pace.Late, 10),
			strconv.FormatInt(c.Pace.Backlog, 10)
		service = report.FmtF(c.Pace.Service.P99US/1000, 2)
	}
	return []string{strconv.Itoa(c.Cell), c.Query, strconv.Itoa(c.Streams), strconv.Itoa(c.DOP), pace, due,
		strconv.FormatInt(c.Done, 10), report.FmtF(c.Achieved, 2), late, backlog, report.FmtF(c.P50US/1000, 2),
		report.FmtF(c.P95US/1000, 2), report.FmtF(c.P99US/1000, 2), service, strconv.FormatInt(c.Errors, 10)}
}

// pacedHTMLHead is the HTML's narrower heading of pacedRow's columns:
// due and completed, late and never started, and the three latency
// percentiles each share a column.
var pacedHTMLHead = []string{"cell", "query", "streams", "DOP", "pacing", "due / completed", "per s",
	"late / never started", "latency ms p50 / p95 / p99", "service p99 ms", "errors"}

// pacedHTMLRow is pacedRow's cells under pacedHTMLHead.
func pacedHTMLRow(r []string) []string {
	return []string{r[0], r[1], r[2], r[3], r[4], r[5] + " / " + r[6], r[7], r[8] + " / " + r[9],
		r[10] + " / " + r[11] + " / " + r[12], r[13], r[14]}
}

// pacedCaption says what one paced run's table shows.
func pacedCaption(p PacedRun) string {
	return fmt.Sprintf("Run %d (%s), %s queries on %s, paced: with an arrival rate the latency runs from each "+
		"query's intended start (queueing shows) and a query that started over %s late is counted; service p99 is "+
		"from its actual start; with a think time both run from the actual start",
		p.Run, p.Kind, pacedQueryTitles[p.Kind], p.Engine, lateAfter(p))
}

func lateAfter(p PacedRun) string {
	for _, c := range p.Cells {
		if c.Pace.LateAfter > 0 {
			return c.Pace.LateAfter.String()
		}
	}
	return "1ms"
}

// HTML is the paced section: each run's cells.
func (sec *PacedSection) HTML(_ *report.Report) []report.HTMLSection {
	s := report.HTMLSection{ID: AnchorPaced, Title: "Paced queries",
		Intro: "Runs of 'run tpch' and 'run report' paced by a think time or an arrival rate. Their throughput is " +
			"their schedule's, so they are shown here and never read as capacity (the TPC-H-derived and reporting sections, " +
			"the fleet and the model read closed-loop runs only)."}
	for _, p := range sec.Runs {
		t := report.Table{ID: fmt.Sprintf("%s-%d", AnchorPaced, p.Run), Caption: pacedCaption(p), Head: pacedHTMLHead}
		for _, c := range p.Cells {
			t.Rows = append(t.Rows, pacedHTMLRow(pacedRow(c)))
		}
		s.Tables = append(s.Tables, t)
	}
	return []report.HTMLSection{s}
}

// Text is the paced section of the terminal report.
func (sec *PacedSection) Text(b *strings.Builder, _ *report.Report) {
	b.WriteString("\nPaced queries (throughput is the schedule's, not capacity)\n")
	for _, p := range sec.Runs {
		textPaced(b, p)
	}
}

// Findings: paced runs add none; their throughput is their schedule's.
func (sec *PacedSection) Findings(*report.Report, report.Say, report.Say) {}

func textPaced(b *strings.Builder, p PacedRun) {
	fmt.Fprintf(b, "  %s\n", pacedCaption(p))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "    "+strings.Join(pacedHead, "\t")+"\t")
	for _, c := range p.Cells {
		fmt.Fprintln(tw, "    "+strings.Join(pacedRow(c), "\t")+"\t")
	}
	tw.Flush()
}

// CSV writes each paced cell's figures against its offered rate (0 for a
// think time).
func (sec *PacedSection) CSV(row report.CSVRow) {
	for _, p := range sec.Runs {
		for _, c := range p.Cells {
			name := fmt.Sprintf("%s on %s, cell %d, %s, %d streams, DOP %d",
				pacedQueryTitles[p.Kind], p.Engine, c.Cell, c.Query, c.Streams, c.DOP)
			x := c.Pace.Rate
			row("paced_queries", p.Run, name, "offered_per_s", x, "achieved", c.Achieved, "1/s", nil, nil, 0)
			row("paced_queries", p.Run, name, "offered_per_s", x, "p50_latency", c.P50US, "us", nil, nil, 0)
			row("paced_queries", p.Run, name, "offered_per_s", x, "p95_latency", c.P95US, "us", nil, nil, 0)
			row("paced_queries", p.Run, name, "offered_per_s", x, "p99_latency", c.P99US, "us", nil, nil, 0)
			if c.Pace.Mode == "rate" {
				row("paced_queries", p.Run, name, "offered_per_s", x, "late", float64(c.Pace.Late), "queries", nil, nil, 0)
				row("paced_queries", p.Run, name, "offered_per_s", x, "never_started", float64(c.Pace.Backlog), "queries",
					nil, nil, 0)
				row("paced_queries", p.Run, name, "offered_per_s", x, "service_p99", c.Pace.Service.P99US, "us", nil, nil, 0)
			}
		}
	}
}
