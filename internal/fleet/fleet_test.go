package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

// The planted outliers of the fixture fleet.
const (
	latencyHost  = "db05" // a slow DIMM: DRAM latency +25%, tps a little lower
	governorHost = "db09" // governor powersave: lower clock, so lower tps and bandwidth, higher latency
	noisyHost    = "db03" // a normal host with one bad OLTP repeat
)

// fixtureRun is a run of the fixture and the items it stores, in order.
type fixtureRun struct {
	run   result.Run
	items []result.Entry
}

// fixture is a fleet of 12 hosts of one model, each with a memory probe
// (DRAM latency with 3 repeats, bandwidth) and a tpcc-ro run (1 and 4
// streams, 3 repeats each), every figure drawn with host-to-host and
// repeat-to-repeat noise from a seeded RNG: 0.8% between hosts, 1% between
// repeats, as on a rack of identical servers.
func fixture(seed uint64) []fixtureRun {
	rng := rand.New(rand.NewPCG(seed, 7))
	noise := func(sd float64) float64 { return 1 + sd*rng.NormFloat64() }
	start := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	var out []fixtureRun
	for h := 1; h <= 12; h++ {
		host := fmt.Sprintf("db%02d", h)
		lat, tps, bw := 92*noise(0.008), 410*noise(0.008), 38*noise(0.008)
		gov := "performance"
		pf := preflight.Report{Settings: []preflight.Setting{
			{Name: "hypervisor", Value: "none detected"},
			{Name: "smt", Value: "on"},
			{Name: "thp", Value: "madvise, defrag madvise"},
		}}
		switch host {
		case latencyHost:
			lat *= 1.25
			tps *= 0.96
		case governorHost:
			gov = "powersave"
			lat *= 1.06
			tps *= 0.72
			bw *= 0.9
			pf.Warnings = append(pf.Warnings, preflight.Warning{Setting: "governor powersave",
				Effect: "latency and OLTP figures will read low", Fix: "cpupower frequency-set -g performance",
				Affects: []preflight.Figure{preflight.Latency, preflight.OLTP, preflight.Scaling}})
		}
		pf.Settings = slices.Insert(pf.Settings, 0,
			preflight.Setting{Name: "cpufreq", Value: "driver intel_pstate, governor " + gov})

		probe := fixtureRun{
			run: result.Run{Kind: result.RunProbeMem, Command: "numalab probe mem", Version: "test", Host: host,
				Started: start.Add(time.Duration(h) * time.Minute), Status: result.StatusComplete}}
		probe.items = append(probe.items, preflight.Kind.Of(pf),
			memlat.KindSummary.Of(memlat.Summary{GHz: 3, DRAMNS4K: lat * noise(0.01), LocalNS: lat * noise(0.01),
				Nodes: []int{0}, CPUNodes: []int{0}}))
		for round := 2; round <= 4; round++ {
			probe.items = append(probe.items,
				memlat.KindRepeat.Of(memlat.Repeat{Round: round, Chain: memlat.Random, Pages: memlat.Pages4K,
					Bytes: 1 << 30, NS: memlat.Stat{Median: lat * noise(0.01)}}))
		}
		probe.items = append(probe.items, memlat.KindBandwidth.Of(memlat.Bandwidth{Read: []memlat.BWPoint{
			{Threads: 1, GBps: 11 * noise(0.01)}, {Threads: 8, GBps: bw * noise(0.01)}}}))

		oltp := fixtureRun{
			run: result.Run{Kind: result.RunOLTP, Command: "numalab run oltp --repeat 3", Version: "test", Host: host,
				Started: start.Add(time.Hour + time.Duration(h)*time.Minute), Status: result.StatusComplete}}
		oltp.items = append(oltp.items, preflight.Kind.Of(pf))
		i := 0
		for _, streams := range []int{1, 4} {
			for rep := range 3 {
				v := tps * noise(0.01)
				if host == noisyHost && streams == 4 && rep == 1 {
					v *= 0.7 // a neighbour's backup ran during this repeat
				}
				oltp.items = append(oltp.items,
					result.KindCell.Of(result.Cell{Index: i, Engine: "sqlite", Workload: "tpcc-ro", Streams: streams,
						DOP: 1, Placement: "smt=off", Cores: streams, DataNode: -1, Repeat: rep,
						TPS: v * float64(streams), TPSPerCore: v}))
				i++
			}
		}
		// An older, slower run of every host: Select must take the latest.
		old := oltp
		old.run.Started = start.Add(-24 * time.Hour)
		old.items = []result.Entry{preflight.Kind.Of(pf),
			result.KindCell.Of(result.Cell{Engine: "sqlite", Workload: "tpcc-ro", Streams: 1,
				DOP: 1, Placement: "smt=off", Cores: 1, DataNode: -1, TPSPerCore: 100})}
		out = append(out, old, probe, oltp)
	}
	// A host that never completed a comparable run: listed, not dropped.
	out = append(out,
		fixtureRun{run: result.Run{Kind: result.RunOLTP, Command: "numalab run oltp", Version: "test", Host: "db13",
			Started: start, Status: result.StatusFailed}})
	return out
}

