package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// queryRunConfig is the part of run report's stored configuration the
// report reads.
type queryRunConfig struct {
	Engine   string        `json:"engine"`
	Rows     int64         `json:"rows"`
	DOP      []int         `json:"dop"`
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
	q := &Reporting{Run: run.ID, Engine: cfg.Engine, Rows: cfg.Rows, DurationS: cfg.Duration.Seconds(),
		WarmupS: cfg.Warmup.Seconds()}
	var err error
	if q.Load, err = result.KindBulkLoad.Last(run); err != nil {
		return nil, err
	}
	if q.Load != nil {
		if q.Rows == 0 {
			q.Rows = q.Load.Rows
		}
	}
	if q.Plans, err = result.KindPlanFinding.All(run); err != nil {
		return nil, err
	}
	cells, err := result.KindQueryCell.All(run)
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
		p := QueryPoint{Streams: k.streams, DOP: k.dop, Repeats: len(g), Queries: -1}
		var qph, mean, p95, cv []float64
		var ws []*result.WorkerCPUs
		for _, qc := range g {
			if p.Queries < 0 || qc.Cell.Total.Count < p.Queries {
				p.Queries = qc.Cell.Total.Count
			}
			ws = append(ws, qc.Workers)
			qph = append(qph, qc.QueriesPerHour)
			if t := qc.Cell.Total; t.MeanUS > 0 && t.Count > 1 {
				cv = append(cv, t.StdevUS/t.MeanUS)
			}
			mean = append(mean, qc.Cell.Total.MeanUS/1000)
			p95 = append(p95, qc.Cell.Total.P95US/1000)
			p.Errors += qc.Cell.Total.Errors
		}
		p.QPH, p.QPHMin, p.QPHMax, p.QPHRepeats = stats.Median(qph), slices.Min(qph), slices.Max(qph), qph
		p.MeanMS, p.P95MS, p.ResponseCV = stats.Median(mean), stats.Median(p95), stats.Median(cv)
		if w := result.MergeWorkers(ws); w != nil {
			p.Workers = w.Short()
		}
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
