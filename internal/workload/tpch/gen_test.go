package tpch

import (
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"
)

func TestCountsFor(t *testing.T) {
	for _, c := range []struct {
		sf   float64
		want Counts
	}{
		{0.01, Counts{Supplier: 100, Part: 2000, PartSupp: 8000, Customer: 1500, Orders: 15000, Nation: 25, Region: 5}},
		{0.1, Counts{Supplier: 1000, Part: 20000, PartSupp: 80000, Customer: 15000, Orders: 150000, Nation: 25, Region: 5}},
		{1,
			Counts{Supplier: 10000, Part: 200000, PartSupp: 800000, Customer: 150000, Orders: 1500000, Nation: 25, Region: 5}},
	} {
		got, err := CountsFor(c.sf)
		if err != nil || got != c.want {
			t.Errorf("CountsFor(%g) = %+v, %v; want %+v", c.sf, got, err, c.want)
		}
		if got.LineitemMean() != 4*c.want.Orders {
			t.Errorf("SF %g: LineitemMean %d, want %d", c.sf, got.LineitemMean(), 4*c.want.Orders)
		}
	}
	for _, sf := range []float64{0, -1, math.NaN(), math.Inf(1), 0.00001, 0.0001, 0.001} {
		if _, err := CountsFor(sf); !errors.Is(err, ErrScale) {
			t.Errorf("CountsFor(%g): %v, want ErrScale", sf, err)
		}
	}
}

// TestDistinctSuppliers checks the rule against every part's four
// suppliers at small scale factors: SF 0.001's 10 suppliers repeat one
// (its load failed on PARTSUPP's key), SF 0.01's 100 do not.
func TestDistinctSuppliers(t *testing.T) {
	for s := int64(1); s <= 120; s++ {
		parts := 20 * s
		dup := false
		for p := int64(1); p <= parts && !dup; p++ {
			seen := map[int64]bool{}
			for j := int64(0); j < 4; j++ {
				k := suppKey(p, j, s)
				dup = dup || seen[k]
				seen[k] = true
			}
		}
		if distinctSuppliers(parts, s) == dup {
			t.Errorf("%d suppliers, %d parts: distinctSuppliers says %v, the parts have a repeated supplier: %v",
				s, parts, !dup, dup)
		}
	}
	if distinctSuppliers(20*10, 10) || !distinctSuppliers(20*100, 100) {
		t.Error("want SF 0.001 refused and SF 0.01 allowed")
	}
}

func TestBadInput(t *testing.T) {
	for _, n := range []int{0, -1, 23} {
		_, err := QueryFor(n, dialectDuckDB, 1, 1)
		if !errors.Is(err, ErrQuery) || !strings.Contains(err.Error(), "expected 1 to 22") {
			t.Errorf("QueryFor(%d): %v", n, err)
		}
	}
	if _, err := QueryFor(1, "oracle", 1, 1); err == nil {
		t.Error("QueryFor for oracle: no error")
	}
	if _, err := QueryFor(11, dialectDuckDB, 1, 0); !errors.Is(err, ErrScale) {
		t.Errorf("QueryFor at SF 0: %v, want ErrScale", err)
	}
	if _, err := EstimatedBytes(-1, dialectDuckDB); !errors.Is(err, ErrScale) {
		t.Errorf("EstimatedBytes at SF -1: %v, want ErrScale", err)
	}
	if _, err := EstimatedBytes(1, "oracle"); err == nil {
		t.Error("EstimatedBytes for oracle: no error")
	}
}

// TestQueryParamsSeeded checks that parameters depend on the seed only:
// every dialect gets the same, and another seed gives others.
func TestQueryParamsSeeded(t *testing.T) {
	diff := 0
	for n := 1; n <= Queries; n++ {
		a, _ := QueryFor(n, dialectPostgres, 1, 1)
		b, _ := QueryFor(n, dialectSQLite, 1, 1)
		c, _ := QueryFor(n, dialectPostgres, 2, 1)
		if strings.Join(a.Params, " ") != strings.Join(b.Params, " ") {
			t.Errorf("Q%d: postgres %v, sqlite %v", n, a.Params, b.Params)
		}
		if strings.Join(a.Params, " ") != strings.Join(c.Params, " ") {
			diff++
		}
	}
	if diff < 15 {
		t.Errorf("seeds 1 and 2 give different parameters for %d queries; want most", diff)
	}
}

