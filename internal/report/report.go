package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/calibrated"
	"github.com/numalab/numalab/internal/conclusion"
	"github.com/numalab/numalab/internal/estimate"
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/published"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/units"
)

// ErrNoRuns is returned by Build when it is given no run.
var ErrNoRuns = errors.New("no runs to report")

// Report is everything a report shows, computed from stored runs.
type Report struct {
	Runs      []RunRef   `json:"runs"` // the runs behind every figure, by id
	Machine   *Machine   `json:"machine,omitempty"`
	Memory    *Memory    `json:"memory,omitempty"`
	OLTP      *OLTP      `json:"oltp,omitempty"`
	Reporting *Reporting `json:"reporting,omitempty"`
	// PlacedDOP holds the reporting runs placed on a CPU selector beside
	// the unplaced one in Reporting (eval's SMT × DOP runs).
	PlacedDOP *PlacedDOP `json:"placement_dop,omitempty"`
	IO        *IO        `json:"io,omitempty"`
	Model     *Model     `json:"model,omitempty"`
	// Engines are each engine's measured fit side by side: what memory
	// latency costs each engine here (calib.EngineCosts).
	Engines []calibrated.EngineCost `json:"engines,omitempty"`
	// Published is the model against public audited results, at its
	// workload's stall share (nil without a model).
	Published *published.Validation `json:"published_check,omitempty"`
	// purchase and catalogue are the buy decisions for the model
	// (decide.Choose; Purchase, CataloguePurchase), given to Build.
	purchase, catalogue *conclusion.Decision
	// sections are the workloads' sections (Register), in order; their
	// JSON stands here, after the model's (MarshalJSON).
	sections []shown
	// Findings are plain-language lines, the answers first, then the
	// details, each with the anchor of the table or chart behind it.
	Findings []Finding `json:"findings"`
	// Absent says, per section without its run, what would fill it.
	Absent []Absent `json:"absent,omitempty"`
	Notes  []string `json:"notes,omitempty"`
	// Preflight lists the settings that distorted the runs' figures, as
	// their preflights warned; each is shown once, and every section whose
	// figures it affects links to it.
	Preflight []Caveat `json:"preflight,omitempty"`
}

