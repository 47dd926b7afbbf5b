package decide

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/published"
)

// TestCatalogueCandidates checks each catalogue row becomes the servers
// its socket count allows, at the figures the catalogue gives: one socket
// at the middle of its latency band, two at the published ratios of it,
// the price the CPUs' list prices.
func TestCatalogueCandidates(t *testing.T) {
	cat, err := published.BuiltinCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	servers := CatalogueCandidates(cat, 7000, nil)
	want := 0
	for _, c := range cat.CPUs {
		want += min(c.MaxSockets, 2)
	}
	if len(servers) != want {
		t.Fatalf("%d candidates: want %d (one or two sockets per CPU)", len(servers), want)
	}
	byName := map[string]Server{}
	for _, s := range servers {
		byName[s.Name] = s
	}
	if _, ok := byName["Intel Xeon Gold 6414U ×2"]; ok {
		t.Error("a one-socket part (6414U) became a two-socket candidate")
	}
	one, two := byName["AMD EPYC 9654 ×1"], byName["AMD EPYC 9654 ×2"]
	mid := (76.0 + 122) / 2
	if one.LocalNS != mid || one.GHz != 3.55 || one.CoresPerSocket != 96 || one.SMT != 2 || one.Price != 11805 ||
		one.LicencePerCore != 7000 {
		t.Errorf(
			"EPYC 9654 ×1 = %+v: want %v ns, 3.55 GHz (all-core), 96 cores, SMT 2, price 11,805, licence 7,000", one, mid)
	}
	if l := mid * 91 / 76; math.Abs(two.LocalNS-l) > 1e-9 || math.Abs(two.RemoteNS-l*139/89) > 1e-9 ||
		two.Price != 2*11805 {
		t.Errorf("EPYC 9654 ×2: local %v, remote %v, price %v: want %v, %v, %v",
			two.LocalNS, two.RemoteNS, two.Price, l, l*139/89, 2*11805)
	}
	if x := byName["Intel Xeon Platinum 8480+ ×1"]; x.GHz != 2.0 ||
		!strings.Contains(x.Note, "no all-core clock published") {
		t.Errorf("8480+: %v GHz, note %q: want the base clock, 2.0, and the note saying why", x.GHz, x.Note)
	}
}

// givenCPU is a CPU of 3 GHz at 90 ns, as 'model buy --ghz 3
// --local-ns 90' gives it.
var givenCPU = &GivenCPUFigures{GHz: 3, Latencies: model.Latencies{LocalNS: 90}, Cores: 16, SMT: 2}

