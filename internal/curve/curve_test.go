package curve

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/golden"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

func TestPlanAndPacer(t *testing.T) {
	tmpl := sweep.Cell{}
	tmpl.Streams = 2
	fr := []float64{0.5, 1}
	cells := Plan(tmpl, fr, 2)
	if len(cells) != 5 {
		t.Fatalf("%d cells, want 1 + 2 fractions × 2 repeats", len(cells))
	}
	for i, c := range cells {
		if c.Index != i || c.Streams != 2 {
			t.Errorf("cell %d: %+v", i, c)
		}
	}
	if cells[3].Repeat != 1 || FractionOf(fr, 3) != 0.5 || FractionOf(fr, 4) != 1 || FractionOf(fr, 0) != 0 {
		t.Errorf("repeat %d, fractions %g %g", cells[3].Repeat, FractionOf(fr, 3), FractionOf(fr, 4))
	}
	pace := Pacer(fr, sweep.Pacing{Arrivals: "uniform", Rate: 99}, 5)
	if p := pace(cells[0], nil); !p.Closed() {
		t.Errorf("capacity cell paced: %+v", p)
	}
	capacity := []*result.Cell{{TPS: 1000}}
	if p := pace(cells[1], capacity); p.Rate != 500 || !p.Uniform || p.Seed != 5 {
		t.Errorf("cell at 0.5 of 1000 tps: %+v", p)
	}
	if p := pace(cells[4], capacity); p.Rate != 1000 {
		t.Errorf("cell at 1.0 of 1000 tps: %+v", p)
	}
	if Rate(0.1, 2) != 1 || Rate(2, 1e9) != 1e6 {
		t.Error("Rate does not keep within its bounds")
	}
}

// cell is a measured open-loop cell at rate with a p99.
func cell(rate, tps, p99 float64, repeat int) *result.Cell {
	return &result.Cell{TPS: tps, Repeat: repeat, Streams: 1,
		Total: result.TxStats{P50US: p99 / 4, P95US: p99 / 2, P99US: p99},
		Pace: &result.Pace{Mode: "rate", Rate: rate, Arrivals: "poisson", Offered: int64(rate * 10),
			Service: result.TxStats{P99US: p99 / 3}},
		Usage: &result.Usage{CPUs: []result.CPUUsage{{BusyPct: rate / 20}, {BusyPct: rate / 40}}}}
}

func TestKnee(t *testing.T) {
	fr := []float64{0.1, 0.2, 0.5, 0.8, 1.0}
	capacity := &result.Cell{TPS: 1000, Streams: 1, Total: result.TxStats{P99US: 900}}
	for _, tc := range []struct {
		name              string
		p99s              []float64
		found             bool
		below, above, est float64
	}{
		// Floor: median of the p99s at 0.1 and 0.2 = 110; limit 220.
		{"knee between 0.5 and 0.8", []float64{100, 120, 150, 440, 5000}, true, 500, 800,
			500 + 300*math.Log(220.0/150)/math.Log(440.0/150)},
		{"knee at the first load past the floor", []float64{100, 120, 1000, 2000, 5000}, true, 200, 500,
			200 + 300*math.Log(220.0/120)/math.Log(1000.0/120)},
		{"never reached", []float64{100, 120, 130, 150, 200}, false, 0, 0, 0},
		// A noisy low load does not make a knee at the floor's loads.
		{"noise in the floor", []float64{100, 400, 150, 150, 900}, true, 800, 1000,
			800 + 200*math.Log(500.0/150)/math.Log(900.0/150)},
	} {
		cells := []*result.Cell{capacity}
		for i, q := range tc.p99s {
			cells = append(cells, cell(fr[i]*1000, fr[i]*1000, q, 0))
		}
		cv := Analyze(cells, fr, 2)
		k := cv.Knee
		if k.Found != tc.found || k.Below != tc.below || k.Above != tc.above || math.Abs(k.Estimate-tc.est) > 1e-6 {
			t.Errorf("%s: %+v (floor %g), want found %v in (%g, %g] about %g",
				tc.name, k, cv.FloorUS, tc.found, tc.below, tc.above, tc.est)
		}
		if k.Found && (k.Estimate < k.Below || k.Estimate > k.Above || k.AboveFraction != k.Above/1000) {
			t.Errorf("%s: estimate outside its bracket: %+v", tc.name, k)
		}
		if !tc.found && len(cv.Notes) == 0 {
			t.Errorf("%s: no note that the knee was not reached", tc.name)
		}
	}
}

