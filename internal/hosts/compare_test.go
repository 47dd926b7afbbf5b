package hosts

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// prices are a and b at purchase prices, no licences.
func prices(a, b float64) []Price {
	return []Price{{Name: "a", Price: a}, {Name: "b", Price: b}}
}

// TestNotComparable: runs that measured different things are refused,
// and the error says what differs and between which runs.
func TestNotComparable(t *testing.T) {
	base := spec{host: "a", cores: 4, smt: 1, one: []float64{100, 101, 99}, two: []float64{200, 202, 198}}
	for _, tc := range []struct {
		name string
		b    func(s *spec)
		want string
	}{
		{"engine", func(s *spec) { s.engine = "postgres" }, "engine postgres against sqlite"},
		{"warehouses", func(s *spec) { s.warehouses = 4 }, "warehouses 4 against 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := base
			b.host = "b"
			tc.b(&b)
			_, err := compareSpecs(t, prices(1000, 1000), base, b)
			if !errors.Is(err, ErrNotComparable) || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "host b's run") {
				t.Fatalf("got %v, want ErrNotComparable saying %q of host b's run", err, tc.want)
			}
		})
	}
}

// TestNotComparableNamedRuns: a load curve named with --run is refused,
// saying its tps is its pace; so is a workload differing between hosts.
func TestNotComparableNamedRuns(t *testing.T) {
	st := newStore(t, "one.db")
	write(t, st, spec{host: "a", cores: 4, smt: 1, two: []float64{200, 210}, curve: true})
	write(t, st, spec{host: "b", cores: 4, smt: 1, two: []float64{200, 210}})
	srcs, _, err := Select([]Store{st}, Selection{Runs: []string{"2", "4"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compare([]string{st.Path()}, srcs, prices(1, 1))
	if !errors.Is(err, ErrNotComparable) || !strings.Contains(err.Error(), "a load curve") {
		t.Fatalf("got %v, want a load curve refused", err)
	}
	// Without --run, the curve is not a candidate: host a has no run,
	// and is said to be left out, with why.
	srcs, left, err := Select([]Store{st}, Selection{})
	if err != nil || len(srcs) != 1 || srcs[0].Run.Host != "b" {
		t.Fatalf("got %d sources, %v; want host b's run alone", len(srcs), err)
	}
	if len(left) != 1 || !strings.Contains(left[0],
		"host a: no complete closed-loop OLTP run to compare (the last seen: run 2 is a load curve)") {
		t.Errorf("left out %q, want host a with its load curve", left)
	}
}

// tTable is Student's t at 0.975 for 1 to 10 degrees of freedom, as
// printed in tables (NIST/SEMATECH e-Handbook, 1.3.6.7.2), to check Band
// against numbers it did not compute.
var tTable = []float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228}

// TestBand: the band is the mean ± t·s/√n, and none with one repeat.
func TestBand(t *testing.T) {
	mean, lo, hi := Band([]float64{100, 110, 120})
	want := tTable[2] * 10 / math.Sqrt(3)
	if mean != 110 || math.Abs((hi-mean)-want) > 0.01 || math.Abs((mean-lo)-want) > 0.01 {
		t.Errorf("Band(100, 110, 120) = %v, %v, %v; want 110 ± %.3f", mean, lo, hi, want)
	}
	if m, l, h := Band([]float64{42}); m != 42 || l != 42 || h != 42 {
		t.Errorf("Band(42) = %v, %v, %v; want no band", m, l, h)
	}
	c, err := compareSpecs(t, prices(1000, 1000),
		spec{host: "a", cores: 2, smt: 1, one: []float64{100}, two: []float64{190, 200, 210}},
		spec{host: "b", cores: 2, smt: 1, one: []float64{100}, two: []float64{400, 404, 396}})
	if err != nil {
		t.Fatal(err)
	}
	a := c.Hosts[1]
	if a.Name != "a" || math.Abs(a.TPSHigh-200-tTable[2]*10/math.Sqrt(3)) > 0.01 {
		t.Fatalf("host a: tps %v band %v to %v; want 200 ± %.3f", a.TPS, a.TPSLow, a.TPSHigh, tTable[2]*10/math.Sqrt(3))
	}
	if math.Abs(a.CostLow-1000/(a.TPSHigh/1000)) > 1e-9 || math.Abs(a.CostHigh-1000/(a.TPSLow/1000)) > 1e-9 {
		t.Errorf("host a: cost band %v to %v, want the cost at the tps band's ends", a.CostLow, a.CostHigh)
	}
	if c.Decision != "b" || !strings.HasPrefix(c.Recommendation, "Buy b: ") {
		t.Errorf("decision %q: %s; want Buy b", c.Decision, c.Recommendation)
	}
}

// TestCannotTell: overlapping bands say "cannot tell", with the repeats
// more on each that would part them; checked against the t table: with
// that many more the bands part, with one fewer they do not.
func TestCannotTell(t *testing.T) {
	a := []float64{195, 205, 200}
	b := []float64{210, 222, 216}
	c, err := compareSpecs(t, prices(1000, 1000),
		spec{host: "a", cores: 2, smt: 1, one: []float64{100}, two: a},
		spec{host: "b", cores: 2, smt: 1, one: []float64{100}, two: b})
	if err != nil {
		t.Fatal(err)
	}
	n := c.MoreRepeats
	if c.Decision != "" || n == 0 || !strings.HasPrefix(c.Recommendation, "Cannot tell: b and a overlap") ||
		!strings.Contains(c.Recommendation, " more repeats on each would decide") {
		t.Fatalf("decision %q, %d more: %s", c.Decision, n, c.Recommendation)
	}
	// b (mean 216, s 6) is cheaper than a (mean 200, s 5): parted when
	// 216 − t·6/√k > 200 + t·5/√k, that is t·11/√k < 16.
	parted := func(k int) bool { return tTable[k-1]*11/math.Sqrt(float64(k)) < 16 }
	if k := 3 + n; k > 10 || !parted(k) || parted(k-1) {
		t.Errorf("%d more repeats: want the fewest k − 3 with t(k−1)·11/√k < 16 (t table up to 10 repeats)", n)
	}
}

// TestMeasuredOnce: a host measured once has no band, and the answer
// says its spread is unknown rather than guessing repeats.
func TestMeasuredOnce(t *testing.T) {
	c, err := compareSpecs(t, prices(1000, 1000),
		spec{host: "a", cores: 2, smt: 1, one: []float64{100}, two: []float64{200}},
		spec{host: "b", cores: 2, smt: 1, one: []float64{100}, two: []float64{400, 401, 399}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Decision != "" || !strings.HasPrefix(c.Recommendation, "Cannot tell between ") ||
		!strings.Contains(c.Recommendation, "a was measured once, so no spread is known") {
		t.Errorf("decision %q: %s", c.Decision, c.Recommendation)
	}
}

// TestPricesAndLicences: cost is the price or hourly × hours plus every
// physical core's licence; a host without a price, and a price of no host,
// are refused by name.
func TestPricesAndLicences(t *testing.T) {
	ps, err := ParsePrices("p.toml", []byte(`licence_per_core = 100
[[host]]
name = "a"
price = 1000
[[host]]
name = "b"
hourly = 0.5
hours = 1000
licence_per_core = 0
`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := compareSpecs(t, ps,
		spec{host: "a", cores: 4, smt: 2, one: []float64{100}, two: []float64{200, 200}},
		spec{host: "b", cores: 2, smt: 1, one: []float64{100}, two: []float64{100, 100}})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range c.Hosts {
		want := map[string]float64{"a": 1000 + 4*100, "b": 500}[h.Name]
		if h.TotalCost != want {
			t.Errorf("host %s: total cost %v, want %v (%s)", h.Name, h.TotalCost, want, h.Price)
		}
	}
	_, err = compareSpecs(t, []Price{{Name: "a", Price: 1}, {Name: "c", Price: 1}},
		spec{host: "a", cores: 1, smt: 1, two: []float64{1, 2}}, spec{host: "b", cores: 1, smt: 1, two: []float64{1, 2}})
	if err == nil || !strings.Contains(err.Error(), "no price for host b") ||
		!strings.Contains(err.Error(), "host c has no run") {
		t.Errorf("got %v, want host b's missing price and host c's stray one named", err)
	}
	for _, bad := range []struct{ file, want string }{
		{`[[host]]
name = "a"`, "want a purchase price above 0"},
		{`[[host]]
name = "a"
price = 1
hourly = 2`, "price and hourly are both given"},
		{`[[host]]
name = "a"
hourly = 2`, "hours = 0"},
		{`[[host]]
name = "a"
prise = 2`, `unknown key "host.prise"`},
		{`[[host]]
name = "a"
price = 1
[[host]]
name = "a"
price = 2`, `host "a" is given twice`},
	} {
		if _, err := ParsePrices("p.toml", []byte(bad.file)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: got %v, want %q", bad.file, err, bad.want)
		}
	}
}

// TestVersionsAndWarnings: hosts measured by different numalab versions
// are said so, and a preflight warning affecting OLTP is shown beside its
// host.
func TestVersionsAndWarnings(t *testing.T) {
	c, err := compareSpecs(t, prices(1000, 1000),
		spec{host: "a", cores: 2, smt: 1, one: []float64{100}, two: []float64{200, 201}, version: "v1",
			warning: "hypervisor KVM"},
		spec{host: "b", cores: 2, smt: 1, one: []float64{100}, two: []float64{400, 401}, version: "v2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "numalab versions differ (a v1, b v2)") {
		t.Errorf("notes %q: want the versions said", c.Notes)
	}
	if h := c.Hosts[1]; h.Name != "a" || len(h.Warnings) != 1 || !strings.HasPrefix(h.Warnings[0], "hypervisor KVM") {
		t.Errorf("host %s warnings %q", h.Name, h.Warnings)
	}
}

// TestUnbounded: a tps band that reaches 0 leaves the cost band with no
// top: such a host is never outbid, and the answer cannot tell.
func TestUnbounded(t *testing.T) {
	if _, lo, _ := Band([]float64{10, 400}); lo != 0 {
		t.Errorf("Band(10, 400) low = %v, want 0 (a throughput)", lo)
	}
	c, err := compareSpecs(t, prices(1000, 1000),
		spec{host: "a", cores: 2, smt: 1, one: []float64{100}, two: []float64{10, 400}},
		spec{host: "b", cores: 2, smt: 1, one: []float64{100}, two: []float64{200, 201, 199}})
	if err != nil {
		t.Fatal(err)
	}
	a := c.Hosts[0]
	if a.Name != "a" || !a.Unbounded || a.CostHigh != 0 || c.Decision != "" ||
		!strings.Contains(c.Recommendation, "band 373 to no upper bound (its tps band reaches 0)") {
		t.Errorf("host %s unbounded %v, decision %q: %s", a.Name, a.Unbounded, c.Decision, c.Recommendation)
	}
}
