package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/curve"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/workload/null"
)

func TestRunOLTPPaced(t *testing.T) {
	db := tpccDB(t)
	dir := t.TempDir()
	st := filepath.Join(dir, "s.db")
	_, _, err := runCLI(t, "run", "oltp", "--db", db, "--store", st, "--streams", "2", "--duration", "2s",
		"--warmup", "200ms",
		"--rate", "200", "--arrivals", "uniform")
	if err != nil {
		t.Fatal(err)
	}
	r := storedRun(t, st, 1)
	checkStored(t, r)
	if r.Kind != "oltp-paced" {
		t.Errorf("a paced run stored as kind %q", r.Kind)
	}
	if !strings.Contains(r.Command, "--rate 200 --arrivals uniform") {
		t.Errorf("stored command %q", r.Command)
	}
	cells, err := result.KindCell.All(r)
	if err != nil || len(cells) != 1 {
		t.Fatalf("%d cells: %v", len(cells), err)
	}
	p := cells[0].Pace
	if p == nil || p.Mode != "rate" || p.Rate != 200 || p.Arrivals != "uniform" || p.Offered < 398 || p.Offered > 402 {
		t.Errorf("pace %+v", p)
	}
	// A think time, from a sweep file.
	f := filepath.Join(dir, "sweep.toml")
	os.WriteFile(f,
		[]byte("streams = [1]\nduration = \"300ms\"\nwarmup = \"0s\"\nthink = \"20ms\"\nthink_dist = \"exp\"\n"), 0o644)
	out, _, err := runCLI(t, "run", "oltp", "-f", f, "--db", db, "--store", st, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var think []result.Cell
	if err := json.Unmarshal([]byte(out), &think); err != nil || len(think) != 1 {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if p := think[0].Pace; p == nil || p.Mode != "think" || p.ThinkDist != "exponential" || think[0].Total.Count > 100 {
		t.Errorf("think cell: %d calls in 300 ms, pace %+v", think[0].Total.Count, p)
	}
	checkStored(t, storedRun(t, st, 2))
}

func TestRunOLTPCurve(t *testing.T) {
	db := tpccDB(t)
	st := filepath.Join(t.TempDir(), "s.db")
	out, stderr, err := runCLI(t, "run", "oltp", "--db", db, "--store", st, "--streams", "1", "--duration", "500ms",
		"--warmup", "100ms",
		"--curve", "--curve-at", "0.2,0.5", "--arrivals", "uniform")
	if err != nil {
		t.Fatal(err, stderr)
	}
	if !strings.Contains(out, "knee (p99 above 2× its low-load floor") ||
		!strings.Contains(out, "load curve: 1 stream(s)") {
		t.Errorf("output:\n%s", out)
	}
	r := storedRun(t, st, 1)
	checkStored(t, r)
	if !strings.Contains(r.Command, "--curve --curve-at 0.2,0.5 --knee-factor 2") {
		t.Errorf("stored command %q", r.Command)
	}
	cv, err := curve.KindCurve.Last(r)
	if err != nil || cv == nil {
		t.Fatalf("no curve stored: %v", err)
	}
	cells, _ := result.KindCell.All(r)
	if len(cells) != 3 || cells[0].Pace != nil || cells[1].Pace == nil || len(cv.Points) != 2 {
		t.Fatalf("%d cells, %d points", len(cells), len(cv.Points))
	}
	if cv.Capacity != cells[0].TPS || cv.Points[1].Offered != 0.5*cells[0].TPS ||
		cells[2].Pace.Rate != cv.Points[1].Offered || cv.Arrivals != "uniform" {
		t.Errorf("capacity %.0f from %.0f tps; points %+v", cv.Capacity, cells[0].TPS, cv.Points)
	}
}

func TestRunOLTPLoadFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "10", "--think", "1ms"}, "-think: not with --rate"},
		{[]string{"--rate", "-1"}, "-rate:"},
		{[]string{"--rate", "10", "--arrivals", "bursty"}, "-arrivals:"},
		{[]string{"--think", "1ms", "--think-dist", "normal"}, "-think-dist:"},
		{[]string{"--curve", "--rate", "10"}, "-curve: not with"},
		{[]string{"--curve", "--curve-at", "0,1"}, "-curve-at:"},
		{[]string{"--curve", "--knee-factor", "0.5"}, "-knee-factor:"},
		{[]string{"--knee-factor", "3"}, "are for --curve"},
		{[]string{"--rate", "10", "--monitor", "sysmon"}, "-monitor: not with"},
	} {
		_, _, err := runCLI(t, append([]string{"run", "oltp", "--db", filepath.Join(t.TempDir(), "x.db")}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestRunOLTPMonitorTwoLoads: --monitor runs its pairs at saturation, then
// again open-loop at --monitor-load of the capacity the saturated off
// cells measured, and stores both analyses.
func TestRunOLTPMonitorTwoLoads(t *testing.T) {
	db := tpccDB(t)
	st := filepath.Join(t.TempDir(), "s.db")
	out, stderr, err := runCLI(t, "run", "oltp", "--db", db, "--store", st, "--streams", "1", "--duration", "300ms",
		"--warmup", "100ms",
		"--monitor", "series", "--repeat", "2")
	if err != nil {
		t.Fatal(err, stderr)
	}
	r := storedRun(t, st, 1)
	checkStored(t, r)
	if !strings.Contains(r.Command, "--monitor series --monitor-load 0.5") {
		t.Errorf("stored command %q", r.Command)
	}
	cells, _ := monitor.KindCell.All(r)
	if len(cells) != 8 {
		t.Fatalf("%d cells, want 2 repeats × 2 sides × 2 loads", len(cells))
	}
	var off []float64
	for _, c := range cells[:4] {
		if c.Paced || c.Cell.Pace != nil {
			t.Errorf("saturated cell %d paced", c.Cell.Index)
		}
		if !c.On {
			off = append(off, c.Cell.TPS)
		}
	}
	want := 0.5 * stats.Median(off)
	for _, c := range cells[4:] {
		if !c.Paced || c.Cell.Pace == nil || c.Cell.Pace.Rate != want {
			t.Errorf("paced cell %d: %+v, pace %+v; want rate %g", c.Cell.Index, c.Slot, c.Cell.Pace, want)
		}
	}
	pa, err := monitor.KindPacedAnalysis.Last(r)
	if err != nil || pa == nil || pa.Fraction != 0.5 || pa.Rate != want || len(pa.Overheads) != 1 ||
		pa.Overheads[0].P99Added.NA != 2 {
		t.Fatalf("paced analysis %+v (%v)", pa, err)
	}
	an, _ := monitor.KindAnalysis.Last(r)
	if an == nil || an.Overheads[0].Off.N != 2 {
		t.Errorf("saturated analysis %+v mixes in the paced cells", an)
	}
	if !strings.Contains(out, "At a paced load (0.50 of capacity") {
		t.Errorf("output:\n%s", out)
	}
	if _, _, err := runCLI(t, "run", "oltp", "--db", db, "--monitor-load", "0.3"); err == nil ||
		!strings.Contains(err.Error(), "-monitor-load: is for --monitor") {
		t.Errorf("--monitor-load without --monitor: %v", err)
	}
}

// TestRunNullAndInsertPaced: run null and run insert take the pacing
// flags, pace their cells, and store a command that gives them again.
func TestRunNullAndInsertPaced(t *testing.T) {
	dir := t.TempDir()
	st := filepath.Join(dir, "s.db")
	out, errOut, err := runCLI(t, "run", "null", "--engine", "sqlite", "--streams", "2", "--duration",
		"500ms", "--warmup", "0s",
		"--repeat", "1", "--store", st, "--json", "--rate", "400", "--arrivals", "uniform")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var cells []null.Cell
	if err := json.Unmarshal([]byte(out), &cells); err != nil || len(cells) != 1 {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if p := cells[0].Cell.Pace; p == nil || p.Rate != 400 || p.Offered < 198 || p.Offered > 202 {
		t.Errorf("null cell's pace %+v", p)
	}
	r := storedRun(t, st, 1)
	checkStored(t, r)
	if !strings.HasSuffix(r.Command, "--rate 400 --arrivals uniform") {
		t.Errorf("stored command %q", r.Command)
	}
	_, errOut, err = runCLI(t, "run", "insert", "--engine", "duckdb", "--db",
		filepath.Join(dir, "ins.duckdb"), "--store", st,
		"--streams", "1", "--batch", "100", "--duration", "300ms", "--warmup", "0s", "--think", "20ms")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	r = storedRun(t, st, 2)
	if !strings.HasSuffix(r.Command, "--seed 1 --think 20ms") || r.Kind != "insert-paced" {
		t.Errorf("stored command %q", r.Command)
	}
	ic, _ := result.KindCell.All(r)
	if len(ic) != 1 || ic[0].Pace == nil || ic[0].Pace.Mode != "think" || ic[0].Total.Count > 16 {
		t.Errorf("insert cells %+v", ic)
	}
	if _, _, err := runCLI(t, "run", "null", "--engine", "sqlite", "--rate", "5", "--think", "1ms"); err == nil ||
		!strings.Contains(err.Error(), "-think: not with --rate") {
		t.Errorf("null with a rate and a think time: %v", err)
	}
}
