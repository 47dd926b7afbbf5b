package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
)

// CSVHeader is the header of WriteCSV's one long table: one row per
// number, with the run it comes from, the series and x value it belongs
// to, its unit and its spread (min and max; empty when none is stored).
var CSVHeader = []string{"section", "run", "series", "x_name", "x", "y_name", "y", "unit", "min", "max", "repeats"}

// WriteCSV writes every charted number of the report as one long table
// (see CSVHeader), for spreadsheets and plotting tools.
func WriteCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	row := func(section string, run int64, series, xName string, x float64, yName string, y float64, unit string,
		lo, hi *float64, repeats int) {
		rec := []string{section, strconv.FormatInt(run, 10), series, xName, num(x), yName, num(y), unit, "", "", ""}
		if lo != nil && hi != nil {
			rec[8], rec[9] = num(*lo), num(*hi)
		}
		if repeats > 0 {
			rec[10] = strconv.Itoa(repeats)
		}
		cw.Write(rec)
	}
	cw.Write(CSVHeader)
	if m := r.Memory; m != nil {
		for _, l := range m.Ladders {
			name := fmt.Sprintf("%s chain, %s pages", l.Chain, pagesLabel(l))
			for _, p := range l.Points {
				row("memory", m.Run, name, "working_set_bytes", float64(p.Bytes), "latency", p.NS.Median, "ns", &p.NS.Min,
					&p.NS.Max, p.NS.Samples)
				row("memory",
					m.Run, name, "working_set_bytes", float64(p.Bytes), "latency", p.NS.Median*m.GHz, "cycles", nil, nil, p.NS.Samples)
			}
		}
		if mx := m.Matrix; mx != nil {
			for i, rowNS := range mx.NS {
				for j, st := range rowNS {
					row("numa_matrix", m.Run, fmt.Sprintf("thread on node %d", mx.CPUNodes[i]), "memory_node", float64(mx.MemNodes[j]),
						"latency", st.Median, "ns", &st.Min, &st.Max, st.Samples)
				}
			}
		}
		if ml := m.MLP; ml != nil {
			for _, p := range ml.Points {
				row("memory_parallelism",
					m.Run, fmt.Sprintf("%d threads", p.Threads), "chains", float64(p.Chains), "latency_per_load",
					p.NSPerLoad.Median, "ns", &p.NSPerLoad.Min, &p.NSPerLoad.Max, p.NSPerLoad.Samples)
			}
		}
		if bw := m.Bandwidth; bw != nil {
			for _, p := range bw.Read {
				row("memory_bandwidth",
					m.Run, "sequential read", "threads", float64(p.Threads), "bandwidth", p.GBps, "GB/s", nil, nil, 0)
			}
		}
	}
	if o := r.OLTP; o != nil {
		for _, s := range o.Series {
			for _, p := range s.Points {
				x := float64(p.Streams)
				row("oltp", o.Run, s.Label, "streams", x, "throughput", p.TPS, "tps", &p.TPSMin, &p.TPSMax, p.Repeats)
				row("oltp",
					o.Run, s.Label, "streams", x, "throughput_per_second_of_window", p.TPS, "tps", &p.SecMin, &p.SecMax, p.Repeats)
				row("oltp", o.Run, s.Label, "streams", x, "throughput_per_core", p.TPSPerCore, "tps/core", nil, nil, p.Repeats)
				row("oltp", o.Run, s.Label, "streams", x, "p95_latency", p.P95MS, "ms", nil, nil, p.Repeats)
			}
		}
	}
	for _, sec := range r.placed(true) {
		sec.CSV(row)
	}
	if q := r.Reporting; q != nil {
		for _, s := range q.ByDOP {
			name := fmt.Sprintf("%s DOP %d", s.Query, s.DOP)
			for _, p := range s.Points {
				x := float64(p.Streams)
				row("reporting", q.Run, name, "streams", x, "throughput", p.QPH, "queries/h", &p.QPHMin, &p.QPHMax, p.Repeats)
				row("reporting", q.Run, name, "streams", x, "mean_latency", p.MeanMS, "ms", nil, nil, p.Repeats)
				row("reporting", q.Run, name, "streams", x, "p95_latency", p.P95MS, "ms", nil, nil, p.Repeats)
				if p.Speedup > 0 {
					row("reporting", q.Run, name, "streams", x, "speedup_vs_dop1", p.Speedup, "ratio", nil, nil, p.Repeats)
				}
			}
		}
	}
	if pd := r.PlacedDOP; pd != nil {
		csvPlacedDOP(pd, row)
	}
	if q := r.Reporting; q != nil {
		for _, e := range q.Estimates {
			name := fmt.Sprintf("%s, %d streams", e.Query, e.Streams)
			row("reporting_estimate", q.Run, name, "dop", float64(e.DOP), "estimated_speedup", e.Estimated, "ratio", nil, nil, 0)
			row("reporting_estimate", q.Run, name, "dop", float64(e.DOP), "measured_speedup", e.Measured, "ratio", nil, nil, 0)
		}
	}
	if x := r.IO; x != nil && x.Probe != nil {
		for _, p := range x.Probe.Patterns {
			name := fmt.Sprintf("%s %d B", p.Name, p.BlockSize)
			row("io", x.Run, name, "queue_depth", float64(p.QD), "read_rate", p.Read.IOPS, "IOPS", nil, nil, 0)
			row("io", x.Run, name, "queue_depth", float64(p.QD), "read_bandwidth", p.Read.MBps, "MB/s", nil, nil, 0)
			row("io", x.Run, name, "queue_depth", float64(p.QD), "read_p99_latency", p.Read.P99Us, "us", nil, nil, 0)
		}
	}
	for _, sec := range r.placed(false) {
		sec.CSV(row)
	}
	machineCSV(r, row)
	if md := r.Model; md != nil {
		for _, rw := range md.Table.Rows {
			name := fmt.Sprintf("model, %d threads per core, %s GHz", rw.SMT, num(rw.GHz))
			x := float64(rw.Sockets)
			row("model", md.ProbeRun, name, "sockets", x, "latency", rw.LatencyNS, "ns", nil, nil, 0)
			row("model", md.ProbeRun, name, "sockets", x, "throughput_per_core", rw.TPSPerCore, "tps/core", nil, nil, 0)
			row("model", md.ProbeRun, name, "sockets", x, "throughput", rw.TotalTPS, "tps", nil, nil, 0)
		}
	}
	cw.Flush()
	return cw.Error()
}

// num is the shortest decimal that reads back as v.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
