package decide

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
)

// TestParseCandidatesDDR: DDR-4 3200 at 20-20-20 is (20+20+20)·2000/3200
// = 37.5 ns at the DRAM; with 62.5 ns outside it the local latency is 100.
func TestParseCandidatesDDR(t *testing.T) {
	s, err := ParseCandidates("c.toml", []byte(`[[server]]
name = "d"
sockets = 1
cores_per_socket = 4
ghz = 3
ddr = "3200 20-20-20"
controller_ns = 62.5
price = 1
licence_per_core = 0
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 || s[0].LocalNS != 100 || s[0].SMT != 1 {
		t.Errorf("servers %+v, want one at 100 ns local, SMT 1 by default", s)
	}
}

func TestParseCandidatesErrors(t *testing.T) {
	base := "[[server]]\nname = \"a\"\nsockets = 2\ncores_per_socket = 4\nghz = 3\nprice = 10\n"
	for name, c := range map[string]struct{ text, want string }{
		"no table":       {"# nothing\n", "c.toml: no [[server]] table"},
		"no remote":      {base + "local_ns = 90\n", `c.toml:1: server "a": remote_ns = 0: with 2 sockets`},
		"remote < local": {base + "local_ns = 90\nremote_ns = 80\n", `c.toml:8: server "a": remote_ns = 80`},
		"ddr and local": {base + "local_ns = 90\nremote_ns = 120\nddr = \"3200 22-22-22\"\ncontroller_ns = 40\n",
			`c.toml:9: server "a": ddr and local_ns are both given`},
		"ddr no ctrl": {base + "remote_ns = 120\nddr = \"3200 22-22-22\"\n",
			`c.toml:1: server "a": controller_ns = 0: with ddr`},
		"bad ddr": {base + "remote_ns = 120\nddr = \"fast\"\ncontroller_ns = 40\n",
			`c.toml:8: server "a": ddr = "fast": want "MT/s CL-tRCD-tRP"`},
		"8 sockets": {strings.Replace(base, "sockets = 2", "sockets = 8", 1) + "local_ns = 90\nremote_ns = 120\n",
			`c.toml:3: server "a": sockets = 8 is not a socket count whose latency local_ns and remote_ns give`},
		"smt 0": {base + "local_ns = 90\nremote_ns = 120\nsmt = 0\n",
			`c.toml:9: server "a": smt = 0 is not a count of hardware threads`},
		"licence < 0": {base + "local_ns = 90\nremote_ns = 120\nlicence_per_core = -1\n",
			`c.toml:9: server "a": licence_per_core = -1`},
		"duplicate": {base + "local_ns = 90\nremote_ns = 120\n" + base + "local_ns = 90\nremote_ns = 120\n",
			`c.toml:10: name "a": a second server`},
		"wrong type":  {base + "local_ns = \"fast\"\n", "c.toml:7: server.local_ns: incompatible types"},
		"unknown top": {"colour = 1\n" + base + "local_ns = 90\nremote_ns = 120\n", `c.toml:1: unknown key "colour"`},
	} {
		_, err := ParseCandidates("c.toml", []byte(c.text))
		if err == nil || !errors.Is(err, model.ErrInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", name, err, c.want)
		}
	}
}

// TestBreakEvenEdges: with m = 1 and I = 1 a transaction is one wait, so
// tps per core = 10⁹/L at 1 GHz. A: 1 socket of 1 core at 100 ns, 1e7 tps,
// price 1e6: 100 per 1,000 tps. B: 2 sockets of 1 core, local 100, remote
// 200 ns, so L = 100 + 100·r and B costs price / (2·10⁹/L / 1000) =
// price·L/2e6 per 1,000 tps, equal to A's 100 at L = 2e8/price: at 3e6,
// L = 66.7 ns, below local, so B never wins; at 1.5e6, L = 133.3 ns,
// r = 33.33%; at 5e5, L = 400 ns, above remote, so B always wins.
func TestBreakEvenEdges(t *testing.T) {
	w := model.Workload{Instructions: 1, Miss: 1}
	a := Server{Name: "A", Sockets: 1, CoresPerSocket: 1, GHz: 1, SMT: 1, LocalNS: 100, Price: 1e6}
	b := Server{Name: "B", Sockets: 2, CoresPerSocket: 1, GHz: 1, SMT: 1, LocalNS: 100, RemoteNS: 200, Price: 3e6}
	p, err := Buy(w, Uncertainty{SMT: model.PublishedSMTGain}, []Server{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if p.BreakEven == nil || p.BreakEven.RemoteFraction >= 0 ||
		!strings.Contains(p.Recommendation, "would not win over A at any remote fraction") {
		t.Errorf("break-even %+v, recommendation %q", p.BreakEven, p.Recommendation)
	}
	b.Price = 1.5e6
	p, err = Buy(w, Uncertainty{SMT: model.PublishedSMTGain}, []Server{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(p.BreakEven.RemoteFraction-1.0/3) > 1e-9 ||
		!strings.Contains(p.Recommendation, "Buy A: 100 per 1,000 tps") ||
		!strings.Contains(p.Recommendation, "below 33.33%") {
		t.Errorf("break-even %+v, recommendation %q; want 1/3", p.BreakEven, p.Recommendation)
	}
	b.Price = 5e5
	p, _ = Buy(w, Uncertainty{SMT: model.PublishedSMTGain}, []Server{a, b})
	if p.BreakEven.RemoteFraction <= 1 || !strings.Contains(p.Recommendation, "Buy B") ||
		!strings.Contains(p.Recommendation, "beats A at any remote fraction") {
		t.Errorf("cheap B: break-even %+v, recommendation %q", p.BreakEven, p.Recommendation)
	}
}

// TestBuiltinCandidates derives from a 3 GHz CPU of 16 cores, one thread
// per core, 100 ns local and 150 remote.
func TestBuiltinCandidates(t *testing.T) {
	s := BuiltinCandidates(CPU{GHz: 3, CoresPerSocket: 16, SMT: 1, LocalNS: 100, RemoteNS: 150})
	if len(s) != 6 {
		t.Fatalf("%d candidates, want 6", len(s))
	}
	for i, want := range []struct {
		sockets, cores, smt int
		ghz, local, remote  float64
		price               float64
	}{
		{1, 16, 1, 3, 100, 0, 4000 + 16*187.5},
		{2, 16, 1, 3, 100, 150, 9000 + 32*187.5},
		{4, 16, 1, 3, 100, 150, 40000 + 64*187.5},
		{1, 8, 1, 3.75, 100, 0, 4000 + 16*187.5},
		{1, 16, 2, 3, 100, 0, 4000 + 16*187.5},
		{1, 16, 1, 3, 91.25, 0, 4000 + 16*187.5 + 1000},
	} {
		g := s[i]
		if g.Sockets != want.sockets || g.CoresPerSocket != want.cores || g.SMT != want.smt || g.GHz != want.ghz ||
			g.LocalNS != want.local || g.RemoteNS != want.remote || g.Price != want.price || g.LicencePerCore != 7000 {
			t.Errorf("%s: %+v, want %+v", g.Name, g, want)
		}
		if errs := g.resolve(); len(errs) > 0 {
			t.Errorf("%s does not pass a candidates file's checks: %v", g.Name, errs)
		}
	}
	if !strings.Contains(s[4].Note, "this CPU has one thread per core") {
		t.Errorf("SMT note %q does not say this CPU has none", s[4].Note)
	}
}

// TestBuyGiven: a given CPU gives the built-in candidates and its
// assumptions (the remote latency assumed from the local); without one,
// the candidates file's first server anchors the band.
func TestBuyGiven(t *testing.T) {
	w := model.Default()
	p, err := BuyGiven(w, &GivenCPUFigures{GHz: 3, Latencies: model.Latencies{LocalNS: 100}, Cores: 16, SMT: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	remote := 100 * model.PublishedRemoteRatio.Value
	if len(p.Rows) != 6 || len(p.Assumptions) != 7 ||
		p.Assumptions[5].Name != calib.AssumeRemote || p.Assumptions[5].Value != remote ||
		p.Assumptions[6].Name != AssumeLicence || p.Assumptions[6].Value != builtinLicence {
		t.Errorf("given CPU: %d rows, assumptions %v; "+
			"want the 6 built-in, 7 assumptions: remote %g, then the built-in licence price",
			len(p.Rows), p.Assumptions, remote)
	}
	servers, err := ParseCandidates("c.toml",
		[]byte("[[server]]\nname = \"a\"\nsockets = 1\ncores_per_socket = 8\nghz = 2\nlocal_ns = 120\nprice = 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err = BuyGiven(w, nil, servers)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Buy(w,
		Uncertainty{SMT: model.PublishedSMTGain, Fit: model.StallBand(w, 120, 2), AnchorNS: 120, AnchorGHz: 2}, servers)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rows) != 1 || p.Rows[0].Server.Name != "a" || len(p.Assumptions) != 2 || p.Band != want.Band {
		t.Errorf("candidates file: %d rows, assumptions %v, band %q; want server a, the workload's 2, band %q",
			len(p.Rows), p.Assumptions, p.Band, want.Band)
	}
	if _, err := BuyGiven(w, nil, nil); err == nil {
		t.Error("no CPU and no candidates: no error")
	}
}

// TestBuyCalibrated: the calibration's CPU gives the built-in candidates,
// its SMT candidate with the threads per core asked for, else those the
// run measured (at least 2).
func TestBuyCalibrated(t *testing.T) {
	c := probeCalibration(t)
	for smt, want := range map[int]int{0: max(c.ThreadsPerCore(), 2), 3: 3} {
		p, err := BuyCalibrated(c, smt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Rows) != 6 || p.Rows[0].Server.LocalNS != 90 || p.Rows[4].Server.SMT != want ||
			len(p.Assumptions) != len(c.Assumptions)+1 ||
			p.Assumptions[len(c.Assumptions)].Name != AssumeLicence {
			t.Errorf("smt %d: rows %+v, assumptions %v", smt, p.Rows, p.Assumptions)
		}
	}
}

// probeCalibration is the model calibrated to a memory probe alone (3 GHz,
// 90 ns) on one socket of two cores with two threads each.
func probeCalibration(t *testing.T) *calib.Calibration {
	t.Helper()
	m := &result.Topology{Source: "test"}
	for i := range 4 {
		m.CPUs = append(m.CPUs, result.CPU{ID: i, Core: i / 2, Node: 0})
	}
	m.Cores = []result.Core{{ID: 0, CPUs: []int{0, 1}}, {ID: 1, CPUs: []int{2, 3}}}
	m.Nodes = []result.Node{{ID: 0, CPUs: []int{0, 1, 2, 3}}}
	m.Packages = []result.Package{{ID: 0, CPUs: []int{0, 1, 2, 3}}}
	c, err := calib.Calibrate(
		stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: 3, LocalNS: 90, DRAMNS4K: 95})))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestChoose: the report's two decisions are BuyCalibrated's among this
// CPU's variants and the catalogue's, neither without a prediction, and a
// catalogue answer never without rows.
func TestChoose(t *testing.T) {
	if own, cat := Choose(nil, ""); own != nil || cat != nil {
		t.Errorf("Choose(nil) = %v, %v; want no decision", own, cat)
	}
	c := probeCalibration(t)
	bare := &calib.Calibration{}
	bare.Workload = c.Workload
	if own, cat := Choose(bare, ""); own != nil || cat != nil {
		t.Errorf("a calibration without a table: %v, %v; want no decision", own, cat)
	}
	own, cat := Choose(c, "")
	want, err := BuyCalibrated(c, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if own == nil || own.Recommendation != want.Recommendation || len(own.Rows) != len(want.Rows) {
		t.Errorf("own = %+v; want BuyCalibrated's %+v", own, want)
	}
	if cat == nil || len(cat.Rows) == 0 {
		t.Errorf("catalogue = %+v; want the built-in catalogue ranked", cat)
	}
}

// stored is a run of kind with the machine and items given.
func stored(t *testing.T, id int64, kind string, machine *result.Topology, entries ...result.Entry) *result.Run {
	t.Helper()
	r := &result.Run{ID: id, Kind: kind, Machine: machine}
	for i, e := range entries {
		b, err := json.Marshal(e.Body())
		if err != nil {
			t.Fatal(err)
		}
		r.Results = append(r.Results, result.Item{Seq: i + 1, Kind: e.Kind(), Body: b})
	}
	return r
}