// TestBuyCatalogueRanks buys from the built-in catalogue: the rows come
// ranked by cost per 1,000 tps, each prediction is the model's at its
// figures and lies in its band, the catalogue latency band widens every
// band, and with bands that overlap the decision is "cannot tell" with a
// measurement that would tell.
func TestBuyCatalogueRanks(t *testing.T) {
	cat, err := published.BuiltinCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	w := model.Default()
	p, err := BuyCatalogueGiven(w, givenCPU, cat, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSortedFunc(p.Rows, func(a, b BuyRow) int { return int(math.Copysign(1, a.CostPerKTPS-b.CostPerKTPS)) }) {
		t.Error("rows are not ranked by cost per 1,000 tps")
	}
	if p.Best.CostPerKTPS != p.Rows[0].Server.Name {
		t.Errorf("best on cost per 1,000 tps %q, first row %q: want the same", p.Best.CostPerKTPS, p.Rows[0].Server.Name)
	}
	for _, r := range p.Rows {
		s := r.Server
		if s.Sockets == 1 {
			i := slices.IndexFunc(cat.CPUs, func(c published.CPU) bool { return c.Name == s.cpu })
			mid := cat.Band(cat.CPUs[i]).MidNS()
			want := model.ThreadTPS(w, mid, s.GHz, model.PublishedSMTGain.Value) * float64(s.CoresPerSocket)
			if math.Abs(r.TotalTPS-want) > 1e-9*want {
				t.Errorf("%s: %v tps: want the model's %v at its band's middle, %v ns, and %v GHz with the SMT gain",
					s.Name, r.TotalTPS, want, mid, s.GHz)
			}
		}
		if !(r.TPSLow < r.TotalTPS && r.TotalTPS < r.TPSHigh) {
			t.Errorf("%s: band %v to %v does not hold %v", s.Name, r.TPSLow, r.TPSHigh, r.TotalTPS)
		}
	}
	// Without the catalogue's latency band, a one-socket row's band is
	// narrower at both ends.
	u := Uncertainty{SMT: model.PublishedSMTGain, Fit: model.StallBand(w, 90, 3), AnchorNS: 90, AnchorGHz: 3}
	s := CatalogueCandidates(cat, 7000, nil)[0]
	nlo, nhi := u.band(w, s, "")
	u.Catalogue = "test"
	clo, chi := u.band(w, s, "")
	if !(clo < nlo && chi > nhi) {
		t.Errorf("%s: band %v to %v with the latency band, %v to %v without: want it wider at both ends",
			s.Name, clo, chi, nlo, nhi)
	}
	if p.Decision != "" || len(p.Rivals) == 0 || !strings.HasPrefix(p.Recommendation, "Cannot tell") {
		t.Errorf("decision %q, rivals %v: the built-in catalogue's bands overlap, want cannot tell", p.Decision, p.Rivals)
	}
	if !strings.Contains(p.Band, "ranked by cost per 1,000 tps") || !strings.Contains(p.Band, "76 to 122 ns") {
		t.Errorf("band text %q: want the ranking and the latency band", p.Band)
	}
	var names []string
	for _, a := range p.Assumptions {
		names = append(names, a.Name)
	}
	if !slices.Contains(names, AssumeLicence) || !slices.Contains(names, AssumeCatalogue) {
		t.Errorf("assumptions %v: want the licence price and the catalogue latency", names)
	}
}

// TestBuyCatalogueDecides: two CPUs alike but for a 40-fold price and
// half the cores are told apart, the cheaper per 1,000 tps is bought.
func TestBuyCatalogueDecides(t *testing.T) {
	cat, err := published.BuiltinCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	a := cat.CPUs[0]
	a.Name, a.MaxSockets = "cheap", 1
	b := a
	b.Name, b.PriceUSD, b.Cores, b.Threads = "dear", a.PriceUSD*40, a.Cores/2, a.Threads/2
	cat.CPUs = []published.CPU{b, a}
	p, err := BuyCatalogueGiven(model.Default(), givenCPU, cat, "")
	if err != nil {
		t.Fatal(err)
	}
	if p.Decision != "cheap ×1" || p.Rows[0].Server.Name != "cheap ×1" {
		t.Errorf("decision %q, first %q: want cheap ×1 (%s)", p.Decision, p.Rows[0].Server.Name, p.Recommendation)
	}
	if _, err := BuyCatalogueGiven(model.Default(), nil, cat, ""); err == nil || !strings.Contains(err.Error(), "--ghz") {
		t.Errorf("no CPU figures: err = %v: want what to give", err)
	}
}

// speedCatalogue is two CPUs alike in all but their per-core figures
// (fast's band fastLow to fastHigh, slow's 10 to 11) and a reference,
// "this box", at 10 (9.5 to 10.5).
func speedCatalogue(t *testing.T, fastLow, fastHigh float64) *published.Catalogue {
	t.Helper()
	cat, err := published.BuiltinCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	fast, slow := cat.CPUs[0], cat.CPUs[0]
	fast.Name, slow.Name = "fast", "slow"
	fast.PerCore = &published.PerCore{Median: (fastLow + fastHigh) / 2, Low: fastLow, High: fastHigh, Results: 2,
		Source: "spec-cpu2017"}
	slow.PerCore = &published.PerCore{Median: 10.5, Low: 10, High: 11, Results: 2, Source: "spec-cpu2017"}
	cat.CPUs = []published.CPU{slow, fast}
	cat.References = []published.Reference{
		{Name: "this box", PerCore: published.PerCore{Median: 10, Low: 9.5, High: 10.5, Results: 3, Source: "spec-cpu2017"}}}
	return cat
}

// TestBuyCatalogueNamesThePart holds item 5: two real CPUs whose per-core
// bands separate are told apart for one workload and the faster is named;
// whose bands overlap, "cannot tell" names the per-core measurement.
func TestBuyCatalogueNamesThePart(t *testing.T) {
	w := model.Default()
	p, err := BuyCatalogueGiven(w, givenCPU, speedCatalogue(t, 14, 15), "this box")
	if err != nil {
		t.Fatal(err)
	}
	if p.Decision != "fast ×1" || !strings.HasPrefix(p.Recommendation, "Buy fast ×1") {
		t.Errorf("decision %q: want fast ×1 (%s)", p.Decision, p.Recommendation)
	}
	// Unpaired, the fit's and the latency's bands alone would overlap them.
	if lo, _ := p.Rows[1].CostBand(); lo > func() float64 { _, hi := p.Rows[0].CostBand(); return hi }() {
		t.Errorf("rows' own bands do not overlap: the test no longer shows the paired comparison")
	}
	p, err = BuyCatalogueGiven(w, givenCPU, speedCatalogue(t, 10.5, 12), "this box")
	if err != nil {
		t.Fatal(err)
	}
	if p.Decision != "" || !slices.Contains(p.Rivals, "slow ×1") || p.Decider != measurements[AssumeCoreSpeed] {
		t.Errorf("overlapping per-core bands: decision %q, rivals %v, decider %q: "+
			"want cannot tell, slow ×1, the per-core measurement", p.Decision, p.Rivals, p.Decider)
	}
	// Without this machine's figure, per-core figures go unused.
	p, err = BuyCatalogueGiven(w, givenCPU, speedCatalogue(t, 14, 15), "AMD EPYC")
	if err != nil {
		t.Fatal(err)
	}
	if p.Decision != "" || !strings.Contains(p.Band, "the same IPC") {
		t.Errorf("no figure for this machine: decision %q, band %q: want cannot tell on the same IPC", p.Decision, p.Band)
	}
}

// TestCatalogueSpeed checks the per-core arithmetic: a catalogue CPU k
// times as fast per core as this machine spends this machine's core time
// over k, A/(f₀·k), and waits as long, M·L, whatever its own clock.
func TestCatalogueSpeed(t *testing.T) {
	cat := speedCatalogue(t, 14, 15)
	w, f0 := model.Default(), 3.0
	ref := cat.References[0].PerCore
	u := Uncertainty{SMT: model.Range{Value: 1, Low: 1, High: 1}, AnchorGHz: f0,
		ThisSpeed: &model.Range{Value: ref.Median, Low: ref.Low, High: ref.High}}
	for _, s := range CatalogueCandidates(cat, 0, &ref) {
		if s.Sockets != 1 {
			continue
		}
		sc := u.center(w)
		k := s.perCore / ref.Median
		perCore, _ := u.tpsAt(s, sc)
		want := 1e9 / (w.Core()/(f0*k) + w.Waits()*s.LocalNS)
		if math.Abs(perCore-want) > 1e-9*want {
			t.Errorf("%s: %v tps per core: want %v (k = %v)", s.Name, perCore, want, k)
		}
		sc.speedEnd, sc.thisEnd = -1, 1
		lo, _ := u.tpsAt(s, sc)
		kLow := s.perCoreLow / ref.High
		if want := 1e9 / (w.Core()/(f0*kLow) + w.Waits()*s.LocalNS); math.Abs(lo-want) > 1e-9*want {
			t.Errorf("%s at its low end against this machine's high: %v: want %v", s.Name, lo, want)
		}
	}
}
