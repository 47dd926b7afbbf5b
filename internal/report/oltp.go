package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

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
	cells, err := result.KindCell.All(run)
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
		// tps per core has one definition: per physical core the
		// streams ran on. Runs stored before it divided by the
		// placement's cores, so the divisor is worked out again here.
		if run.Machine != nil {
			if used := run.Machine.CoresUsed(c.CPUs, c.SpreadCPUs, c.Streams); used > 0 {
				c.Cores = used
			}
		}
		label, data := c.Series(run.Machine)
		if _, ok := series[label]; !ok {
			series[label] = &OLTPSeries{Label: label, Placement: c.Placement, Data: data, DataNode: c.DataNode,
				SMT: offersSMT(run.Machine, c.CPUs)}
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
		o.Notes = append(o.Notes, "cells "+strings.Join(disk, ", ")+
			" read from disk during the measured window: the data was not fully cached, so they measure storage too")
	}
	if len(cut) > 0 {
		o.Notes = append(o.Notes,
			"cells "+strings.Join(cut, ", ")+" were cut short (Ctrl-C): their figures cover the time measured")
	}
	if len(cells) == 0 {
		o.Notes = append(o.Notes, "the run stored no cells")
	}
	return o, nil
}

func oltpPoint(cells []result.Cell) OLTPPoint {
	c0 := cells[0]
	p := OLTPPoint{Streams: c0.Streams, Repeats: len(cells), Cores: c0.Cores, CPUs: c0.CPUs,
		StreamCPUs: StreamCPUs(c0.CPUs, c0.SpreadCPUs, c0.Streams)}
	var tps, p95, busy []float64
	p.SecMin = -1
	for _, c := range cells {
		p.Unstable = p.Unstable || Unstable(c)
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
	p.TPS, p.TPSMin, p.TPSMax, p.TPSRepeats = stats.Median(tps), slices.Min(tps), slices.Max(tps), tps
	if p.Cores > 0 {
		p.TPSPerCore = p.TPS / float64(p.Cores)
	}
	p.P95MS, p.P95MSMin, p.P95MSMax, p.P95Repeats = stats.Median(p95), slices.Min(p95), slices.Max(p95), p95
	p.BusyPct = stats.Median(busy)
	return p
}

// UnstableBelow is the fraction of its median second under which a cell's
// slowest whole second marks the cell unstable.
const UnstableBelow = 0.5

// Unstable says whether a cell's per-second series is unstable: its
// slowest whole second ran below UnstableBelow of its median second. A
// series of fewer than two whole seconds cannot tell and is not flagged.
func Unstable(c result.Cell) bool {
	whole := min(int(c.Measured/time.Second), len(c.PerSecond))
	if whole < 2 {
		return false
	}
	secs := make([]float64, whole)
	for i := range secs {
		secs[i] = float64(c.PerSecond[i])
	}
	return slices.Min(secs) < UnstableBelow*stats.Median(secs)
}

// offersSMT says whether cpus include two hardware threads of one core.
func offersSMT(t *result.Topology, cpus []int) bool {
	if t == nil {
		return false
	}
	seen := map[int]bool{}
	for _, id := range cpus {
		c, ok := t.CPU(id)
		if !ok || c.Core < 0 {
			continue
		}
		if seen[c.Core] {
			return true
		}
		seen[c.Core] = true
	}
	return false
}
