package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/units"
)

// Run kinds the report understands, as the commands store them.
const (
	KindProbeMem = "probe-mem"
	KindProbeIO  = "probe-io"
	KindOLTP     = "oltp"
	KindQueries  = "report" // numalab run report: transtats reporting queries
)

// Kinds lists the run kinds a report shows, in the order of its sections.
var Kinds = []string{KindProbeMem, KindOLTP, KindQueries, KindProbeIO}

// ErrNoRuns is returned by Build when it is given no run.
var ErrNoRuns = errors.New("no runs to report")

// Report is everything a report shows, computed from stored runs.
type Report struct {
	Runs      []RunRef   `json:"runs"` // the runs behind every figure, by id
	Machine   *Machine   `json:"machine,omitempty"`
	Memory    *Memory    `json:"memory,omitempty"`
	OLTP      *OLTP      `json:"oltp,omitempty"`
	Reporting *Reporting `json:"reporting,omitempty"`
	IO        *IO        `json:"io,omitempty"`
	Model     *Model     `json:"model,omitempty"`
	// Findings are plain-language sentences, most important first, each
	// with the anchor of the table or chart behind it.
	Findings []Finding `json:"findings"`
	// Absent says, per section without its run, what would fill it.
	Absent []Absent `json:"absent,omitempty"`
	Notes  []string `json:"notes,omitempty"`
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

// Finding is one plain-language sentence and the anchor (an id in the
// HTML) of the numbers behind it.
type Finding struct {
	Anchor string `json:"anchor"`
	Text   string `json:"text"`
}

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
	GHz       float64           `json:"ghz"`
	Ladders   []memlat.Ladder   `json:"ladders"`
	Matrix    *memlat.Matrix    `json:"matrix,omitempty"`
	Summary   *memlat.Summary   `json:"summary,omitempty"`
	MLP       *memlat.MLP       `json:"mlp,omitempty"`
	Bandwidth *memlat.Bandwidth `json:"bandwidth,omitempty"`
}