// rowsOf generates a whole database in memory, per table.
func rowsOf(t *testing.T, seed int64, sf float64) (*gen, map[*table][][]val) {
	t.Helper()
	g, err := newGen(seed, sf)
	if err != nil {
		t.Fatal(err)
	}
	db := map[*table][][]val{}
	add := func(tb *table, f func([]val)) {
		row := make([]val, len(tb.cols))
		f(row)
		db[tb] = append(db[tb], row)
	}
	for k := range g.n.Region {
		add(tRegion, func(r []val) { g.region(k, r) })
	}
	for k := range g.n.Nation {
		add(tNation, func(r []val) { g.nation(k, r) })
	}
	for k := int64(1); k <= g.n.Supplier; k++ {
		add(tSupplier, func(r []val) { g.supplier(k, r) })
	}
	for k := int64(1); k <= g.n.Customer; k++ {
		add(tCustomer, func(r []val) { g.customer(k, r) })
	}
	for k := int64(1); k <= g.n.Part; k++ {
		var ps [4][]val
		for j := range ps {
			ps[j] = make([]val, len(tPartSupp.cols))
		}
		add(tPart, func(r []val) { g.part(k, r, ps) })
		db[tPartSupp] = append(db[tPartSupp], ps[:]...)
	}
	var lines [7][16]val
	for i := range g.n.Orders {
		var n int
		add(tOrders, func(r []val) { n = g.order(i, r, &lines) })
		for l := range n {
			db[tLineitem] = append(db[tLineitem], append([]val(nil), lines[l][:]...))
		}
	}
	return g, db
}

