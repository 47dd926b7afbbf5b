package published

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestBuiltinResults holds the shape item 2 of issue 48 asks of the
// results file: at least eight pairs from at least three CPU generations,
// two to four sockets and four to eight, every result with its system,
// CPU, sockets, cores, result, date, the document it comes from and a
// source the file lists, and every platform's latencies with theirs.
func TestBuiltinResults(t *testing.T) {
	r, err := BuiltinResults()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Pairs) < 8 {
		t.Errorf("%d pairs: want at least 8", len(r.Pairs))
	}
	gens, shapes := map[string]bool{}, map[[2]int]bool{}
	for _, p := range r.Pairs {
		a, b := r.result(p.From), r.result(p.To)
		gens[a.Generation] = true
		shapes[[2]int{a.Sockets, b.Sockets}] = true
		if a.Generation != b.Generation {
			t.Errorf("pair %s to %s crosses generations %s and %s: want one CPU", p.From, p.To, a.Generation, b.Generation)
		}
	}
	if len(gens) < 3 {
		t.Errorf("generations %v: want at least 3", gens)
	}
	if !shapes[[2]int{2, 4}] || !shapes[[2]int{4, 8}] {
		t.Errorf("socket counts %v: want pairs of 2 to 4 sockets and of 4 to 8", shapes)
	}
	for _, x := range r.Results {
		if sourceOf(r.Sources, x.Source).URL == "" || x.Document == "" || x.Date == "" || x.System == "" {
			t.Errorf("result %s: want a source with its address, the document, the date and the system", x.ID)
		}
	}
	for _, p := range r.Platforms {
		if sourceOf(r.Sources, p.Source).States == "" {
			t.Errorf("platform %s: its source says nothing it states", p.ID)
		}
	}
}

// TestBuiltinCatalogue holds item 7's catalogue: at least eight CPUs of
// both vendors, one-socket and two-socket parts, each with cores,
// threads, base clock, memory channels, a latency band, and a list price
// with its source and date.
func TestBuiltinCatalogue(t *testing.T) {
	c, err := BuiltinCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.CPUs) < 8 {
		t.Errorf("%d CPUs: want at least 8", len(c.CPUs))
	}
	vendors, sockets := map[string]bool{}, map[bool]bool{}
	for _, x := range c.CPUs {
		vendors[x.Vendor] = true
		sockets[x.MaxSockets == 1] = true
		if sourceOf(c.Sources, x.PriceSource).URL == "" || x.PriceDate == "" || c.Band(x).HighNS == 0 {
			t.Errorf("cpu %s: want a price source with its address, a price date and a latency band", x.Name)
		}
		if g := x.LoadedGHz(); g != x.AllCoreGHz && !(x.AllCoreGHz == 0 && g == x.BaseGHz) {
			t.Errorf("cpu %s: loaded clock %v: want the all-core clock, or the base clock without one", x.Name, g)
		}
	}
	if !vendors["AMD"] || !vendors["Intel"] {
		t.Errorf("vendors %v: want AMD and Intel", vendors)
	}
	if !sockets[true] || !sockets[false] {
		t.Errorf("want one-socket-only and multi-socket parts, have %v", sockets)
	}
}

// TestCatalogueSourced holds issue 48 item 4's rule for the catalogue:
// every figure cites a source the file lists, every source says whether
// its figures are measured, the vendor's or estimated, and every CPU and
// reference has a per-core figure from published results, each naming
// the result nearest its median.
func TestCatalogueSourced(t *testing.T) {
	c, err := BuiltinCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Sources {
		if s.Basis == "" || s.URL == "" || s.Title == "" {
			t.Errorf("source %q: basis %q, address %q: want a basis, an address and a title", s.ID, s.Basis, s.URL)
		}
	}
	cited := func(what, id string) {
		if sourceOf(c.Sources, id).ID == "" {
			t.Errorf("%s cites %q, no source of the file", what, id)
		}
	}
	for _, b := range c.LatencyBands {
		cited("latency band "+b.ID, b.Source)
	}
	for _, x := range c.CPUs {
		cited(x.Name+" spec", x.SpecSource)
		cited(x.Name+" price", x.PriceSource)
		if x.PerCore == nil {
			t.Errorf("cpu %s: no per-core figure", x.Name)
			continue
		}
		cited(x.Name+" per core", x.PerCore.Source)
		if p := x.PerCore; p.URL == "" || p.Example == "" || p.Results < 1 || !(p.Low <= p.Median && p.Median <= p.High) {
			t.Errorf("cpu %s: per core %+v: want the median inside its band, the results counted and one named", x.Name, p)
		}
	}
	if len(c.References) == 0 {
		t.Error("no reference CPU: want one for this machine's per-core figure")
	}
	for _, r := range c.References {
		cited(r.Name+" per core", r.PerCore.Source)
	}
}

