package report

import (
	"bytes"
	"encoding/json"
	"html"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// number parses a printed figure: "1,077", "295.6".
func number(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	if err != nil {
		t.Fatalf("printed figure %q: %v", s, err)
	}
	return v
}

// decimals is the precision a figure was printed with.
func decimals(s string) int {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

var (
	// "DRAM latency 295.6 ns", "DRAM latency (the model's): 295.6 ns",
	// "the DRAM latency, 295.6 ns", "DRAM latency, the figure the model
	// uses: 295.6 ns".
	dramRE = regexp.MustCompile(`DRAM latency[^0-9\n]{0,40}?([0-9][0-9,]*\.[0-9]+) ns`)
	// "295.6 ns = 1,077 cycles", the form of every cycle count given with
	// its latency in prose.
	cyclesRE = regexp.MustCompile(`([0-9][0-9,]*\.[0-9]+) ns = ([0-9][0-9,]*) cycles`)
	// The findings' peak: "peak 17,500 tps at 2 streams on smt=on, 8,750 tps per core".
	peakRE = regexp.MustCompile(`peak ([0-9,]+) tps at (\d+) streams on (.+?), ([0-9,.]+) tps per core`)
	// The text ladder table: working set, ns, min-max ns, cycles.
	ladderRowRE = regexp.MustCompile(`(?m)^\s+[0-9.]+[KMG]?i?B\s+([0-9.]+)\s+[0-9.]+-[0-9.]+\s+([0-9]+)\s*$`)
	// The text OLTP table: label, streams, repeats, tps, min-max, seconds, tps/core.
	oltpRowRE = regexp.MustCompile(`(?m)^\s+(\S.*?)\s+(\d+)\s+(\d+)\s+([0-9,.]+)\s+[0-9,.]+-[0-9,.]+\s+[0-9,.]+-[0-9,.]+\s+([0-9,.]+)\s+[0-9.]+\s+[0-9]+\s`)
)

// Every DRAM latency, cycle count and tps-per-core figure in the HTML, text
// and JSON reports of the fixture stores is the one defined figure, to the
// precision printed: the DRAM latency is Memory.DRAM (the model's local
// latency), cycles are ns × the run's one clock, and tps per core is tps
// over the physical cores the streams ran on, in the OLTP table, the
// findings and the model's fit alike.
func TestOneFigurePerQuantity(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			r := build(t, sc.runs(t))
			d := r.Memory.DRAM
			if d == nil || r.Model == nil {
				t.Fatal("the fixture has no DRAM latency or no model")
			}
			var h, txt, js bytes.Buffer
			if err := WriteHTML(&h, r); err != nil {
				t.Fatal(err)
			}
			if err := WriteText(&txt, r); err != nil {
				t.Fatal(err)
			}
			if err := WriteJSON(&js, r); err != nil {
				t.Fatal(err)
			}
			outputs := map[string]string{"html": html.UnescapeString(h.String()), "text": txt.String()}

			for name, out := range outputs {
				// DRAM latency: the defined figure wherever it is named.
				ms := dramRE.FindAllStringSubmatch(out, -1)
				if len(ms) < 2 {
					t.Errorf(
						"%s: %d mentions of DRAM latency, want the finding and the memory section's definition at least", name, len(ms))
				}
				for _, m := range ms {
					if want := FmtF(d.NS, decimals(m[1])); m[1] != want {
						t.Errorf("%s: %q gives %s ns, want the defined DRAM latency %s ns", name, m[0], m[1], want)
					}
				}
				// Cycles: ns × the run's clock, within the rounding of the
				// printed ns and cycles.
				for _, m := range cyclesRE.FindAllStringSubmatch(out, -1) {
					ns, cyc := number(t, m[1]), number(t, m[2])
					slack := 0.5*math.Pow(10, -float64(decimals(m[1])))*d.GHz + 0.5
					if math.Abs(cyc-ns*d.GHz) > slack {
						t.Errorf("%s: %q: %v cycles is not %v ns × %v GHz", name, m[0], cyc, ns, d.GHz)
					}
				}
				if !strings.Contains(out, FmtF(d.GHz, 2)+" GHz") {
					t.Errorf("%s: the clock %s GHz is not stated", name, FmtF(d.GHz, 2))
				}
				// tps per core in the findings' peak.
				peaks := peakRE.FindAllStringSubmatch(out, -1)
				if len(peaks) == 0 {
					t.Errorf("%s: no finding of the OLTP peak (%s) found", name, peakRE)
				}
				for _, m := range peaks {
					streams, _ := strconv.Atoi(m[2])
					p := oltpPointOf(r, m[3], streams)
					if p == nil {
						t.Errorf("%s: %q names no measured cell", name, m[0])
						continue
					}
					if m[4] != FmtN(p.TPS/float64(p.Cores)) || m[1] != FmtN(p.TPS) {
						t.Errorf("%s: %q, want %s tps and %s tps per core", name, m[0], FmtN(p.TPS), FmtN(p.TPS/float64(p.Cores)))
					}
				}
			}
			// The text ladder's cycles column.
			lrows := ladderRowRE.FindAllStringSubmatch(txt.String(), -1)
			if len(lrows) == 0 {
				t.Error("text: no ladder rows found")
			}
			for _, m := range lrows {
				ns, cyc := number(t, m[1]), number(t, m[2])
				if math.Abs(cyc-ns*d.GHz) > 0.05*d.GHz+0.5 {
					t.Errorf("text: ladder row %q: %v cycles is not %v ns × %v GHz", strings.TrimSpace(m[0]), cyc, ns, d.GHz)
				}
			}
			// The text OLTP table's tps/core column.
			rows := oltpRowRE.FindAllStringSubmatch(txt.String(), -1)
			if len(rows) == 0 {
				t.Error("text: no OLTP table rows found")
			}
			for _, m := range rows {
				streams, _ := strconv.Atoi(m[2])
				p := oltpPointOf(r, strings.TrimSpace(m[1]), streams)
				if p == nil {
					t.Errorf("text: row %q names no measured cell", m[0])
					continue
				}
				if m[5] != FmtN(p.TPS/float64(p.Cores)) {
					t.Errorf("text: row %q gives %s tps/core, want %s", strings.TrimSpace(m[0]), m[5], FmtN(p.TPS/float64(p.Cores)))
				}
			}

			// JSON: the same figures, unrounded.
			var j struct {
				Memory struct {
					GHz  float64 `json:"ghz"`
					DRAM DRAM    `json:"dram"`
				} `json:"memory"`
				OLTP  OLTP              `json:"oltp"`
				Model calib.Calibration `json:"model"`
			}
			if err := json.Unmarshal(js.Bytes(), &j); err != nil {
				t.Fatal(err)
			}
			measured := j.Model.LocalNS // several nodes: a multi-socket local latency
			if j.Model.RemoteAssumed {
				measured = j.Model.OneSocketNS // one node: one socket's
			}
			if j.Memory.DRAM.NS != measured || j.Memory.DRAM.NS != d.NS {
				t.Errorf("json: DRAM latency %v, model's measured latency %v: want both %v", j.Memory.DRAM.NS, measured, d.NS)
			}
			if j.Memory.GHz != d.GHz || j.Model.GHz != d.GHz || j.Memory.DRAM.Cycles != d.NS*d.GHz {
				t.Errorf("json: clocks %v (memory), %v (model), cycles %v: want one clock %v and %v cycles",
					j.Memory.GHz, j.Model.GHz, j.Memory.DRAM.Cycles, d.GHz, d.NS*d.GHz)
			}
			for _, row := range j.Model.Table.Rows {
				if row.GHz == d.GHz && math.Abs(row.LatencyCycles-row.LatencyNS*d.GHz) > 1e-6*row.LatencyCycles {
					t.Errorf("json: model row at %v ns gives %v cycles, want ns × %v GHz", row.LatencyNS, row.LatencyCycles, d.GHz)
				}
			}
			one := 0
			for _, s := range j.OLTP.Series {
				for _, p := range s.Points {
					if p.Cores < 1 || p.Cores > min(p.Streams, len(p.CPUs)) || p.TPSPerCore != p.TPS/float64(p.Cores) {
						t.Errorf("json: %s, %d streams: %v tps per core over %d cores, want tps/cores with at most one core a stream",
							s.Label, p.Streams, p.TPSPerCore, p.Cores)
					}
					if p.Streams == 1 {
						one++
						if p.Cores != 1 {
							t.Errorf("json: %s, one stream ran on %d cores, want 1", s.Label, p.Cores)
						}
					}
				}
			}
			// The model is fitted to tps per core as the OLTP table gives
			// it: the fit's points at each latency are one-stream cells
			// whose median is a one-stream point's tps per core.
			byLatency := map[float64][]float64{}
			for _, fp := range j.Model.Points {
				byLatency[fp.LatencyNS] = append(byLatency[fp.LatencyNS], fp.TPSPerCore)
			}
			for l, v := range byLatency {
				found := false
				for _, s := range j.OLTP.Series {
					if p := PointAt(s.Points, 1); p != nil && math.Abs(p.TPSPerCore-stats.Median(v)) <= 1e-9*p.TPSPerCore {
						found = true
					}
				}
				if !found {
					t.Errorf(
						"json: the median of the model's points at %v ns, %v tps per core, is no one-stream point's tps per core",
						l, stats.Median(v))
				}
			}
			if one == 0 || len(j.Model.Points) == 0 {
				t.Errorf("json: %d one-stream cells, %d model points: the fixture should have both", one, len(j.Model.Points))
			}
		})
	}
}

// oltpPointOf finds a measured cell by its series label and streams.
func oltpPointOf(r *Report, label string, streams int) *OLTPPoint {
	for _, s := range r.OLTP.Series {
		if s.Label == label {
			return PointAt(s.Points, streams)
		}
	}
	return nil
}

// Plateaus are found in bytes touched and drawn on the working-set axis:
// with 256 B slots a ladder touches a quarter of its working set, so a
// plateau ending at 2 MiB touched is drawn ending at 8 MiB.
func TestWorkingSetAt(t *testing.T) {
	l := syntheticRuns()[0]
	m, err := buildMemory(stored(t, []*result.Run{l})[0])
	if err != nil {
		t.Fatal(err)
	}
	ladder := m.Ladders[0]
	for _, tc := range []struct {
		touched int64
		want    float64
	}{{2 << 20, 8 << 20}, {12 << 10, 48 << 10}, {256 << 20, 1 << 30}} {
		if got := workingSetAt(ladder, tc.touched); math.Abs(got-tc.want) > 1e-6*tc.want {
			t.Errorf("workingSetAt(%d touched) = %v, want %v", tc.touched, got, tc.want)
		}
	}
}