// TestGeneratorRules checks SF 0.01's rows against the specification's
// keys, value ranges, derived columns and distributions (clause 4.2.3).
func TestGeneratorRules(t *testing.T) {
	g, db := rowsOf(t, 3, 0.01)
	n := g.n
	for tb, want := range map[*table]int64{tRegion: 5, tNation: 25, tSupplier: n.Supplier,
		tPart: n.Part, tPartSupp: n.PartSupp, tCustomer: n.Customer, tOrders: n.Orders} {
		if got := int64(len(db[tb])); got != want {
			t.Errorf("%s: %d rows, want %d", tb.name, got, want)
		}
	}
	// 1 to 7 lines an order, 4 on average: within 5 standard deviations
	// (2 per order).
	nl := float64(len(db[tLineitem]))
	if sd := 2 * math.Sqrt(float64(n.Orders)); math.Abs(nl-float64(n.LineitemMean())) > 5*sd {
		t.Errorf("lineitem: %v rows, want %d ± %.0f", nl, n.LineitemMean(), 5*sd)
	}

	inRange := func(what string, v, lo, hi int64) {
		t.Helper()
		if v < lo || v > hi {
			t.Errorf("%s = %d, not in [%d, %d]", what, v, lo, hi)
		}
	}
	textLen := func(what, s string, lo, hi int) {
		t.Helper()
		if len(s) < lo || len(s) > hi {
			t.Errorf("%s %q: length %d, not in [%d, %d]", what, s, len(s), lo, hi)
		}
	}
	phoneRE := regexp.MustCompile(`^(\d\d)-\d{3}-\d{3}-\d{4}$`)
	checkPhone := func(what, p string, nk int64) {
		t.Helper()
		m := phoneRE.FindStringSubmatch(p)
		if m == nil || m[1] != string(appendIntText(nk+10)) {
			t.Errorf("%s phone %q for nation %d", what, p, nk)
		}
	}

	for i, r := range db[tNation] {
		if r[0].i != int64(i) || r[1].s != nations[i].name || r[2].i != nations[i].region {
			t.Errorf("nation %d: %v", i, r)
		}
		textLen("n_comment", r[3].s, 31, 114)
	}
	complaints, recommends := 0, 0
	for i, r := range db[tSupplier] {
		inRange("s_suppkey", r[0].i, int64(i+1), int64(i+1))
		if r[1].s != keyName("Supplier#", r[0].i) || len(r[1].s) != 18 {
			t.Errorf("s_name %q", r[1].s)
		}
		textLen("s_address", r[2].s, 10, 40)
		inRange("s_nationkey", r[3].i, 0, 24)
		checkPhone("supplier", r[4].s, r[3].i)
		inRange("s_acctbal", r[5].i, -99999, 999999)
		textLen("s_comment", r[6].s, 25, 100)
		if regexp.MustCompile(`Customer .*Complaints`).MatchString(r[6].s) {
			complaints++
		}
		if regexp.MustCompile(`Customer .*Recommends`).MatchString(r[6].s) {
			recommends++
		}
	}
	if complaints != int(g.special) || recommends != int(g.special) {
		t.Errorf("%d complaints and %d recommends, want %d each", complaints, recommends, g.special)
	}

	types := map[string]bool{}
	for _, s := range partTypes {
		types[s] = true
	}
	conts := map[string]bool{}
	for _, s := range containers {
		conts[s] = true
	}
	if len(types) != 150 || len(conts) != 40 {
		t.Errorf("%d types, %d containers; want 150, 40", len(types), len(conts))
	}
	colorSet := map[string]bool{}
	for _, c := range colors {
		colorSet[c] = true
	}
	for i, r := range db[tPart] {
		k := int64(i + 1)
		inRange("p_partkey", r[0].i, k, k)
		words := strings.Split(r[1].s, " ")
		seen := map[string]bool{}
		for _, w := range words {
			if !colorSet[w] || seen[w] {
				t.Errorf("p_name %q", r[1].s)
			}
			seen[w] = true
		}
		if len(words) != 5 {
			t.Errorf("p_name %q: %d words", r[1].s, len(words))
		}
		m := regexp.MustCompile(`^Manufacturer#([1-5])$`).FindStringSubmatch(r[2].s)
		if m == nil || !regexp.MustCompile(`^Brand#`+m[1]+`[1-5]$`).MatchString(r[3].s) {
			t.Errorf("p_mfgr %q, p_brand %q", r[2].s, r[3].s)
		}
		if !types[r[4].s] || !conts[r[6].s] {
			t.Errorf("p_type %q, p_container %q", r[4].s, r[6].s)
		}
		inRange("p_size", r[5].i, 1, 50)
		if want := 90000 + (k/10)%20001 + 100*(k%1000); r[7].i != want {
			t.Errorf("part %d: retail price %d, want %d", k, r[7].i, want)
		}
		textLen("p_comment", r[8].s, 5, 22)
	}
	partSupp := map[[2]int64]bool{}
	for i, r := range db[tPartSupp] {
		if r[0].i != int64(i/4+1) {
			t.Errorf("partsupp %d: part %d", i, r[0].i)
		}
		inRange("ps_suppkey", r[1].i, 1, n.Supplier)
		key := [2]int64{r[0].i, r[1].i}
		if partSupp[key] {
			t.Errorf("partsupp key %v twice", key)
		}
		partSupp[key] = true
		inRange("ps_availqty", r[2].i, 1, 9999)
		inRange("ps_supplycost", r[3].i, 100, 100000)
		textLen("ps_comment", r[4].s, 49, 198)
	}
	segs := map[string]bool{}
	for i, r := range db[tCustomer] {
		inRange("c_custkey", r[0].i, int64(i+1), int64(i+1))
		if r[1].s != keyName("Customer#", r[0].i) {
			t.Errorf("c_name %q", r[1].s)
		}
		inRange("c_nationkey", r[3].i, 0, 24)
		checkPhone("customer", r[4].s, r[3].i)
		inRange("c_acctbal", r[5].i, -99999, 999999)
		segs[r[6].s] = true
		textLen("c_comment", r[7].s, 29, 116)
	}
	if len(segs) != 5 {
		t.Errorf("%d market segments, want 5", len(segs))
	}

	// Orders: sparse keys, customers not a multiple of 3, status and
	// total from the lines.
	byOrder := map[int64][][]val{}
	for _, l := range db[tLineitem] {
		byOrder[l[0].i] = append(byOrder[l[0].i], l)
	}
	custs := map[int64]bool{}
	var qty, disc, tax, nq float64
	for i, o := range db[tOrders] {
		if o[0].i != int64(i/8*32+i%8+1) {
			t.Errorf("order %d: key %d", i, o[0].i)
		}
		if o[1].i%3 == 0 {
			t.Errorf("order %d: customer %d is a multiple of 3", o[0].i, o[1].i)
		}
		inRange("o_custkey", o[1].i, 1, n.Customer)
		custs[o[1].i] = true
		inRange("o_orderdate", o[4].i, 0, lastOrderDay)
		if !regexp.MustCompile(`^Clerk#0000000(0[1-9]|10)$`).MatchString(o[6].s) {
			t.Errorf("o_clerk %q (SF 0.01: 10 clerks)", o[6].s)
		}
		textLen("o_comment", o[8].s, 19, 78)
		lines := byOrder[o[0].i]
		if len(lines) < 1 || len(lines) > 7 {
			t.Fatalf("order %d: %d lines", o[0].i, len(lines))
		}
		var total int64
		status := map[string]int{}
		for j, l := range lines {
			inRange("l_linenumber", l[3].i, int64(j+1), int64(j+1))
			if !partSupp[[2]int64{l[1].i, l[2].i}] {
				t.Errorf("lineitem (%d, %d): part %d, supplier %d not in partsupp", o[0].i, j+1, l[1].i, l[2].i)
			}
			inRange("l_quantity", l[4].i, 100, 5000)
			if l[5].i != l[4].i/100*retailCents(l[1].i) {
				t.Errorf("l_extendedprice %d for quantity %d of part %d", l[5].i, l[4].i, l[1].i)
			}
			inRange("l_discount", l[6].i, 0, 10)
			inRange("l_tax", l[7].i, 0, 8)
			ship, commit, receipt := l[10].i, l[11].i, l[12].i
			inRange("l_shipdate − o_orderdate", ship-o[4].i, 1, 121)
			inRange("l_commitdate − o_orderdate", commit-o[4].i, 30, 90)
			inRange("l_receiptdate − l_shipdate", receipt-ship, 1, 30)
			switch {
			case receipt <= currentDay && l[8].s != "R" && l[8].s != "A",
				receipt > currentDay && l[8].s != "N":
				t.Errorf("l_returnflag %q with receipt day %d", l[8].s, receipt)
			}
			if (ship > currentDay) != (l[9].s == "O") {
				t.Errorf("l_linestatus %q with ship day %d", l[9].s, ship)
			}
			status[l[9].s]++
			textLen("l_comment", l[15].s, 10, 43)
			total += (l[5].i*(100-l[6].i)*(100+l[7].i) + 5000) / 10000
			qty += float64(l[4].i) / 100
			disc += float64(l[6].i) / 100
			tax += float64(l[7].i) / 100
			nq++
		}
		if total != o[3].i {
			t.Errorf("order %d: o_totalprice %d, want %d", o[0].i, o[3].i, total)
		}
		want := "P"
		if status["F"] == len(lines) {
			want = "F"
		} else if status["O"] == len(lines) {
			want = "O"
		}
		if o[2].s != want {
			t.Errorf("order %d: o_orderstatus %q, want %q", o[0].i, o[2].s, want)
		}
	}
	// Uniform distributions: means within 2% of the range's middle.
	for _, m := range []struct {
		what      string
		got, want float64
	}{{"l_quantity", qty / nq, 25.5}, {"l_discount", disc / nq, 0.05}, {"l_tax", tax / nq, 0.04}} {
		if math.Abs(m.got-m.want) > 0.02*m.want {
			t.Errorf("mean %s %.4f, want %.4f ± 2%%", m.what, m.got, m.want)
		}
	}
	// Two thirds of the customers can order; with ~10 orders each almost
	// all of them do.
	if f := float64(len(custs)) / float64(n.Customer); f < 0.6 || f > 2.0/3 {
		t.Errorf("%.3f of customers have orders, want just under 2/3", f)
	}
	// Q13's words must occur in order comments.
	special := 0
	for _, o := range db[tOrders] {
		if regexp.MustCompile(`special.*requests`).MatchString(o[8].s) {
			special++
		}
	}
	if special == 0 || special > len(db[tOrders])/10 {
		t.Errorf("%d order comments match special%%requests of %d", special, len(db[tOrders]))
	}
}