// sources are the fixture's latest complete runs as Select would give
// them, without a store.
func sources(runs []fixtureRun) ([]Source, []string) {
	var hosts []string
	var out []Source
	for i, fr := range runs {
		if !slices.Contains(hosts, fr.run.Host) {
			hosts = append(hosts, fr.run.Host)
		}
		if fr.run.Status != result.StatusComplete || slices.ContainsFunc(runs[i+1:], func(x fixtureRun) bool {
			return x.run.Host == fr.run.Host && x.run.Kind == fr.run.Kind
		}) {
			continue
		}
		r := fr.run
		r.ID = int64(i + 1)
		for seq, e := range fr.items {
			b, err := json.Marshal(e.Body())
			if err != nil {
				panic(err)
			}
			r.Results = append(r.Results, result.Item{Seq: seq + 1, Kind: e.Kind(), Body: b})
		}
		out = append(out, Source{Store: "memory", Run: &r})
	}
	slices.Sort(hosts)
	return out, hosts
}

func writeStore(t *testing.T, path string, runs []fixtureRun) {
	t.Helper()
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, fr := range runs {
		r := fr.run
		status := r.Status
		r.Status = ""
		if err := st.Begin(&r); err != nil {
			t.Fatal(err)
		}
		for _, e := range fr.items {
			if _, err := st.Add(r.ID, e); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Finish(r.ID, r.Started.Add(time.Minute), status, "", ""); err != nil {
			t.Fatal(err)
		}
	}
}

func flagged(f *Fleet) []string {
	var out []string
	for _, h := range f.Hosts {
		if h.Outlier {
			out = append(out, h.Name)
		}
	}
	return out
}

func figure(t *testing.T, f *Fleet, prefix string) Figure {
	t.Helper()
	for _, fig := range f.Figures {
		if strings.HasPrefix(fig.Name, prefix) {
			return fig
		}
	}
	t.Fatalf("no figure %q in %v", prefix, f.Figures)
	return Figure{}
}

func verdictOf(fig Figure, host string) string {
	for _, h := range fig.Hosts {
		if h.Host == host {
			return h.Verdict
		}
	}
	return ""
}

// TestFixtureFleet is the fixture: 12 hosts in two real stores,
// written through the store API; exactly the two planted outliers are
// found, each with its likely cause.
func TestFixtureFleet(t *testing.T) {
	runs := fixture(1)
	dir := t.TempDir()
	// Hosts 1-6 report to one store, 7-13 to another.
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	var ra, rb []fixtureRun
	for _, fr := range runs {
		if fr.run.Host <= "db06" {
			ra = append(ra, fr)
		} else {
			rb = append(rb, fr)
		}
	}
	writeStore(t, a, ra)
	writeStore(t, b, rb)
	var stores []Store
	for _, p := range []string{a, b} {
		st, err := store.OpenReadOnly(p)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		stores = append(stores, st)
	}
	srcs, hosts, err := Select(stores, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 13 || len(srcs) != 24 {
		t.Fatalf("selected %d runs of %d hosts, want 24 runs of 13", len(srcs), len(hosts))
	}
	f, err := Build([]string{a, b}, hosts, srcs)
	if err != nil {
		t.Fatal(err)
	}
	if got := flagged(f); !slices.Equal(got, []string{latencyHost, governorHost}) {
		t.Errorf("outliers %v, want [%s %s]", got, latencyHost, governorHost)
	}
	if v := verdictOf(figure(t, f, dramName), latencyHost); v != Outlier {
		t.Errorf("%s DRAM latency: %s, want %s", latencyHost, v, Outlier)
	}
	if v := verdictOf(figure(t, f, "tpcc-ro tps per core (sqlite, 4 streams"), governorHost); v != Outlier {
		t.Errorf("%s tps per core: %s, want %s", governorHost, v, Outlier)
	}
	if v := verdictOf(figure(t, f, "tpcc-ro tps per core (sqlite, 4 streams"), noisyHost); v != OK {
		t.Errorf("%s with one bad repeat: %s, want %s", noisyHost, v, OK)
	}
	var gov, lat, missing Host
	for _, h := range f.Hosts {
		switch h.Name {
		case governorHost:
			gov = h
		case latencyHost:
			lat = h
		case "db13":
			missing = h
		}
	}
	if len(gov.Causes) != 1 || gov.Causes[0].Value != "driver intel_pstate, governor powersave" ||
		gov.Causes[0].Usual != "driver intel_pstate, governor performance" || len(gov.Warnings) != 1 {
		t.Errorf("%s causes %+v, warnings %q: want the governor", governorHost, gov.Causes, gov.Warnings)
	}
	if len(lat.Causes) != 0 || len(lat.Warnings) != 0 {
		t.Errorf("%s causes %+v %q: want none (no setting differs)", latencyHost, lat.Causes, lat.Warnings)
	}
	// Missing are the kinds the fleet measured (no null runs here).
	if want := []string{result.RunProbeMem, result.RunOLTP}; len(missing.Runs) != 0 ||
		!slices.Equal(missing.Missing, want) {
		t.Errorf("db13: runs %v, missing %v: want no runs, missing %v", missing.Runs, missing.Missing, want)
	}
	if len(f.Differences) != 1 || f.Differences[0].Setting != "cpufreq" {
		t.Errorf("differences %+v, want cpufreq only", f.Differences)
	}
	for _, h := range f.Hosts {
		for _, r := range h.Runs {
			if r.Started.Before(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("%s: took run %d of %v, not the latest", h.Name, r.ID, r.Started)
			}
		}
	}

	var text bytes.Buffer
	if err := WriteText(&text, f); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"db05  OUTLIER",
		"db09  OUTLIER",
		"cpufreq driver intel_pstate, governor powersave (most: driver intel_pstate, governor performance); " +
			"! governor powersave",
		"no differing setting seen: suspect the hardware",
		"db13  no comparable run",
		"cpufreq: driver intel_pstate, governor performance (11 hosts); driver intel_pstate, governor powersave " +
			"(db09); not stored (db13)",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, f); err != nil {
		t.Fatal(err)
	}
	var back Fleet
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Hosts) != 13 ||
		len(back.Figures) != len(f.Figures) {
		t.Errorf("JSON does not read back (%v): %d hosts", err, len(back.Hosts))
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, f); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	if got := strings.Count(html, "<tr class=\"outlier\">"); got != 2 {
		t.Errorf("HTML marks %d rows as outliers, want 2", got)
	}
	if got := strings.Count(html, "<td>db"); got != 13 {
		t.Errorf("HTML has %d host rows, want 13", got)
	}
	for _, bad := range []string{"<link", "<script", "src=", "http://", "https://"} {
		if strings.Contains(html, bad) {
			t.Errorf("HTML page is not self-contained: it has %q", bad)
		}
	}
}

