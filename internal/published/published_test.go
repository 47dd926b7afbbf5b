package published

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// TestBuiltinResults holds the shape item 4 of issue 36 asks of the
// results file: at least four pairs from at least two CPU generations,
// every result with its system, CPU, sockets, cores, result, date, the
// document it comes from and a source the file lists, and every platform's
// latencies with theirs.
func TestBuiltinResults(t *testing.T) {
	r, err := BuiltinResults()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Pairs) < 4 {
		t.Errorf("%d pairs: want at least 4", len(r.Pairs))
	}
	gens := map[string]bool{}
	for _, p := range r.Pairs {
		gens[r.result(p.From).Generation] = true
		if a, b := r.result(p.From), r.result(p.To); a.Generation != b.Generation {
			t.Errorf("pair %s to %s crosses generations %s and %s: want one CPU", p.From, p.To, a.Generation, b.Generation)
		}
	}
	if len(gens) < 2 {
		t.Errorf("generations %v: want at least 2", gens)
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
	if math.Abs(k.Predicted-want) > 1e-12 || k.FromNS != 114 || k.ToNS != 126.5 {
		t.Errorf("predicted %v at %v → %v ns: want %v at 114 → 126.5", k.Predicted, k.FromNS, k.ToNS, want)
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
		from, to string
		errPct   float64
		inBand   bool
	}{
		{"lenovo-sr650-8180", "lenovo-sr950-8180", 9.0, false},
		{"fujitsu-rx2540m4-8180", "lenovo-sr950-8180", 9.2, false},
		{"lenovo-2s-e5-2699v4", "lenovo-x3850x6-e7-8890v4", 3.9, false},
		{"fujitsu-2s-e5-2699v4", "fujitsu-rx4770m3-e7-8890v4", 2.7, false},
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
		if got := math.Round(1000*k.Error) / 10; got != h.errPct || k.InBand != h.inBand {
			t.Errorf("%s to %s: error %+.1f%%, in band %v: recorded %+.1f%%, %v", h.from, h.to, got, k.InBand, h.errPct, h.inBand)
		}
	}
	if !strings.Contains(v.Summary(), "+2.7% to +9.2%") {
		t.Errorf("summary %q: want the error range +2.7%% to +9.2%%", v.Summary())
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
	for _, want := range []string{"11357.28 tpsE", "1.721×", "+9.0%", "[berry-2017]", "buffer 15 ns", "http://www.qdpma.com/ServerSystems/TPCE.html"} {
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
		{name: "unknown source", old: `"source": "berry-2016"`, new: `"source": "nobody"`, want: []string{"result 6", `source = "nobody" names no source`}},
		{name: "no document", old: `"document": "TPC-E result, Lenovo System x3850 X6, SQL Server 2016 (figures read in Glenn Berry's post)"`, new: `"document": ""`, want: []string{"result 6", "document is missing"}},
		{name: "bad date", old: `"date": "2016-05-31"`, new: `"date": "May 2016"`, want: []string{"result 6", `date = "May 2016"`}},
		{name: "unknown field", old: `"cores": 96,`, new: `"cores": 96, "coers": 1,`, want: []string{"data/tpc.json", `unknown field "coers"`}},
		{name: "syntax", old: `"cores": 96,`, new: `"cores": 96,,`, want: []string{"data/tpc.json:", "invalid character"}},
		{name: "pair of one shape", old: `"to": "lenovo-sr950-8180",`, new: `"to": "fujitsu-rx2540m4-8180",`, want: []string{"pair 1", "same sockets and cores"}},
		{name: "price source", cat: true, old: `"price_source": "cpu-world"`, new: `"price_source": ""`, want: []string{"data/cpus.json", "price_source", "names no source"}},
		{name: "threads", cat: true, old: `"threads": 192,`, new: `"threads": 12,`, want: []string{`cpu 1 ("AMD EPYC 9654")`, "threads = 12 is out of range"}},
		{name: "band", cat: true, old: `"latency": "server-one-socket",`, new: `"latency": "guess",`, want: []string{"latency", `"guess" names no latency band`}},
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