func appendIntText(v int64) []byte { return []byte(string(rune('0'+v/10)) + string(rune('0'+v%10))) }

// TestGeneratorDeterministic checks that a row depends on the seed and its
// key only.
func TestGeneratorDeterministic(t *testing.T) {
	a, _ := newGen(5, 0.01)
	b, _ := newGen(5, 0.01)
	c, _ := newGen(6, 0.01)
	if a.pool != b.pool || a.pool == c.pool {
		t.Error("text pool: same seed differs or other seed equal")
	}
	if strings.ContainsAny(a.pool, "\t\n\r\\") {
		t.Error("text pool holds a character COPY must escape")
	}
	var la, lb, lc [7][16]val
	ra, rb, rc := make([]val, 9), make([]val, 9), make([]val, 9)
	na, nb := a.order(1234, ra, &la), b.order(1234, rb, &lb)
	c.order(1234, rc, &lc)
	if na != nb || la != lb || !equalVals(ra, rb) {
		t.Error("order 1234 differs between two generators of one seed")
	}
	if equalVals(ra, rc) {
		t.Error("order 1234 is the same for seeds 5 and 6")
	}
}

func equalVals(a, b []val) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

func TestCents(t *testing.T) {
	for c, want := range map[int64]string{0: "0.00", 6: "0.06", 106: "1.06", -99999: "-999.99", 100000: "1000.00"} {
		if got := cents(c); got != want {
			t.Errorf("cents(%d) = %q, want %q", c, got, want)
		}
	}
}