// TestFalseAlarms runs the fixture over many seeds: in every one both
// planted outliers are found and no other host is flagged.
func TestFalseAlarms(t *testing.T) {
	const seeds = 500
	for seed := uint64(1); seed <= seeds; seed++ {
		srcs, hosts := sources(fixture(seed))
		f, err := Build([]string{"memory"}, hosts, srcs)
		if err != nil {
			t.Fatal(err)
		}
		if got := flagged(f); !slices.Equal(got, []string{latencyHost, governorHost}) {
			var text bytes.Buffer
			WriteText(&text, f)
			t.Errorf("seed %d: outliers %v, want [%s %s]\n%s", seed, got, latencyHost, governorHost, text.String())
		}
	}
}

// TestRule tables the verdict of one host against a fleet of others.
func TestRule(t *testing.T) {
	fleet := []float64{100, 101, 99, 100.5, 99.5, 100.2, 99.8}
	for _, tc := range []struct {
		name    string
		repeats []float64
		want    string
	}{
		{"within the fleet", []float64{100.3, 100.1, 100.6}, OK},
		{"just under the 1% MAD floor's 5.2%", []float64{105, 105, 105}, OK},
		{"far, tight repeats", []float64{112, 111, 113}, Outlier},
		{"far below", []float64{80, 81, 79}, Outlier},
		{"far, measured once", []float64{112}, Once},
		{"far, but its repeats reach the median", []float64{112, 99, 114}, Noisy},
		{"one bad repeat", []float64{100, 70, 100.4}, OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Figure{}
			for i, v := range fleet {
				f.Hosts = append(f.Hosts, HostFigure{Host: fmt.Sprint(i), Repeats: []float64{v}})
			}
			f.Hosts = append(f.Hosts, HostFigure{Host: "x", Repeats: tc.repeats}, HostFigure{Host: "none", Verdict: NoRun})
			judge(&f)
			if got := f.Hosts[len(fleet)].Verdict; got != tc.want {
				t.Errorf("verdict %s (z %.2f), want %s", got, f.Hosts[len(fleet)].Z, tc.want)
			}
			if got := f.Hosts[len(fleet)+1].Verdict; got != NoRun {
				t.Errorf("host without a run: %s, want %s", got, NoRun)
			}
		})
	}
	f := Figure{Hosts: []HostFigure{{Repeats: []float64{1}}, {Repeats: []float64{50}}}}
	judge(&f)
	if f.Hosts[1].Verdict != TooFew {
		t.Errorf("two hosts: %s, want %s", f.Hosts[1].Verdict, TooFew)
	}
}

