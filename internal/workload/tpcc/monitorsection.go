package tpcc

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
)

// AnchorMonitor is the monitoring-cost section.
const AnchorMonitor = "monitor"

// MonitorReport is what the report shows of a monitoring run ('run oltp
// --monitor'): one section, in the HTML only. A report takes one only
// when named.
var MonitorReport = report.Workload{
	Kinds: []string{monitor.RunKind},
	Build: func(_ *report.Report, runs []*result.Run) (report.Section, error) {
		m, err := buildMonitor(runs[0])
		if err != nil {
			return nil, err
		}
		return &MonitorSection{Run: m}, nil
	},
}

// MonitorSection is the monitoring run's section.
type MonitorSection struct {
	Run *MonitorRun `json:"monitor,omitempty"`
}

var _ report.Section = (*MonitorSection)(nil)

// Text: the monitoring cost is shown in the HTML only (its text is 'run
// oltp --monitor's own).
func (sec *MonitorSection) Text(*strings.Builder, *report.Report) {}

// CSV: none, as before the section moved here.
func (sec *MonitorSection) CSV(report.CSVRow) {}

// Findings: the verdicts are in the section's table.
func (sec *MonitorSection) Findings(*report.Report, report.Say, report.Say) {}

// MonitorRun is a 'numalab run oltp --monitor' run: what each facility cost.
type MonitorRun struct {
	Run      int64            `json:"run"`
	Config   RunConfig        `json:"config"`
	Analysis monitor.Analysis `json:"analysis"`
	// Paced is what each facility added at the run's paced load; nil
	// for a run at saturation only.
	Paced *monitor.PacedAnalysis `json:"paced,omitempty"`
}

// buildMonitor reads a monitoring run: its stored analysis, or one made
// from its cells when the run stopped before storing it.
func buildMonitor(run *result.Run) (*MonitorRun, error) {
	m := &MonitorRun{Run: run.ID}
	if len(run.Config) > 0 {
		if err := json.Unmarshal(run.Config, &m.Config); err != nil {
			return nil, fmt.Errorf("reading the configuration of run %d: %w", run.ID, err)
		}
	}
	an, err := monitor.KindAnalysis.Last(run)
	if err != nil {
		return nil, err
	}
	if an == nil {
		cells, err := monitor.KindCell.All(run)
		if err != nil {
			return nil, err
		}
		a := monitor.Analyze(cells)
		an = &a
	}
	m.Analysis = *an
	if m.Paced, err = monitor.KindPacedAnalysis.Last(run); err != nil {
		return nil, err
	}
	if m.Paced == nil && m.Config.MonitorLoad > 0 {
		cells, err := monitor.KindCell.All(run)
		if err != nil {
			return nil, err
		}
		pa := monitor.AnalyzePaced(cells, m.Config.MonitorLoad)
		m.Paced = &pa
	}
	return m, nil
}

// HTML is the table of what each facility cost.
func (sec *MonitorSection) HTML(_ *report.Report) []report.HTMLSection {
	m := sec.Run
	a := m.Analysis
	where := a.Placement
	if where == "" {
		where = "all CPUs"
	}
	s := report.HTMLSection{ID: AnchorMonitor, Title: "What monitoring costs",
		Intro: fmt.Sprintf("Run %d: tpcc-ro on %s, %d streams on %s, each facility off and on in interleaved pairs "+
			"of %v cells (after %v warm-up), %d repeats a side. "+
			"The ratio is tps on over tps off: the Hodges-Lehmann estimate with its distribution-free 95%% interval; "+
			"cost = 1 − ratio; \"cannot tell\" when the interval holds 1. "+
			"What on and off mean for each facility: docs/monitoring.md.",
			m.Run, m.Config.Engine, a.Streams, where, m.Config.Duration, m.Config.Warmup, m.Config.Repeat)}
	t := report.Table{ID: AnchorMonitor + "-cost", Caption: "Throughput with each facility off and on (median " +
		"tps over repeats, with its interval where there are enough), and the cost",
		Head: []string{"facility", "tps off", "tps on", "ratio on/off", "interval", "n off+on", "cost"}}
	for _, o := range a.Overheads {
		iv := "too few repeats"
		if o.Ratio.HasCI {
			iv = fmt.Sprintf("%.3f to %.3f", o.Ratio.Lo, o.Ratio.Hi)
		}
		t.Rows = append(t.Rows, []string{o.Facility, o.Off.String(), o.On.String(), fmt.Sprintf("%.3f", o.Ratio.Estimate), iv,
			fmt.Sprintf("%d+%d", o.Ratio.NA, o.Ratio.NB), o.Cost()})
	}
	s.Tables = append(s.Tables, t)
	if p := m.Paced; p != nil {
		pt := report.Table{ID: AnchorMonitor + "-paced",
			Caption: fmt.Sprintf("At a paced load, %.2f of capacity (%s calls/s, open loop): "+
				"what each facility added, on − off, Hodges-Lehmann shift [95%% interval] n off+on; latency from intended start",
				p.Fraction, report.FmtN(p.Rate)),
			Head: []string{"facility", "tps off", "tps on", "CPU busy % added (points)", "p50 µs added", "p99 µs added"}}
		for _, o := range p.Overheads {
			pt.Rows = append(pt.Rows,
				[]string{o.Facility, o.Off.String(), o.On.String(), o.CPUAdded.String(), o.P50Added.String(), o.P99Added.String()})
		}
		s.Tables = append(s.Tables, pt)
	}
	return []report.HTMLSection{s}
}
