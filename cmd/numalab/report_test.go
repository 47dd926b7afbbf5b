package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

// reportStore is a store holding the real runs of this project's 2-vCPU
// guest (probe-mem, oltp, report, probe-io), copies times copies over: ids
// 1-4, 5-8, ...
func reportStore(t *testing.T, copies int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "runs.db")
	for range copies {
		addFixtureRuns(t, path, "kvm-2vcpu-runs.json")
	}
	return path
}

// addFixtureRuns adds to the store at path, under new ids, the runs of
// internal/report/testdata/name ('numalab runs show --json' output).
func addFixtureRuns(t *testing.T, path, name string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "report", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var runs []result.Run
	if err := json.Unmarshal(b, &runs); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, r := range runs {
		c := r
		c.Results, c.Status = nil, result.StatusRunning
		if err := st.Begin(&c); err != nil {
			t.Fatal(err)
		}
		for _, it := range r.Results {
			if _, err := st.Add(c.ID, it.Entry()); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Finish(c.ID, r.Finished, r.Status, r.Headline, r.Error); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReportCommand(t *testing.T) {
	db := reportStore(t, 1)
	out := filepath.Join(t.TempDir(), "r.html")
	stdout, _, err := runCLI(t, "report", "--store", db, "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(stdout) != out {
		t.Errorf("report printed %q, want the path %s", stdout, out)
	}
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", "<svg ", `id="memory-ladder"`, `id="oltp-table"`,
		`id="reporting-speedup"`, `id="model"`, "runs 1, 2, 3, 4"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report HTML lacks %q", want)
		}
	}
	// The same runs chosen by id give the same bytes.
	out2 := filepath.Join(t.TempDir(), "r2.html")
	if _, _, err := runCLI(t, "report", "--store", db, "--out", out2, "4", "3", "2", "1"); err != nil {
		t.Fatal(err)
	}
	if html2, _ := os.ReadFile(out2); string(html2) != string(html) {
		t.Error("the report of runs 4 3 2 1 differs from the latest runs' report")
	}

	text, _, err := runCLI(t, "report", "--store", db, "--format", "text")
	if err != nil || !strings.Contains(text, "Findings") || !strings.Contains(text, "DRAM latency") {
		t.Errorf("report --format text: %v\n%s", err, text)
	}
	csv, _, err := runCLI(t, "report", "--store", db, "--format", "csv", "1")
	if err != nil || !strings.HasPrefix(csv, "section,run,series,x_name,x,y_name,y,unit,min,max,repeats\n") ||
		!strings.Contains(csv, "memory,1,") {
		t.Errorf("report --format csv 1: %v\n%.300s", err, csv)
	}
	js, _, err := runCLI(t, "report", "--store", db, "--format", "json", "2")
	var r struct {
		Findings []struct{ Text string }
		OLTP     *struct{ Run int64 }
	}
	if err != nil || json.Unmarshal([]byte(js), &r) != nil || r.OLTP == nil || r.OLTP.Run != 2 || len(r.Findings) == 0 {
		t.Errorf("report --format json 2: %v\n%.300s", err, js)
	}
}

func TestReportBadInput(t *testing.T) {
	db := reportStore(t, 1)
	empty := filepath.Join(t.TempDir(), "empty.db")
	st, err := store.Open(empty)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	missing := filepath.Join(t.TempDir(), "missing.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--store", empty}, "has no runs yet"},
		{[]string{"--store", missing}, "no store at"},
		{[]string{"--store", db, "99"}, "run 99: no such run"},
		{[]string{"--store", db, "abc"}, `"abc" is not a run id`},
		{[]string{"--store", db, "--format", "pdf"}, `-format: "pdf" is not a format`},
		{[]string{"--store", db, "2", "2"}, "both oltp"},
	} {
		_, _, err := runCLI(t, append([]string{"report"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("report %v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("report created the missing store %s", missing)
	}
}

func TestCompareCommand(t *testing.T) {
	db := reportStore(t, 2) // runs 1-4 and 5-8 hold the same measurements
	out, _, err := runCLI(t, "compare", "--store", db, "2", "6")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Comparing oltp runs: A = run 2", "B/A", "smt=off, 2 streams: throughput", "1+1",
		"cannot tell", "No figure differs by the test."} {
		if !strings.Contains(out, want) {
			t.Errorf("compare 2 6 lacks %q:\n%s", want, out)
		}
	}
	js, _, err := runCLI(t, "compare", "--store", db, "--json", "1", "5")
	var c struct {
		Kind    string
		Figures []struct{ Verdict string }
	}
	if err != nil || json.Unmarshal([]byte(js), &c) != nil || c.Kind != "probe-mem" || len(c.Figures) == 0 {
		t.Errorf("compare --json 1 5: %v\n%.300s", err, js)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"1", "2"}, "run 1 is probe-mem and run 2 is oltp: runs of different kinds"},
		{[]string{"1"}, "want two run ids"},
		{[]string{"1", "1"}, "both run 1"},
		{[]string{"1", "77"}, "run 77: no such run"},
	} {
		_, _, err := runCLI(t, append([]string{"compare", "--store", db}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("compare %v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}

// A report of older runs says which newer ones the store holds, and names
// the runs the model is calibrated to.
func TestReportNewerRuns(t *testing.T) {
	db := reportStore(t, 2) // runs 1-4, then the same kinds again as 5-8
	text, stderr, err := runCLI(t, "report", "--store", db, "--format", "text", "1", "2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"run 1 (probe-mem) is used, but the store holds newer complete probe-mem runs of vm: 5",
		"run 2 (oltp) is used, but the store holds newer complete oltp runs of vm: 6"} {
		if !strings.Contains(stderr, want) || !strings.Contains(text, want) {
			t.Errorf("report 1 2: stderr and text should both say %q\nstderr: %s", want, stderr)
		}
	}
	if !strings.Contains(text, "the model is calibrated to memory probe run 1 and fitted to OLTP run 2") {
		t.Errorf("report 1 2 does not name the model's runs:\n%s", text)
	}
	if _, stderr, err := runCLI(t, "report", "--store", db, "--format", "text"); err != nil || stderr != "" {
		t.Errorf("report of the latest runs: %v, stderr %q; want no warning", err, stderr)
	}
}