// TestSelectRefusesMixedKinds: runs named by id must be of one kind.
func TestSelectRefusesMixedKinds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	writeStore(t, path, fixture(1)[:6]) // db01: old oltp (1), probe (2), oltp (3); db02: 4, 5, 6
	st, err := store.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, _, err := Select([]Store{st}, []int64{2, 3}); !errors.Is(err, ErrMixedKinds) {
		t.Errorf("probe-mem and oltp runs: %v, want %v", err, ErrMixedKinds)
	}
	if _, _, err := Select([]Store{st}, []int64{1, 3}); err == nil || !strings.Contains(err.Error(), "one run per host") {
		t.Errorf("two runs of one host: %v, want refused", err)
	}
	if _, _, err := Select([]Store{st, st}, []int64{2}); err == nil {
		t.Error("run ids with two stores: accepted")
	}
	srcs, hosts, err := Select([]Store{st}, []int64{5, 2})
	if err != nil || len(srcs) != 2 || srcs[0].Run.ID != 5 || !slices.Equal(hosts, []string{"db01", "db02"}) {
		t.Errorf("runs 5 and 2: %v %v %v", srcs, hosts, err)
	}
	srcs, hosts, err = Select([]Store{st}, []int64{3})
	if err != nil || len(srcs) != 1 || srcs[0].Run.ID != 3 || !slices.Equal(hosts, []string{"db01"}) {
		t.Errorf("run 3 only: %v %v %v (want db01 alone)", srcs, hosts, err)
	}
}