// TestPerCoreOf finds a CPU's per-core figure from the model name Linux
// gives: the longest name the model name contains, trademark marks and
// case ignored; a hypervisor's bare "AMD EPYC" names no CPU.
func TestPerCoreOf(t *testing.T) {
	c, err := BuiltinCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	for model, want := range map[string]string{
		"AMD EPYC 9654P 96-Core Processor": "AMD EPYC 9654P",
		"AMD EPYC 9654 96-Core Processor":  "AMD EPYC 9654",
		"Intel(R) Xeon(R) Gold 6444Y":      "Intel Xeon Gold 6444Y",
		"AMD EPYC 7763 64-Core Processor":  "AMD EPYC 7763",
		"amd epyc 7763":                    "AMD EPYC 7763",
		"AMD EPYC":                         "",
		"":                                 "",
	} {
		name, p, ok := c.PerCoreOf(model)
		if name != want || ok != (want != "") || (ok && p.Median <= 0) {
			t.Errorf("PerCoreOf(%q) = %q, %v, %v: want %q", model, name, p.Median, ok, want)
		}
	}
}

// TestValidateHandComputed checks the first pair against the arithmetic:
// Xeon SP 8180, 89/139 ns: two sockets average (89 + 139)/2 = 114 ns, four
// (89 + 3·139)/4 = 126.5 ns. At the stall share s = 0.6 of the two-socket
// cycles, cycles per transaction scale as (1 − s) + s·L4/L2, the clock is
// the same, and there are twice the cores: 2 / (0.4 + 0.6·126.5/114).
func TestValidateHandComputed(t *testing.T) {
	r, err := BuiltinResults()
	if err != nil {
		t.Fatal(err)
	}
	v, err := Validate(r)
	if err != nil {
		t.Fatal(err)
	}
	k := v.Checks[0]
	if k.From.ID != "lenovo-sr650-8180" || k.To.ID != "lenovo-sr950-8180" {
		t.Fatalf("first pair %s to %s: the test's arithmetic is for the 8180 pair", k.From.ID, k.To.ID)
	}
	want := 2 / (0.4 + 0.6*126.5/114)
	if math.Abs(k.LatencyRatio-want) > 1e-12 || k.FromNS != 114 || k.ToNS != 126.5 {
		t.Errorf("latency model's ratio %v at %v → %v ns: want %v at 114 → 126.5", k.LatencyRatio, k.FromNS, k.ToNS, want)
	}
	// The contention term: 56 → 112 cores at the fitted σ.
	if c := (1 + v.Sigma*55) / (1 + v.Sigma*111); math.Abs(k.Contention-c) > 1e-12 ||
		math.Abs(k.Predicted-want*c) > 1e-12 {
		t.Errorf("contention %v, predicted %v: want %v and %v at σ = %v", k.Contention, k.Predicted, c, want*c, v.Sigma)
	}
	if pub := 11357.28 / 6598.36; math.Abs(k.Published-pub) > 1e-12 {
		t.Errorf("published %v: want %v", k.Published, pub)
	}
	// The latency that would match: 2 / (0.4 + 0.6·L/114) = published.
	if l := 114 * (2/k.Published - 0.4) / 0.6; math.Abs(k.MatchNS-l) > 1e-9 {
		t.Errorf("latency to match %v ns: want %v", k.MatchNS, l)
	}
	if !(k.Low <= k.Predicted && k.Predicted <= k.High) {
		t.Errorf("band %v to %v does not hold the prediction %v", k.Low, k.High, k.Predicted)
	}
	// Four to eight sockets of one X7560 system to the other, three
	// sockets one hop away at 197.4 ns and four two hops away at 228.475,
	// local 135.25: L4 = (135.25 + 3·197.4)/4, L8 = (135.25 + 3·197.4 +
	// 4·228.475)/8; the same cores per socket and clock.
	k = v.Checks[5]
	if k.From.ID != "fujitsu-rx600s5-x7560" || k.To.ID != "fujitsu-rx900s1-x7560" {
		t.Fatalf("sixth pair %s to %s: the test's arithmetic is for the Fujitsu X7560 pair", k.From.ID, k.To.ID)
	}
	l4, l8 := (135.25+3*197.4)/4, (135.25+3*197.4+4*228.475)/8
	if want := 2 / (0.4 + 0.6*l8/l4); math.Abs(k.LatencyRatio-want) > 1e-12 || math.Abs(k.FromNS-l4) > 1e-9 ||
		math.Abs(k.ToNS-l8) > 1e-9 {
		t.Errorf("4 to 8 sockets: latency model's ratio %v at %v → %v ns: want %v at %v → %v",
			k.LatencyRatio, k.FromNS, k.ToNS, want, l4, l8)
	}
}

