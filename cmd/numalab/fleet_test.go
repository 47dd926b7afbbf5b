package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

// fleetStore writes, through the store API, a memory probe of each of
// five hosts with DRAM latencies lat (web4's preflight says powersave),
// and a failed OLTP run of a sixth host; it returns the store's path.
func fleetStore(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "fleet.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lat := []float64{90, 91, 89.5, 90.5, 120}
	for i, ns := range lat {
		host := fmt.Sprintf("web%d", i)
		gov := "performance"
		if i == 4 {
			gov = "powersave"
		}
		r := result.Run{Kind: result.RunProbeMem, Command: "numalab probe mem", Version: "test", Host: host,
			Started: time.Unix(int64(1000+i), 0)}
		if err := st.Begin(&r); err != nil {
			t.Fatal(err)
		}
		entries := []result.Entry{
			preflight.Kind.Of(preflight.Report{Settings: []preflight.Setting{{Name: "cpufreq", Value: "governor " + gov}}}),
			memlat.KindSummary.Of(memlat.Summary{LocalNS: ns}),
		}
		for round, f := range []float64{0.995, 1, 1.004} {
			entries = append(entries, memlat.KindRepeat.Of(
				memlat.Repeat{Round: round + 2, Chain: memlat.Random, Pages: memlat.Pages4K, NS: memlat.Stat{Median: ns * f}}))
		}
		for _, e := range entries {
			if _, err := st.Add(r.ID, e); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Finish(r.ID, r.Started.Add(time.Minute), result.StatusComplete, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	r := result.Run{Kind: result.RunOLTP, Command: "numalab run oltp", Version: "test", Host: "web5",
		Started: time.Unix(2000, 0)}
	if err := st.Begin(&r); err != nil {
		t.Fatal(err)
	}
	if err := st.Finish(r.ID, r.Started, result.StatusFailed, "", "engine died"); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFleetCommand(t *testing.T) {
	dir := t.TempDir()
	db := fleetStore(t, dir)
	out, _, err := runCLI(t, "fleet", "--store", db)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"numalab fleet: 6 hosts from " + db,
		"web4  OUTLIER            probe-mem 5   cpufreq governor powersave (most: governor performance)",
		"web5  no comparable run  no probe-mem",
		"DRAM latency (ns): fleet median 90.5",
		"cpufreq: governor performance (4 hosts); governor powersave (web4); not stored (web5)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("fleet output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "OUTLIER") != 1 {
		t.Errorf("want one outlier:\n%s", out)
	}

	out, _, err = runCLI(t, "fleet", "--store", db, "--json")
	if err != nil || !strings.Contains(out, `"outlier": true`) || !strings.Contains(out, `"name": "web5"`) {
		t.Errorf("--json: %v\n%s", err, out)
	}

	page := filepath.Join(dir, "fleet.html")
	for range 2 { // the second write replaces the page numalab wrote
		if out, _, err := runCLI(t, "fleet", "--store", db, "--html", page); err != nil || out != page+"\n" {
			t.Fatalf("--html: %v %q", err, out)
		}
	}
	b, err := os.ReadFile(page)
	if err != nil || !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) || bytes.Count(b, []byte("<td>web")) != 6 {
		t.Errorf("--html page: %v, %d host rows", err, bytes.Count(b, []byte("<td>web")))
	}
	mine := filepath.Join(dir, "notes.html")
	if err := os.WriteFile(mine, []byte("my notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "fleet", "--store", db, "--html", mine); err == nil ||
		!strings.Contains(err.Error(), "not written by numalab") {
		t.Errorf("--html over a user's file: %v", err)
	}
	if b, _ := os.ReadFile(mine); string(b) != "my notes" {
		t.Errorf("the user's file was changed: %q", b)
	}
	if _, _, err := runCLI(t, "fleet", "--store", db, "--html", db); err == nil {
		t.Error("--html over the store: accepted")
	}
}

func TestFleetBadInput(t *testing.T) {
	dir := t.TempDir()
	db := fleetStore(t, dir)
	missing := filepath.Join(dir, "missing.db")
	if _, _, err := runCLI(t, "fleet", "--store", db, "--store", missing); err == nil ||
		!strings.Contains(err.Error(), "no store at "+missing) {
		t.Errorf("missing store: %v", err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("fleet created the missing store: %v", err)
	}
	if _, _, err := runCLI(t, "fleet", "--store", db, "5", "6"); err == nil ||
		!strings.Contains(err.Error(), "runs of different kinds cannot be compared") {
		t.Errorf("a probe-mem and an oltp run: %v", err)
	}
	if _, _, err := runCLI(t, "fleet", "--store", db, "--store", db, "5"); err == nil ||
		!strings.Contains(err.Error(), "give one --store with run ids") {
		t.Errorf("run ids with two stores: %v", err)
	}

	newer := filepath.Join(dir, "newer.db")
	st, err := store.Open(newer)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	raw, err := sql.Open("sqlite3", newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(fmt.Sprintf("PRAGMA user_version = %d", store.SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	before, err := os.ReadFile(newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "fleet", "--store", newer); err == nil || !strings.Contains(err.Error(), "newer numalab") {
		t.Errorf("newer store: %v", err)
	}
	if after, _ := os.ReadFile(newer); !bytes.Equal(before, after) {
		t.Error("fleet changed a store of a newer numalab")
	}
}