// RunRef is the provenance of one run.
type RunRef struct {
	ID       int64  `json:"id"`
	Kind     string `json:"kind"`
	Host     string `json:"host"`
	Started  string `json:"started"`  // UTC, as stored
	Finished string `json:"finished"` // UTC; "" when it never finished
	Status   string `json:"status"`
	Command  string `json:"command"`
	Version  string `json:"version"`
	Headline string `json:"headline,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Finding is one plain-language sentence with its figure and the anchor
// (an id in the HTML) of the table or chart that shows it: one line, the
// same in HTML, text and eval's summary.
type Finding struct {
	Anchor string `json:"anchor"`
	Text   string `json:"text"`
	// Kind is FindingAnswer, or FindingDetail for a detail that follows
	// the answers (folded in HTML).
	Kind string `json:"kind"`
}

// The kinds of finding: an answer to docs/questions.md, or a detail.
const (
	FindingAnswer = "answer"
	FindingDetail = "detail"
)

// Absent is a section whose run kind was not given.
type Absent struct {
	Section string `json:"section"`
	Kind    string `json:"kind"`
	Hint    string `json:"hint"` // the command that would measure it
}

// Machine is the machine the runs were measured on.
type Machine struct {
	Run      int64            `json:"run"` // whose recorded topology this is
	Topology *result.Topology `json:"topology"`
	Cores    int              `json:"cores"`
	Threads  int              `json:"threads_per_core"`
	GHz      float64          `json:"ghz,omitempty"` // measured by the memory probe; 0 unknown
}

// Memory is a memory probe's results.
type Memory struct {
	Run       int64             `json:"run"`
	Samples   int               `json:"samples"`   // clean windows per point
	WindowMS  int               `json:"window_ms"` // length of one window
	Quick     bool              `json:"quick"`
	GHz       float64           `json:"ghz"` // the run's one clock: every cycle count is ns × GHz
	DRAM      *DRAM             `json:"dram,omitempty"`
	Ladders   []memlat.Ladder   `json:"ladders"`
	Matrix    *memlat.Matrix    `json:"matrix,omitempty"`
	Summary   *memlat.Summary   `json:"summary,omitempty"`
	MLP       *memlat.MLP       `json:"mlp,omitempty"`
	Bandwidth *memlat.Bandwidth `json:"bandwidth,omitempty"`
	C2C       *memlat.C2C       `json:"c2c,omitempty"` // cache-to-cache latency per class of CPU pair
}

// OLTP is a tpcc-ro sweep: one series per placement and data location.
type OLTP struct {
	Run        int64        `json:"run"`
	Engine     string       `json:"engine"`
	Workload   string       `json:"workload"`
	Warehouses int          `json:"warehouses"` // the load's, when it found another (tpcc.OLTPReport)
	DurationS  float64      `json:"duration_s"` // measured window per cell
	WarmupS    float64      `json:"warmup_s"`
	Series     []OLTPSeries `json:"series"`
	Notes      []string     `json:"notes,omitempty"`
}

// OLTPSeries is one placement and data location over stream counts.
type OLTPSeries struct {
	Label     string      `json:"label"`     // "smt=off, local data (node 0)"
	Placement string      `json:"placement"` // the selector; "" = not pinned
	SMT       bool        `json:"smt"`       // the placement offers SMT siblings (more CPUs than cores)
	Data      string      `json:"data"`      // "local", "remote" or "" (not placed)
	DataNode  int         `json:"data_node"` // -1: not placed
	Points    []OLTPPoint `json:"points"`
}

// OLTPPoint is one stream count of a series: the median over repeats,
// with the repeats' min and max and each repeat's value.
type OLTPPoint struct {
	Streams int   `json:"streams"`
	Repeats int   `json:"repeats"`
	Cores   int   `json:"cores"` // physical cores the streams ran on (the cells' Cores)
	CPUs    []int `json:"cpus"`
	// StreamCPUs says which CPUs each stream ran on: "per stream 0,1,0,1"
	// (stream i pinned to the i-th) or "all share 0-1" (every stream free
	// to run on all of them); see streamCPUs.
	StreamCPUs string    `json:"stream_cpus"`
	TPS        float64   `json:"tps"`
	TPSMin     float64   `json:"tps_min"`
	TPSMax     float64   `json:"tps_max"`
	TPSRepeats []float64 `json:"tps_repeats"`
	// TPSPerCore is tps per core, defined once: TPS / Cores, the physical
	// cores the streams ran on. The model's table uses the same
	// definition (one stream keeps one core busy).
	TPSPerCore float64 `json:"tps_per_core"`
	// SecMin and SecMax are the slowest and fastest whole second of the
	// measured windows (transactions per second): the spread of a cell
	// run once.
	SecMin     float64   `json:"second_min"`
	SecMax     float64   `json:"second_max"`
	P95MS      float64   `json:"p95_ms"` // median over repeats of the cells' p95 latency
	P95MSMin   float64   `json:"p95_ms_min"`
	P95MSMax   float64   `json:"p95_ms_max"`
	P95Repeats []float64 `json:"p95_ms_repeats"`
	// Unstable: some repeat's slowest whole second ran below half its
	// median second (UnstableBelow).
	Unstable     bool    `json:"unstable,omitempty"`
	BusyPct      float64 `json:"busy_pct"`
	ReadFromDisk bool    `json:"read_from_disk,omitempty"`
	Interrupted  bool    `json:"interrupted,omitempty"`
}

// Reporting is a transtats sweep of reporting queries.
type Reporting struct {
	Run    int64  `json:"run"`
	Engine string `json:"engine"`
	// Version is the engine's, as the run stored it; the reporting
	// workload fills it (Workload.Complete).
	Version   string               `json:"engine_version,omitempty"`
	Rows      int64                `json:"rows"`
	DurationS float64              `json:"duration_s"`
	WarmupS   float64              `json:"warmup_s"`
	Load      *result.BulkLoad     `json:"load,omitempty"`
	ByDOP     []QuerySeries        `json:"by_dop"`     // queries per hour against streams, one series per query and DOP
	ByStreams []QuerySeries        `json:"by_streams"` // speedup against DOP, one series per query and streams
	Plans     []result.PlanFinding `json:"plans,omitempty"`
	// Estimates set the optimizer's estimated speedup against DOP beside
	// the measured one (PostgreSQL only); NoEstimate says why there are
	// none on another engine. The reporting workload fills both
	// (Workload.Complete).
	Estimates  []estimate.Row `json:"estimates,omitempty"`
	NoEstimate string         `json:"no_estimate,omitempty"`
	Errors     []string       `json:"errors,omitempty"`
}

// QuerySeries is one query at a fixed DOP (or fixed streams).
type QuerySeries struct {
	Query   string       `json:"query"`
	DOP     int          `json:"dop,omitempty"`
	Streams int          `json:"streams,omitempty"`
	Points  []QueryPoint `json:"points"`
}

// QueryPoint is one reporting cell (median over repeats).
type QueryPoint struct {
	Streams    int       `json:"streams"`
	DOP        int       `json:"dop"`
	Repeats    int       `json:"repeats"`
	QPH        float64   `json:"queries_per_hour"`
	QPHMin     float64   `json:"queries_per_hour_min"`
	QPHMax     float64   `json:"queries_per_hour_max"`
	QPHRepeats []float64 `json:"queries_per_hour_repeats"`
	// Queries is the fewest queries a repeat finished in its window.
	Queries int64 `json:"queries_fewest"`
	// ResponseCV is the cell's response times' standard deviation over
	// their mean (the median over repeats): how much one query's runs vary
	// inside a cell.
	ResponseCV float64 `json:"response_cv,omitempty"`
	MeanMS     float64 `json:"mean_ms"`
	P95MS      float64 `json:"p95_ms"`
	Speedup    float64 `json:"speedup_vs_dop1,omitempty"`
	Errors     int64   `json:"errors,omitempty"`
	// Workers is where the parallel workers ran, over the repeats
	// (result.WorkerCPUs.Short): "" at DOP 1.
	Workers string `json:"workers,omitempty"`
}

// IO is a storage probe.
type IO struct {
	Run   int64           `json:"run"`
	Probe *result.IOProbe `json:"probe"`
	// Spans are the random reads of every storage probe in the report
	// against the span its data covered, when there are several.
	Spans []IOSpan `json:"spans,omitempty"`
}

// Model is the memory-latency model's prediction for 1, 2 and 4 sockets
// of the probed CPU, with the workload fitted to the OLTP run when there is
// one: calib.Calibrate's answer.
type Model = calibrated.Model

// Build lays out a report of runs, at most one of each kind, with what
// was concluded from them (in, assess.Runs): the model and the decisions
// are shown when a memory probe is among the runs. Runs of kinds it does
// not know add only their machine and provenance.
func Build(runs []*result.Run, in conclusion.Inputs) (*Report, error) {
	if len(runs) == 0 {
		return nil, ErrNoRuns
	}
	r := &Report{Findings: []Finding{}}
	byKind := map[string]*result.Run{} // the first run of each kind
	seen := map[string][]*result.Run{}
	for _, run := range runs {
		if run == nil {
			return nil, errors.New("building report: nil run")
		}
		for _, prev := range seen[run.Kind] {
			if variant(prev) == variant(run) {
				return nil, fmt.Errorf("building report: runs %d and %d are both %s: a report shows one run of each kind, "+
					"of null and insert one per engine, method and key, of tpch one per engine, of probe-io one per span, "+
					"of report one per placement (try 'numalab compare %d %d')",
					prev.ID, run.ID, strings.TrimSpace(run.Kind+" "+variant(run)), prev.ID, run.ID)
			}
		}
		seen[run.Kind] = append(seen[run.Kind], run)
		if byKind[run.Kind] == nil {
			byKind[run.Kind] = run
		}
		r.Runs = append(r.Runs, runRef(run))
		if !slices.Contains(coreKinds, run.Kind) && registered(run.Kind) == nil {
			r.Notes = append(r.Notes,
				fmt.Sprintf("run %d is of kind %q, which the report does not chart: only its machine is used", run.ID, run.Kind))
		}
	}
	sort.Slice(r.Runs, func(i, j int) bool { return r.Runs[i].ID < r.Runs[j].ID })
	cs, cerr := caveats(runs)
	if cerr != nil {
		return nil, fmt.Errorf("building report: %w", cerr)
	}
	r.Preflight = cs
	hosts := map[string][]int64{}
	for _, ref := range r.Runs {
		hosts[ref.Host] = append(hosts[ref.Host], ref.ID)
	}
	if len(hosts) > 1 {
		var parts []string
		for _, h := range sortedKeys(hosts) {
			parts = append(parts, fmt.Sprintf("%s (runs %s)", h, joinIDs(hosts[h])))
		}
		r.Notes = append(r.Notes, "the runs come from different hosts: "+strings.Join(parts, ", ")+
			"; the model combines them as if one machine")
	}
	if err := CheckMixed(runs); err != nil && len(hosts) == 1 {
		r.Notes = append(r.Notes, "mixed runs: "+strings.TrimPrefix(err.Error(), ErrMixed.Error()+": "))
	}
	for _, ref := range r.Runs {
		if ref.Status != result.StatusComplete {
			r.Notes = append(r.Notes, fmt.Sprintf("run %d (%s) is %s: it shows what was measured before it stopped",
				ref.ID, ref.Kind, ref.Status))
		}
	}

	var err error
	if run := byKind[result.RunProbeMem]; run != nil {
		if r.Memory, err = buildMemory(run); err != nil {
			return nil, err
		}
	}
	if run := byKind[result.RunOLTP]; run != nil {
		if r.OLTP, err = buildOLTP(run); err != nil {
			return nil, err
		}
	}
	if run, placed := reportingRuns(seen[result.RunQueries]); run != nil {
		if r.Reporting, err = buildReporting(run); err != nil {
			return nil, err
		}
		if len(placed) > 0 {
			if r.PlacedDOP, err = BuildPlacedDOP(placed); err != nil {
				return nil, err
			}
		}
	}
	if run := byKind[result.RunProbeIO]; run != nil {
		if r.IO, err = buildIO(run); err != nil {
			return nil, err
		}
		if len(seen[result.RunProbeIO]) > 1 {
			if r.IO.Spans, err = ioSpans(seen[result.RunProbeIO]); err != nil {
				return nil, err
			}
		}
	}
	r.Machine = buildMachine(runs)
	if r.Machine != nil && r.Memory != nil {
		r.Machine.GHz = r.Memory.GHz
	}
	if r.Memory != nil && in.Model != nil {
		r.Model, r.Engines, r.Published = in.Model, in.Engines, in.Published
		r.purchase, r.catalogue = in.Purchase, in.Catalogue
		r.Notes = append(r.Notes, modelNote(r.Model))
	}
	for _, k := range Kinds() {
		switch w := registered(k); {
		case byKind[k] != nil:
		case w != nil:
			// A workload's section says itself whether its absence matters.
			if w.Absent == nil {
				continue
			}
			if a := w.Absent(r); a != nil {
				r.Absent = append(r.Absent, *a)
			}
		case k != calibrated.RunFit:
			// The model's fit is eval's: the model then rests on the OLTP run.
			r.Absent = append(r.Absent, absentFor(k))
		}
	}
	if byKind[result.RunProbeMem] == nil {
		r.Absent = append(r.Absent, Absent{Section: "model", Kind: result.RunProbeMem,
			Hint: "the model needs a memory probe for the local latency and clock: numalab probe mem --quick"})
	}
	if err := buildSections(r, runs); err != nil {
		return nil, err
	}
	r.Findings = findings(r)
	return r, nil
}

// reportingRuns splits the reporting runs: the one the reporting section
// shows (the first not placed on a CPU selector, else the first), and
// the placed others, which the placement × DOP section shows.
func reportingRuns(runs []*result.Run) (shown *result.Run, placed []*result.Run) {
	i := slices.IndexFunc(runs, func(r *result.Run) bool { return placement(r) == "" })
	if i < 0 {
		i = 0
	}
	for j, r := range runs {
		if j == i {
			shown = r
		} else {
			placed = append(placed, r)
		}
	}
	return shown, placed
}

// variant is what tells apart runs of a kind a report shows several of:
// a reporting run's placement, a storage probe's span, a measured fit's
// engine, and what a workload's Variant says of its runs. Other kinds have one variant.
func variant(run *result.Run) string {
	switch run.Kind {
	case result.RunQueries:
		if p := placement(run); p != "" {
			return "placed " + p
		}
		return ""
	case result.RunProbeIO:
		var c struct {
			Span int64 `json:"span"`
		}
		// An unreadable configuration is reported when the run's section
		// is built; here it is one more variant.
		if err := json.Unmarshal(run.Config, &c); err != nil {
			return "with an unreadable configuration"
		}
		if c.Span > 0 {
			return "over a span of " + units.Bytes(c.Span).String()
		}
		return ""
	case calibrated.RunFit:
		return EngineVariant(run) // one measured fit per engine
	}
	if w := registered(run.Kind); w != nil && w.Variant != nil {
		return w.Variant(run)
	}
	return ""
}

// EngineVariant is the variant of a run of which a report shows one per
// engine: "on postgres" (a Workload's Variant).
func EngineVariant(run *result.Run) string {
	var c struct {
		Engine string `json:"engine"`
	}
	// An unreadable configuration is reported when the run's section is
	// built; here it is one more variant.
	if err := json.Unmarshal(run.Config, &c); err != nil {
		return "with an unreadable configuration"
	}
	return "on " + c.Engine
}

func absentFor(kind string) Absent {
	switch kind {
	case result.RunProbeMem:
		return Absent{Section: "memory", Kind: kind, Hint: "numalab probe mem --quick"}
	case result.RunOLTP:
		return Absent{Section: "oltp", Kind: kind, Hint: "numalab run oltp --streams 1,2,4"}
	case result.RunQueries:
		return Absent{Section: "reporting", Kind: kind, Hint: "numalab run report --engine duckdb --streams 1,2 --dop 1,2"}
	case result.RunProbeIO:
		return Absent{Section: "io", Kind: kind, Hint: "numalab probe io"}
	}
	return Absent{Section: kind, Kind: kind}
}

func runRef(run *result.Run) RunRef {
	ref := RunRef{ID: run.ID, Kind: run.Kind, Host: run.Host, Started: stamp(run.Started), Status: run.Status,
		Command: run.Command, Version: run.Version, Headline: run.Headline, Error: run.Error}
	if !run.Finished.IsZero() {
		ref.Finished = stamp(run.Finished)
	}
	return ref
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// buildMachine takes the topology recorded with the memory probe, else
// with the earliest run that has one (result.MachineRun).
func buildMachine(runs []*result.Run) *Machine {
	pick := result.MachineRun(runs)
	if pick == nil {
		return nil
	}
	t := pick.Machine
	return &Machine{Run: pick.ID, Topology: t, Cores: len(t.Cores), Threads: max(t.ThreadsPerCore(), 1)}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func joinIDs(ids []int64) string {
	var s []string
	for _, id := range ids {
		s = append(s, fmt.Sprintf("%d", id))
	}
	return strings.Join(s, ", ")
}