// TestValidateHeld records how the model does on every pair: the error
// (predicted / published − 1, to 0.1 point) and whether the published
// ratio lies in the band. A change to the model or the data that moves
// them fails here; change the table only with docs/model.md's account of
// why (section "The model against published results").
func TestValidateHeld(t *testing.T) {
	r, err := BuiltinResults()
	if err != nil {
		t.Fatal(err)
	}
	v, err := Validate(r)
	if err != nil {
		t.Fatal(err)
	}
	held := []struct {
		from, to           string
		latencyPct, errPct float64
		looPct, cpuOutPct  float64
		inBand             bool
	}{
		{"lenovo-sr650-8180", "lenovo-sr950-8180", 9.0, -0.1, -0.1, -0.1, true},
		{"fujitsu-rx2540m4-8180", "lenovo-sr950-8180", 9.2, 0.0, 0.0, 0.0, true},
		{"lenovo-2s-e5-2699v4", "lenovo-x3850x6-e7-8890v4", 3.9, -4.3, -5.3, -7.0, true},
		{"fujitsu-2s-e5-2699v4", "fujitsu-rx4770m3-e7-8890v4", 2.7, -5.4, -6.6, -8.1, false},
		{"ibm-2s-e7-2870", "ibm-x3850x5-e7-4870", 3.3, -0.2, -0.2, -0.2, true},
		{"fujitsu-rx600s5-x7560", "fujitsu-rx900s1-x7560", 0.0, -5.1, -5.5, -3.6, true},
		{"ibm-4s-x7560", "nec-8s-x7560", 19.6, 13.4, 14.6, 15.2, false},
		{"dell-r910-x7560", "nec-8s-x7560", 14.3, 8.4, 9.2, 10.1, true},
	}
	if len(v.Checks) != len(held) {
		t.Fatalf("%d checks: the table holds %d", len(v.Checks), len(held))
	}
	for i, h := range held {
		k := v.Checks[i]
		if k.From.ID != h.from || k.To.ID != h.to {
			t.Errorf("check %d is %s to %s: want %s to %s", i+1, k.From.ID, k.To.ID, h.from, h.to)
			continue
		}
		pct := func(x float64) float64 { return math.Round(1000*x) / 10 }
		if k.LOO == nil || k.LOO.CPUOut == nil {
			t.Fatalf("%s to %s: no leave-one-out or CPU-out prediction", h.from, h.to)
		}
		got := []float64{pct(k.LatencyRatio/k.Published - 1), pct(k.Error), pct(k.LOO.Error), pct(k.LOO.CPUOut.Error)}
		want := []float64{h.latencyPct, h.errPct, h.looPct, h.cpuOutPct}
		if !slices.Equal(got, want) || k.InBand != h.inBand {
			t.Errorf("%s to %s: latency alone, fitted, LOO, CPU out %v%%, in band %v: recorded %v%%, %v",
				h.from, h.to, got, k.InBand, want, h.inBand)
		}
	}
	for _, w := range []string{"σ = 0.00179", "-5.4% to +13.4%", "leave-one-out by -6.6% to +14.6% (median |error| 5.4%)",
		"CPU out median |error| 5.3%", "6 of 8", "TPC-E 2 to 4 sockets; TPC-E 4 to 8 sockets"} {
		if !strings.Contains(v.Summary(), w) {
			t.Errorf("summary %q lacks %q", v.Summary(), w)
		}
	}
	// The term table: the latency model alone, each candidate term, the
	// contention term in and out of sample; every error to 0.1 point.
	terms := [][]float64{
		{9.0, 9.2, 3.9, 2.7, 3.3, 0.0, 19.6, 14.3},      // memory latency alone
		{12.8, 12.9, 6.2, 5.0, 6.4, 0.0, 19.6, 14.3},    // + TPC-E's locality (80% on 2S, 70% on 4S; n/a 4 to 8)
		{12.8, 13.0, 8.3, 7.0, 3.2, 0.1, 19.6, 14.3},    // + a 4S remote latency at 1.46× local
		{9.0, 9.2, 3.1, 1.9, 3.3, 0.0, 19.6, 14.3},      // + Broadwell's measured 1.76× remote
		{-0.1, 0.0, -4.3, -5.4, -0.2, -5.1, 13.4, 8.4},  // + contention, σ fitted to all pairs
		{-0.1, 0.0, -5.3, -6.6, -0.2, -5.5, 14.6, 9.2},  // + contention, leave-one-out
		{-0.1, 0.0, -7.0, -8.1, -0.2, -3.6, 15.2, 10.1}, // + contention, the pair's CPU left out
	}
	if na := v.Terms[1].NotApplicable; !slices.Equal(na, []bool{false, false, false, false, false, true, true, true}) {
		t.Errorf("locality term not applicable %v: want the three 4-to-8-socket pairs, which have no 8-socket figure", na)
	}
	if len(v.Terms) != len(terms) {
		t.Fatalf("%d terms: the table holds %d", len(v.Terms), len(terms))
	}
	for i, term := range v.Terms {
		var got []float64
		for _, e := range term.Errors {
			got = append(got, math.Round(1000*e)/10)
		}
		if !slices.Equal(got, terms[i]) || term.Adopted != (i == 0 || i > 3) {
			t.Errorf("term %q: errors %v%%, adopted %v: recorded %v%%", term.Term, got, term.Adopted, terms[i])
		}
	}
}