// OLTP is a tpcc-ro sweep: one series per placement and data location.
type OLTP struct {
	Run        int64        `json:"run"`
	Engine     string       `json:"engine"`
	Workload   string       `json:"workload"`
	Warehouses int          `json:"warehouses"`
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
// with the repeats' min and max.
type OLTPPoint struct {
	Streams    int     `json:"streams"`
	Repeats    int     `json:"repeats"`
	Cores      int     `json:"cores"` // physical cores of the placement
	CPUs       []int   `json:"cpus"`
	TPS        float64 `json:"tps"`
	TPSMin     float64 `json:"tps_min"`
	TPSMax     float64 `json:"tps_max"`
	TPSPerCore float64 `json:"tps_per_core"` // TPS / Cores
	// SecMin and SecMax are the slowest and fastest whole second of the
	// measured windows (transactions per second): the spread of a cell
	// run once.
	SecMin       float64 `json:"second_min"`
	SecMax       float64 `json:"second_max"`
	P95MS        float64 `json:"p95_ms"` // median over repeats of the cells' p95 latency
	P95MSMin     float64 `json:"p95_ms_min"`
	P95MSMax     float64 `json:"p95_ms_max"`
	BusyPct      float64 `json:"busy_pct"`
	ReadFromDisk bool    `json:"read_from_disk,omitempty"`
	Interrupted  bool    `json:"interrupted,omitempty"`
}

// Reporting is a transtats sweep of reporting queries.
type Reporting struct {
	Run       int64                `json:"run"`
	Engine    string               `json:"engine"`
	Version   string               `json:"engine_version,omitempty"`
	Rows      int64                `json:"rows"`
	DurationS float64              `json:"duration_s"`
	WarmupS   float64              `json:"warmup_s"`
	Load      *result.BulkLoad     `json:"load,omitempty"`
	ByDOP     []QuerySeries        `json:"by_dop"`     // queries per hour against streams, one series per query and DOP
	ByStreams []QuerySeries        `json:"by_streams"` // speedup against DOP, one series per query and streams
	Plans     []result.PlanFinding `json:"plans,omitempty"`
	Errors    []string             `json:"errors,omitempty"`
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
	Streams int     `json:"streams"`
	DOP     int     `json:"dop"`
	Repeats int     `json:"repeats"`
	QPH     float64 `json:"queries_per_hour"`
	QPHMin  float64 `json:"queries_per_hour_min"`
	QPHMax  float64 `json:"queries_per_hour_max"`
	MeanMS  float64 `json:"mean_ms"`
	P95MS   float64 `json:"p95_ms"`
	Speedup float64 `json:"speedup_vs_dop1,omitempty"`
	Errors  int64   `json:"errors,omitempty"`
}

// IO is a storage probe.
type IO struct {
	Run   int64           `json:"run"`
	Probe *result.IOProbe `json:"probe"`
}

// Model is the memory-latency model's prediction for 1, 2, 4 and 8 sockets
// of the probed CPU, with the workload fitted to the OLTP run when there is
// one.
type Model struct {
	ProbeRun       int64   `json:"probe_run"`
	OLTPRun        int64   `json:"oltp_run,omitempty"`
	GHz            float64 `json:"ghz"`
	LocalNS        float64 `json:"local_ns"`
	RemoteNS       float64 `json:"remote_ns"`
	RemoteAssumed  bool    `json:"remote_assumed"` // true: one node measured, remote latency assumed
	CoresPerSocket int     `json:"cores_per_socket"`
	// Method says in words how the workload's I and m were obtained.
	Method   string         `json:"method"`
	Workload model.Workload `json:"workload"`
	Points   []model.Point  `json:"points,omitempty"` // the measurements fitted
	Fit      *model.Fit     `json:"fit,omitempty"`    // two or more points
	Table    model.Table    `json:"table"`
	Notes    []string       `json:"notes,omitempty"`
}

// assumedRemoteRatio is remote/local latency on a one-node machine:
// docs/model.md's example 2-socket server (67 ns local, 125 ns remote).
const assumedRemoteRatio = 125.0 / 67.0

// ModelSockets are the socket counts the model predicts.
var ModelSockets = []int{1, 2, 4, 8}

// Build computes a report from runs, at most one of each kind. Runs of
// kinds it does not know add only their machine and provenance.
func Build(runs []*result.Run) (*Report, error) {
	if len(runs) == 0 {
		return nil, ErrNoRuns
	}
	r := &Report{Findings: []Finding{}}
	byKind := map[string]*result.Run{}
	for _, run := range runs {
		if run == nil {
			return nil, errors.New("building report: nil run")
		}
		if prev, ok := byKind[run.Kind]; ok {
			return nil, fmt.Errorf("building report: runs %d and %d are both %s: a report shows one run of each kind (try 'numalab compare %d %d')",
				prev.ID, run.ID, run.Kind, prev.ID, run.ID)
		}
		byKind[run.Kind] = run
		r.Runs = append(r.Runs, runRef(run))
		if !slices.Contains(Kinds, run.Kind) {
			r.Notes = append(r.Notes, fmt.Sprintf("run %d is of kind %q, which the report does not chart: only its machine is used", run.ID, run.Kind))
		}
	}
	sort.Slice(r.Runs, func(i, j int) bool { return r.Runs[i].ID < r.Runs[j].ID })
	hosts := map[string][]int64{}
	for _, ref := range r.Runs {
		hosts[ref.Host] = append(hosts[ref.Host], ref.ID)
	}
	if len(hosts) > 1 {
		var parts []string
		for _, h := range sortedKeys(hosts) {
			parts = append(parts, fmt.Sprintf("%s (runs %s)", h, joinIDs(hosts[h])))
		}
		r.Notes = append(r.Notes, "the runs come from different hosts: "+strings.Join(parts, ", ")+"; the model combines them as if one machine")
	}
	for _, ref := range r.Runs {
		if ref.Status != result.StatusComplete {
			r.Notes = append(r.Notes, fmt.Sprintf("run %d (%s) is %s: it shows what was measured before it stopped", ref.ID, ref.Kind, ref.Status))
		}
	}

	var err error
	if run := byKind[KindProbeMem]; run != nil {
		if r.Memory, err = buildMemory(run); err != nil {
			return nil, err
		}
	}
	if run := byKind[KindOLTP]; run != nil {
		if r.OLTP, err = buildOLTP(run); err != nil {
			return nil, err
		}
	}
	if run := byKind[KindQueries]; run != nil {
		if r.Reporting, err = buildReporting(run); err != nil {
			return nil, err
		}
	}
	if run := byKind[KindProbeIO]; run != nil {
		if r.IO, err = buildIO(run); err != nil {
			return nil, err
		}
	}
	r.Machine = buildMachine(runs, byKind)
	if r.Machine != nil && r.Memory != nil {
		r.Machine.GHz = r.Memory.GHz
	}
	if r.Memory != nil {
		r.Model = buildModel(r.Memory, r.OLTP, r.Machine)
	}
	for _, k := range Kinds {
		if byKind[k] == nil {
			r.Absent = append(r.Absent, absentFor(k))
		}
	}
	if byKind[KindProbeMem] == nil {
		r.Absent = append(r.Absent, Absent{Section: "model", Kind: KindProbeMem,
			Hint: "the model needs a memory probe for the local latency and clock: numalab probe mem --quick"})
	}
	r.Findings = findings(r)
	return r, nil
}

func absentFor(kind string) Absent {
	switch kind {
	case KindProbeMem:
		return Absent{Section: "memory", Kind: kind, Hint: "numalab probe mem --quick"}
	case KindOLTP:
		return Absent{Section: "oltp", Kind: kind, Hint: "numalab run oltp --streams 1,2,4"}
	case KindQueries:
		return Absent{Section: "reporting", Kind: kind, Hint: "numalab run report --engine duckdb --streams 1,2 --dop 1,2"}
	case KindProbeIO:
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
// with the first run that has one.
func buildMachine(runs []*result.Run, byKind map[string]*result.Run) *Machine {
	pick := byKind[KindProbeMem]
	if pick == nil || pick.Machine == nil {
		pick = nil
		for _, run := range runs {
			if run.Machine != nil && (pick == nil || run.ID < pick.ID) {
				pick = run
			}
		}
	}
	if pick == nil || pick.Machine == nil {
		return nil
	}
	t := pick.Machine
	return &Machine{Run: pick.ID, Topology: t, Cores: len(t.Cores), Threads: max(t.ThreadsPerCore(), 1)}
}

// decode unmarshals every item of kind into a new T.
func decode[T any](run *result.Run, kind string) ([]T, error) {
	var out []T
	for _, it := range run.Results {
		if it.Kind != kind {
			continue
		}
		var v T
		if err := json.Unmarshal(it.Body, &v); err != nil {
			return nil, fmt.Errorf("reading item %d (%s) of run %d: %w", it.Seq, kind, run.ID, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func buildMemory(run *result.Run) (*Memory, error) {
	m := &Memory{Run: run.ID}
	var cfg memlat.Config
	if len(run.Config) > 0 {
		if err := json.Unmarshal(run.Config, &cfg); err != nil {
			return nil, fmt.Errorf("reading the configuration of run %d: %w", run.ID, err)
		}
	}
	m.Samples, m.WindowMS, m.Quick = cfg.Samples, cfg.WindowMS, cfg.Quick
	var err error
	if m.Ladders, err = decode[memlat.Ladder](run, "memlat.Ladder"); err != nil {
		return nil, err
	}
	mats, err := decode[memlat.Matrix](run, "memlat.Matrix")
	if err != nil {
		return nil, err
	}
	if len(mats) > 0 {
		m.Matrix = &mats[len(mats)-1]
	}
	sums, err := decode[memlat.Summary](run, "memlat.Summary")
	if err != nil {
		return nil, err
	}
	if len(sums) > 0 {
		m.Summary = &sums[len(sums)-1]
		m.GHz = m.Summary.GHz
	}
	mlps, err := decode[memlat.MLP](run, "memlat.MLP")
	if err != nil {
		return nil, err
	}
	if len(mlps) > 0 {
		m.MLP = &mlps[len(mlps)-1]
	}
	bws, err := decode[memlat.Bandwidth](run, "memlat.Bandwidth")
	if err != nil {
		return nil, err
	}
	if len(bws) > 0 {
		m.Bandwidth = &bws[len(bws)-1]
	}
	if m.GHz == 0 {
		clocks, err := decode[memlat.Clock](run, "memlat.Clock")
		if err != nil {
			return nil, err
		}
		var g []float64
		for _, c := range clocks {
			g = append(g, c.GHz.Median)
		}
		m.GHz = stats.Median(g)
	}
	return m, nil
}

// oltpRunConfig is the part of run oltp's stored configuration the report
// reads.
type oltpRunConfig struct {
	Engine     string        `json:"engine"`
	Warehouses int           `json:"warehouses"`
	Duration   time.Duration `json:"duration_ns"`
	Warmup     time.Duration `json:"warmup_ns"`
}

func buildOLTP(run *result.Run) (*OLTP, error) {
	var cfg oltpRunConfig
	if len(run.Config) > 0 {
		if err := json.Unmarshal(run.Config, &cfg); err != nil {
			return nil, fmt.Errorf("reading the configuration of run %d: %w", run.ID, err)
		}
	}
	o := &OLTP{Run: run.ID, Engine: cfg.Engine, Warehouses: cfg.Warehouses,
		DurationS: cfg.Duration.Seconds(), WarmupS: cfg.Warmup.Seconds()}
	loads, err := decode[struct {
		Meta struct {
			Warehouses int `json:"warehouses"`
		} `json:"meta"`
	}](run, "tpcc.Load")
	if err != nil {
		return nil, err
	}
	if n := len(loads); n > 0 && loads[n-1].Meta.Warehouses > 0 {
		o.Warehouses = loads[n-1].Meta.Warehouses
	}
	cells, err := decode[result.Cell](run, "drive.Cell")
	if err != nil {
		return nil, err
	}
	type key struct {
		label   string
		streams int
	}
	groups := map[key][]result.Cell{}
	var order []string
	series := map[string]*OLTPSeries{}
	var disk, cut []string
	for _, c := range cells {
		if o.Engine == "" {
			o.Engine = c.Engine
		}
		if o.Workload == "" {
			o.Workload = c.Workload
		}
		data := dataLocation(run.Machine, c)
		label := placementLabel(c)
		switch data {
		case "local":
			label += fmt.Sprintf(", local data (node %d)", c.DataNode)
		case "remote":
			label += fmt.Sprintf(", remote data (node %d)", c.DataNode)
		}
		if _, ok := series[label]; !ok {
			series[label] = &OLTPSeries{Label: label, Placement: c.Placement, Data: data, DataNode: c.DataNode,
				SMT: c.Cores > 0 && len(c.CPUs) > c.Cores}
			order = append(order, label)
		}
		k := key{label, c.Streams}
		groups[k] = append(groups[k], c)
		if c.Usage != nil && c.Usage.ReadFromDisk {
			disk = append(disk, fmt.Sprintf("%d", c.Index))
		}
		if c.Interrupted {
			cut = append(cut, fmt.Sprintf("%d", c.Index))
		}
	}
	for _, label := range order {
		s := series[label]
		var streams []int
		for k := range groups {
			if k.label == label {
				streams = append(streams, k.streams)
			}
		}
		slices.Sort(streams)
		for _, n := range streams {
			s.Points = append(s.Points, oltpPoint(groups[key{label, n}]))
		}
		o.Series = append(o.Series, *s)
	}
	if len(disk) > 0 {
		o.Notes = append(o.Notes, "cells "+strings.Join(disk, ", ")+" read from disk during the measured window: the data was not fully cached, so they measure storage too")
	}
	if len(cut) > 0 {
		o.Notes = append(o.Notes, "cells "+strings.Join(cut, ", ")+" were cut short (Ctrl-C): their figures cover the time measured")
	}
	if len(cells) == 0 {
		o.Notes = append(o.Notes, "the run stored no cells")
	}
	return o, nil
}

// placementLabel names a cell's placement for people.
func placementLabel(c result.Cell) string {
	switch {
	case c.Placement != "":
		return c.Placement
	case len(c.CPUs) > 0:
		return "all CPUs"
	}
	return "not pinned"
}

// dataLocation says whether a cell's data node is the node of all its
// CPUs ("local"), another ("remote"), or was not placed ("").
func dataLocation(t *result.Topology, c result.Cell) string {
	if c.DataNode < 0 {
		return ""
	}
	if t == nil || len(c.CPUs) == 0 {
		return "placed"
	}
	for _, id := range c.CPUs {
		cpu, ok := t.CPU(id)
		if !ok || cpu.Node != c.DataNode {
			return "remote"
		}
	}
	return "local"
}

func oltpPoint(cells []result.Cell) OLTPPoint {
	c0 := cells[0]
	p := OLTPPoint{Streams: c0.Streams, Repeats: len(cells), Cores: c0.Cores, CPUs: c0.CPUs}
	var tps, p95, busy []float64
	p.SecMin = -1
	for _, c := range cells {
		tps = append(tps, c.TPS)
		p95 = append(p95, c.Total.P95US/1000)
		if c.Usage != nil {
			busy = append(busy, c.Usage.BusyPct(c.CPUs))
			p.ReadFromDisk = p.ReadFromDisk || c.Usage.ReadFromDisk
		}
		p.Interrupted = p.Interrupted || c.Interrupted
		// Whole seconds only: the last one may be partial.
		whole := int(c.Measured / time.Second)
		for i, n := range c.PerSecond {
			if i >= whole {
				break
			}
			v := float64(n)
			if p.SecMin < 0 || v < p.SecMin {
				p.SecMin = v
			}
			p.SecMax = max(p.SecMax, v)
		}
	}
	if p.SecMin < 0 {
		p.SecMin = 0
	}
	p.TPS, p.TPSMin, p.TPSMax = stats.Median(tps), slices.Min(tps), slices.Max(tps)
	if p.Cores > 0 {
		p.TPSPerCore = p.TPS / float64(p.Cores)
	}
	p.P95MS, p.P95MSMin, p.P95MSMax = stats.Median(p95), slices.Min(p95), slices.Max(p95)
	p.BusyPct = stats.Median(busy)
	return p
}

// queryRunConfig is the part of run report's stored configuration the
// report reads.
type queryRunConfig struct {
	Engine   string        `json:"engine"`
	Rows     int64         `json:"rows"`
	Duration time.Duration `json:"duration_ns"`
	Warmup   time.Duration `json:"warmup_ns"`
}

func buildReporting(run *result.Run) (*Reporting, error) {
	var cfg queryRunConfig
	if len(run.Config) > 0 {
		if err := json.Unmarshal(run.Config, &cfg); err != nil {
			return nil, fmt.Errorf("reading the configuration of run %d: %w", run.ID, err)
		}
	}
	q := &Reporting{Run: run.ID, Engine: cfg.Engine, Rows: cfg.Rows, DurationS: cfg.Duration.Seconds(), WarmupS: cfg.Warmup.Seconds()}
	loads, err := decode[result.BulkLoad](run, "transtats.Load")
	if err != nil {
		return nil, err
	}
	if len(loads) > 0 {
		q.Load = &loads[len(loads)-1]
		if q.Rows == 0 {
			q.Rows = q.Load.Rows
		}
	}
	infos, err := decode[struct {
		Version string `json:"version"`
	}](run, "engine.Info")
	if err != nil {
		return nil, err
	}
	if len(infos) > 0 {
		q.Version = infos[0].Version
	}
	if q.Plans, err = decode[result.PlanFinding](run, "transtats.PlanFinding"); err != nil {
		return nil, err
	}
	cells, err := decode[result.QueryCell](run, "transtats.QueryCell")
	if err != nil {
		return nil, err
	}
	type key struct {
		query        string
		streams, dop int
	}
	groups := map[key][]result.QueryCell{}
	var keys []key
	for _, qc := range cells {
		if qc.Error != "" {
			q.Errors = append(q.Errors, fmt.Sprintf("%s: %s", qc.Query, qc.Error))
		}
		if qc.Cell == nil {
			continue
		}
		if q.Engine == "" {
			q.Engine = qc.Cell.Engine
		}
		k := key{qc.Query, qc.Cell.Streams, max(qc.Cell.DOP, 1)}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], qc)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.query != b.query {
			return a.query < b.query
		}
		if a.dop != b.dop {
			return a.dop < b.dop
		}
		return a.streams < b.streams
	})
	points := map[key]QueryPoint{}
	for _, k := range keys {
		g := groups[k]
		p := QueryPoint{Streams: k.streams, DOP: k.dop, Repeats: len(g)}
		var qph, mean, p95 []float64
		for _, qc := range g {
			qph = append(qph, qc.QueriesPerHour)
			mean = append(mean, qc.Cell.Total.MeanUS/1000)
			p95 = append(p95, qc.Cell.Total.P95US/1000)
			p.Errors += qc.Cell.Total.Errors
		}
		p.QPH, p.QPHMin, p.QPHMax = stats.Median(qph), slices.Min(qph), slices.Max(qph)
		p.MeanMS, p.P95MS = stats.Median(mean), stats.Median(p95)
		points[k] = p
	}
	// Speedup against DOP 1 at the same query and streams, from medians.
	for k, p := range points {
		if base, ok := points[key{k.query, k.streams, 1}]; ok && base.QPH > 0 {
			p.Speedup = p.QPH / base.QPH
			points[k] = p
		}
	}
	for _, k := range keys { // by query, DOP, streams
		n := len(q.ByDOP)
		if n == 0 || q.ByDOP[n-1].Query != k.query || q.ByDOP[n-1].DOP != k.dop {
			q.ByDOP = append(q.ByDOP, QuerySeries{Query: k.query, DOP: k.dop})
			n++
		}
		q.ByDOP[n-1].Points = append(q.ByDOP[n-1].Points, points[k])
	}
	byStreams := slices.Clone(keys)
	sort.Slice(byStreams, func(i, j int) bool {
		a, b := byStreams[i], byStreams[j]
		if a.query != b.query {
			return a.query < b.query
		}
		if a.streams != b.streams {
			return a.streams < b.streams
		}
		return a.dop < b.dop
	})
	for _, k := range byStreams {
		n := len(q.ByStreams)
		if n == 0 || q.ByStreams[n-1].Query != k.query || q.ByStreams[n-1].Streams != k.streams {
			q.ByStreams = append(q.ByStreams, QuerySeries{Query: k.query, Streams: k.streams})
			n++
		}
		q.ByStreams[n-1].Points = append(q.ByStreams[n-1].Points, points[k])
	}
	return q, nil
}

func buildIO(run *result.Run) (*IO, error) {
	probes, err := decode[result.IOProbe](run, "result.IOProbe")
	if err != nil {
		return nil, err
	}
	io := &IO{Run: run.ID}
	if len(probes) > 0 {
		io.Probe = &probes[len(probes)-1]
		return io, nil
	}
	// Interrupted before the summary: the patterns alone.
	pats, err := decode[result.IOPattern](run, "result.IOPattern")
	if err != nil {
		return nil, err
	}
	io.Probe = &result.IOProbe{Patterns: pats, Interrupted: true}
	return io, nil
}

// buildModel predicts 1, 2, 4 and 8 sockets of the probed CPU.
func buildModel(mem *Memory, o *OLTP, mach *Machine) *Model {
	m := &Model{ProbeRun: mem.Run, GHz: mem.GHz}
	s := mem.Summary
	if s == nil || !(mem.GHz > 0) {
		m.Notes = append(m.Notes, fmt.Sprintf("run %d stored no memlat.Summary with a clock and DRAM latency: no prediction", mem.Run))
		return m
	}
	m.LocalNS = s.LocalNS
	what := "the NUMA matrix's local latency"
	if !(m.LocalNS > 0) {
		m.LocalNS, what = s.DRAMNS4K, "the fully random chain's DRAM latency with 4 KiB pages"
	}
	if !(m.LocalNS > 0) {
		m.LocalNS, what = s.DRAMNS2M, "the fully random chain's DRAM latency with 2 MiB pages"
	}
	if !(m.LocalNS > 0) {
		m.Notes = append(m.Notes, fmt.Sprintf("run %d measured no DRAM latency: no prediction", mem.Run))
		return m
	}
	m.Notes = append(m.Notes, fmt.Sprintf("local latency %s ns is %s (run %d, %s working set); clock %s GHz measured by the same probe",
		fmtF(m.LocalNS, 1), what, mem.Run, units.Bytes(s.WorkingSetBytes), fmtF(mem.GHz, 2)))
	if s.RemoteNS > 0 {
		m.RemoteNS = s.RemoteNS
		m.Notes = append(m.Notes, fmt.Sprintf("remote latency %s ns is the mean of the matrix's off-diagonal cells", fmtF(m.RemoteNS, 1)))
	} else {
		m.RemoteNS, m.RemoteAssumed = m.LocalNS*assumedRemoteRatio, true
		m.Notes = append(m.Notes, fmt.Sprintf("this machine has one NUMA node, so remote latency cannot be measured: it is assumed to be %s× local = %s ns (docs/model.md's 2-socket example, 67 ns local, 125 ns remote); 'numalab model --from-run %d --remote-ns N' models another",
			fmtF(assumedRemoteRatio, 2), fmtF(m.RemoteNS, 1), mem.Run))
	}
	m.CoresPerSocket = 1
	if mach != nil && mach.Topology != nil {
		per := map[int]int{}
		for _, c := range mach.Topology.Cores {
			per[c.Package]++
		}
		least := 0
		for _, n := range per {
			if least == 0 || n < least {
				least = n
			}
		}
		m.CoresPerSocket = max(least, 1)
	}
	m.Workload = model.Default()
	m.Method = fmt.Sprintf("docs/model.md's default workload (I = %s instructions, m = %s): no OLTP run to fit", fmtF(model.DefaultInstructions, 0), fmtF(model.DefaultMiss, 2))
	if o != nil {
		fitOLTP(m, o)
	}
	mc := model.Machine{Source: fmt.Sprintf("run %d", mem.Run), LocalNS: m.LocalNS, RemoteNS: m.RemoteNS,
		CoresPerSocket: m.CoresPerSocket, Locality: -1}
	smt := []int{1}
	if mach != nil && mach.Threads > 1 {
		smt = append(smt, mach.Threads)
	}
	t, err := model.Evaluate(m.Workload, mc, model.Grid{GHz: []float64{mem.GHz}, SMT: smt, Sockets: ModelSockets})
	if err != nil {
		m.Notes = append(m.Notes, "evaluating the model: "+err.Error())
		return m
	}
	m.Table = t
	return m
}

// fitOLTP calibrates the workload to the OLTP run's one-stream cells: one
// stream keeps exactly one core busy, so its tps is the per-core rate.
// Local (or unplaced) data at the local latency; where remote data was
// measured too, at the measured remote latency: two points fit both I and
// m, one point fits I with m kept at its default.
func fitOLTP(m *Model, o *OLTP) {
	var local, remote *OLTPPoint
	var localLabel, remoteLabel string
	for i := range o.Series {
		s := &o.Series[i]
		for j := range s.Points {
			p := &s.Points[j]
			if p.Streams != 1 || !(p.TPS > 0) {
				continue
			}
			switch s.Data {
			case "remote":
				if remote == nil || p.TPS > remote.TPS {
					remote, remoteLabel = p, s.Label
				}
			default:
				if local == nil || p.TPS > local.TPS {
					local, localLabel = p, s.Label
				}
			}
		}
	}
	if local == nil {
		m.Notes = append(m.Notes, fmt.Sprintf("OLTP run %d has no one-stream cell on local data: the workload is not fitted", o.Run))
		return
	}
	m.OLTPRun = o.Run
	lp := model.Point{LatencyNS: m.LocalNS, GHz: m.GHz, TPSPerCore: local.TPS}
	m.Points = []model.Point{lp}
	if remote != nil && !m.RemoteAssumed {
		rp := model.Point{LatencyNS: m.RemoteNS, GHz: m.GHz, TPSPerCore: remote.TPS}
		f, err := model.FitPoints([]model.Point{lp, rp})
		if err == nil {
			m.Points = append(m.Points, rp)
			m.Fit, m.Workload = &f, f.Workload
			m.Method = fmt.Sprintf("fitted to OLTP run %d: one stream on local data (%s, %s tps) at %s ns and on remote data (%s, %s tps) at %s ns; both I and m fitted",
				o.Run, localLabel, fmtF(local.TPS, 0), fmtF(m.LocalNS, 1), remoteLabel, fmtF(remote.TPS, 0), fmtF(m.RemoteNS, 1))
			return
		}
		m.Notes = append(m.Notes, "fitting I and m to local and remote data failed, so m is kept at its default: "+err.Error())
	}
	// One point: C = f·10⁹/tps = I·((1 − m) + m·L·f), m fixed.
	w := model.Default()
	c := m.GHz * 1e9 / local.TPS
	w.Instructions = c / ((1 - w.Miss) + w.Miss*model.LatencyCycles(m.LocalNS, m.GHz))
	m.Workload = w
	m.Method = fmt.Sprintf("fitted to OLTP run %d: one stream on %s gave %s tps at %s ns and %s GHz, i.e. %s cycles per transaction; with a single latency point I and m cannot both be fitted, so m is kept at the default %s and I = %s instructions is fitted",
		o.Run, localLabel, fmtF(local.TPS, 0), fmtF(m.LocalNS, 1), fmtF(m.GHz, 2), fmtF(c, 0), fmtF(w.Miss, 2), fmtF(w.Instructions, 0))
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