func TestAnalyzeRepeats(t *testing.T) {
	fr := []float64{0.1, 0.5, 0.9}
	cells := []*result.Cell{{TPS: 1000, Streams: 2}}
	for r, q := range [][]float64{{100, 150, 1000}, {100, 300, 1000}, {100, 150, 180}} {
		for i, f := range fr {
			cells = append(cells, cell(f*1000, f*1000, q[i], r))
		}
	}
	cv := Analyze(cells, fr, 2)
	if len(cv.Repeats) != 3 || !cv.Repeats[0].Found || cv.Repeats[0].Above != 900 || cv.Repeats[1].Above != 500 ||
		cv.Repeats[2].Found {
		t.Errorf("repeats' knees: %+v", cv.Repeats)
	}
	// Medians: 100, 150, 1000.
	if !cv.Knee.Found || cv.Knee.Below != 500 || cv.Knee.Above != 900 || cv.FloorUS != 100 {
		t.Errorf("knee of the medians: %+v (floor %g)", cv.Knee, cv.FloorUS)
	}
	if len(cv.Points) != 9 || cv.Points[4].Repeat != 1 || cv.Points[4].Fraction != 0.5 {
		t.Errorf("points: %+v", cv.Points)
	}
}

func TestAnalyzeShortfallNoted(t *testing.T) {
	fr := []float64{0.1, 0.5}
	cells := []*result.Cell{{TPS: 1000}, cell(100, 100, 100, 0), cell(500, 450, 120, 0)}
	if cv := Analyze(cells, fr, 2); len(cv.Notes) != 1 {
		t.Errorf("notes without a backlog: %q; want only the knee's", cv.Notes)
	}
	cells[2].Pace.Backlog = 51 // of 5000 due
	cv := Analyze(cells, fr, 2)
	if len(cv.Notes) != 2 || !strings.Contains(cv.Notes[1], "51 of the 5000 calls due") {
		t.Errorf("notes %q; want one on the backlog at 0.5 of capacity", cv.Notes)
	}
	if cv.Points[0].CPUPct != (100.0/20+100.0/40)/2 || Analyze(cells[:1], fr, 2).Capacity != 1000 {
		t.Errorf("CPU %% %g", cv.Points[0].CPUPct)
	}
	if (Analyze([]*result.Cell{{TPS: 1}}, fr, 2)).CapacityCPU != -1 {
		t.Error("an unmonitored cell's CPU is not -1")
	}
}

func TestRenderGolden(t *testing.T) {
	fr := []float64{0.1, 0.2, 0.5, 0.8, 1.0}
	cells := []*result.Cell{{TPS: 1000, Streams: 1, Total: result.TxStats{P99US: 900},
		Usage: &result.Usage{CPUs: []result.CPUUsage{{BusyPct: 99}, {BusyPct: 51}}}}}
	for i, q := range []float64{100, 120, 150, 440, 5000} {
		cells = append(cells, cell(fr[i]*1000, fr[i]*990, q, 0))
	}
	cv := Analyze(cells, fr, 2)
	var text, csv bytes.Buffer
	WriteText(&text, cv)
	text.WriteString(Headline(cv) + "\n")
	golden.Check(t, "testdata/curve.txt", text.Bytes())
	if err := WriteCSV(&csv, cv); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/curve.csv", csv.Bytes())
	js, err := json.MarshalIndent(cv, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/curve.json", append(js, '\n'))
}