// TestWriteValidation prints every pair, result, latency and source.
func TestWriteValidation(t *testing.T) {
	r, err := BuiltinResults()
	if err != nil {
		t.Fatal(err)
	}
	v, err := Validate(r)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteValidation(&b, r, v); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"11357.28 tpsE", "1.721×", "+9.0%", "[berry-2017]", "buffer 15 ns",
		"http://www.qdpma.com/ServerSystems/TPCE.html",
		"LOO error", "Which term moves each pair's error", "+ a four-socket remote latency (Intel MLC)", "[intel-mlc-4s]",
		"two hops 228.475 ns (band 197.4 to 259.55 ns)", "n/a", "3800 tpsE", "[chang-rx900-2010]"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestParseRefuses breaks the embedded files one way at a time and wants
// each refusal to name the file, the row and the field.
func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		cat            bool
		want           []string
	}{
		{name: "unknown source", old: `"source": "berry-2016"`, new: `"source": "nobody"`,
			want: []string{"result 6", `source = "nobody" names no source`}},
		{name: "no document",
			old: `"document": "TPC-E result, Lenovo System x3850 X6, SQL Server 2016 (figures read in Glenn Berry's post)"`,
			new: `"document": ""`, want: []string{"result 6", "document is missing"}},
		{name: "bad date", old: `"date": "2016-05-31"`, new: `"date": "May 2016"`,
			want: []string{"result 6", `date = "May 2016"`}},
		{name: "unknown field", old: `"cores": 96,`, new: `"cores": 96, "coers": 1,`,
			want: []string{"data/tpc.json", `unknown field "coers"`}},
		{name: "syntax", old: `"cores": 96,`, new: `"cores": 96,,`, want: []string{"data/tpc.json:", "invalid character"}},
		{name: "pair of one shape", old: `"to": "lenovo-sr950-8180",`, new: `"to": "fujitsu-rx2540m4-8180",`,
			want: []string{"pair 1", "same sockets and cores"}},
		{name: "price source", cat: true, old: `"price_source": "cpu-world"`, new: `"price_source": ""`,
			want: []string{"data/cpus.json", "price_source", "names no source"}},
		{name: "threads", cat: true, old: `"threads": 192,`, new: `"threads": 12,`,
			want: []string{`cpu 1 ("AMD EPYC 9654")`, "threads = 12 is out of range"}},
		{name: "candidate kind", old: `"value": 1.46`, new: `"value": 1.46, "kind": "hops"`,
			want: []string{"candidate 3", `kind = "hops"`}},
		{name: "candidate platform", old: `"platforms": [
        "xeon-e5-v4",`, new: `"platforms": [
        "xeon-e9",`, want: []string{"candidate 4", `names "xeon-e9"`}},
		{name: "eight sockets, no two hops", old: `"two_hop_ns": 228.475,`, new: ``,
			want: []string{"result 14", `platform = "xeon-x7560" has no two_hop_ns: 8 sockets need`, "platform 5",
				"two_hop_ns is missing"}},
		{name: "two hops below one", old: `"two_hop_low_ns": 197.4,`, new: `"two_hop_low_ns": 190,`,
			want: []string{`platform 5 ("xeon-x7560")`, "two_hop_low_ns = 190 is out of range: want 197.4 to 228.475"}},
		{name: "sixteen sockets", old: `"sockets": 8,
      "cores": 64,
      "result": 3141.76,`, new: `"sockets": 16,
      "cores": 64,
      "result": 3141.76,`, want: []string{"result 13", "sockets = 16: the per-hop model takes at most 8"}},
		{name: "basis", cat: true, old: `"basis": "measured"`, new: `"basis": "read"`,
			want: []string{`source 5 ("gjbex-spr-mlc")`, `basis = "read"`}},
		{name: "per-core source", cat: true, old: `"source": "spec-cpu2017"`, new: `"source": ""`,
			want: []string{`cpu 1 ("AMD EPYC 9654")`, "per_core.source", "names no source"}},
		{name: "per-core median", cat: true, old: `"median": 8.698,`, new: `"median": 11,`,
			want: []string{`cpu 1 ("AMD EPYC 9654")`, "per_core.median = 11 is out of range"}},
		{name: "band", cat: true, old: `"latency": "server-one-socket",`, new: `"latency": "guess",`,
			want: []string{"latency", `"guess" names no latency band`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, parse := tpcJSON, func(b []byte) error { _, err := ParseResults("data/tpc.json", b); return err }
			if tc.cat {
				src, parse = cpusJSON, func(b []byte) error { _, err := ParseCatalogue("data/cpus.json", b); return err }
			}
			if !bytes.Contains(src, []byte(tc.old)) {
				t.Fatalf("the data file no longer contains %q", tc.old)
			}
			err := parse(bytes.Replace(src, []byte(tc.old), []byte(tc.new), 1))
			if err == nil || !errors.Is(err, ErrData) {
				t.Fatalf("err = %v: want an ErrData", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestFitSigma holds the contention fit: points made at a known σ give it
// back, and with two points the leave-one-out σ of one is the σ that
// matches the other exactly, (1 − g)/(g·(n_to − 1) − (n_from − 1)) with
// g = published / latency ratio.
func TestFitSigma(t *testing.T) {
	const sigma = 0.0013
	var pts []sigmaPoint
	for _, n := range [][2]int{{56, 112}, {44, 96}, {16, 32}} {
		p := sigmaPoint{latency: 1.9, from: n[0], to: n[1]}
		p.published = p.latency * p.contention(sigma)
		pts = append(pts, p)
	}
	if got := fitSigma(pts, nil); math.Abs(got-sigma) > 1e-9 {
		t.Errorf("fitted σ %v: want %v", got, sigma)
	}
	two := []sigmaPoint{{latency: 1.877, published: 1.721, from: 56, to: 112},
		{latency: 1.909, published: 1.836, from: 44, to: 96}}
	g := two[1].published / two[1].latency
	want := (1 - g) / (g*95 - 43)
	if f := fold(two, 0, func(j int) bool { return j == 0 }); math.Abs(f.Sigma-want) > 1e-9 {
		t.Errorf("σ without pair 1: %v, want %v", f.Sigma, want)
	}
	// A published ratio above the latency model's asks for σ < 0: held at 0.
	if got := fitSigma([]sigmaPoint{{latency: 1.8, published: 1.9, from: 2, to: 4}}, nil); got > 1e-9 {
		t.Errorf("σ %v for a pair the latency model under-predicts: want 0", got)
	}
}
