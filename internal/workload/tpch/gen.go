package tpch

import "strconv"

// kind is how a column's values are held while generated and how each
// engine stores them.
type kind uint8

const (
	kInt   kind = iota // integer (val.i)
	kBig               // integer that outgrows 32 bits at large SF (val.i)
	kMoney             // decimal(15,2), held in hundredths (val.i)
	kDate              // date, held as days from 1992-01-01 (val.i)
	kText              // text (val.s)
)

// val is one generated value: i for the numeric kinds, s for text.
type val struct {
	i int64
	s string
}

type column struct {
	name string
	kind kind
}

// table is one of the eight tables: its columns in order and its primary
// key.
type table struct {
	name string
	cols []column
	pkey string
}

func (t *table) colNames() []string {
	names := make([]string, len(t.cols))
	for i, c := range t.cols {
		names[i] = c.name
	}
	return names
}

// The schema (clause 1.4.1), in load order.
var (
	tRegion = &table{"region", []column{
		{"r_regionkey", kInt}, {"r_name", kText}, {"r_comment", kText}}, "r_regionkey"}
	tNation = &table{"nation", []column{
		{"n_nationkey", kInt}, {"n_name", kText}, {"n_regionkey", kInt}, {"n_comment", kText}}, "n_nationkey"}
	tSupplier = &table{"supplier", []column{
		{"s_suppkey", kInt}, {"s_name", kText}, {"s_address", kText}, {"s_nationkey", kInt},
		{"s_phone", kText}, {"s_acctbal", kMoney}, {"s_comment", kText}}, "s_suppkey"}
	tPart = &table{"part", []column{
		{"p_partkey", kInt}, {"p_name", kText}, {"p_mfgr", kText}, {"p_brand", kText},
		{"p_type", kText}, {"p_size", kInt}, {"p_container", kText}, {"p_retailprice", kMoney},
		{"p_comment", kText}}, "p_partkey"}
	tPartSupp = &table{"partsupp", []column{
		{"ps_partkey", kInt}, {"ps_suppkey", kInt}, {"ps_availqty", kInt},
		{"ps_supplycost", kMoney}, {"ps_comment", kText}}, "ps_partkey, ps_suppkey"}
	tCustomer = &table{"customer", []column{
		{"c_custkey", kInt}, {"c_name", kText}, {"c_address", kText}, {"c_nationkey", kInt},
		{"c_phone", kText}, {"c_acctbal", kMoney}, {"c_mktsegment", kText}, {"c_comment", kText}}, "c_custkey"}
	tOrders = &table{"orders", []column{
		{"o_orderkey", kBig}, {"o_custkey", kInt}, {"o_orderstatus", kText}, {"o_totalprice", kMoney},
		{"o_orderdate", kDate}, {"o_orderpriority", kText}, {"o_clerk", kText},
		{"o_shippriority", kInt}, {"o_comment", kText}}, "o_orderkey"}
	tLineitem = &table{"lineitem", []column{
		{"l_orderkey", kBig}, {"l_partkey", kInt}, {"l_suppkey", kInt}, {"l_linenumber", kInt},
		{"l_quantity", kMoney}, {"l_extendedprice", kMoney}, {"l_discount", kMoney}, {"l_tax", kMoney},
		{"l_returnflag", kText}, {"l_linestatus", kText}, {"l_shipdate", kDate},
		{"l_commitdate", kDate}, {"l_receiptdate", kDate}, {"l_shipinstruct", kText},
		{"l_shipmode", kText}, {"l_comment", kText}}, "l_orderkey, l_linenumber"}

	tables = []*table{tRegion, tNation, tSupplier, tPart, tPartSupp, tCustomer, tOrders, tLineitem}
)

// gen makes rows. Its methods are safe for concurrent use.
type gen struct {
	seed   int64
	sf     float64
	n      Counts
	clerks int64
	pool   string
	// complain and recommend pick the suppliers whose comments hold
	// "Customer ... Complaints" and "Customer ... Recommends": supplier s
	// is one when (s·mul + add) mod Supplier falls below special.
	mul, add, special int64
}

func newGen(seed int64, sf float64) (*gen, error) {
	n, err := CountsFor(sf)
	if err != nil {
		return nil, err
	}
	r := newRNG(seed, streamText, 0)
	g := &gen{seed: seed, sf: sf, n: n, clerks: max(1, int64(sf*1000+0.5)), pool: textPool(&r, textPoolBytes)}
	g.special = max(1, int64(sf*5+0.5))
	if 2*g.special > n.Supplier {
		g.special = n.Supplier / 2
	}
	g.mul = r.between(1, n.Supplier)
	for gcd(g.mul, n.Supplier) != 1 {
		g.mul++
	}
	g.add = r.between(0, n.Supplier-1)
	return g, nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func (g *gen) region(k int64, row []val) {
	r := newRNG(g.seed, streamRegion, k)
	row[0] = val{i: k}
	row[1] = val{s: regions[k]}
	row[2] = val{s: text(&r, g.pool, 31, 115)}
}

func (g *gen) nation(k int64, row []val) {
	r := newRNG(g.seed, streamNation, k)
	row[0] = val{i: k}
	row[1] = val{s: nations[k].name}
	row[2] = val{i: nations[k].region}
	row[3] = val{s: text(&r, g.pool, 31, 114)}
}

// party fills the columns suppliers and customers share: key, name
// (prefix and the key), address, nation, phone and account balance.
func party(r *rng, prefix string, k int64, row []val) {
	nk := r.between(0, 24)
	row[0] = val{i: k}
	row[1] = val{s: keyName(prefix, k)}
	row[2] = val{s: vstring(r, 10, 40)}
	row[3] = val{i: nk}
	row[4] = val{s: phone(r, nk)}
	row[5] = val{i: r.between(-99999, 999999)}
}

func (g *gen) supplier(k int64, row []val) {
	r := newRNG(g.seed, streamSupplier, k)
	party(&r, "Supplier#", k, row)
	switch p := (k*g.mul + g.add) % g.n.Supplier; {
	case p < g.special:
		row[6] = val{s: g.customerSays(&r, "Complaints")}
	case p < 2*g.special:
		row[6] = val{s: g.customerSays(&r, "Recommends")}
	default:
		row[6] = val{s: text(&r, g.pool, 25, 100)}
	}
}

// customerSays is a supplier comment with "Customer", some text, and what
// (clause 4.2.3, S_COMMENT) at a random position.
func (g *gen) customerSays(r *rng, what string) string {
	const customer = "Customer "
	c := text(r, g.pool, 25, 100-int64(len(customer)+len(what)))
	i := r.between(0, int64(len(c)))
	j := r.between(i, int64(len(c)))
	return c[:i] + customer + c[i:j] + what + c[j:]
}

// part fills row with part k and ps with its four partsupp rows.
func (g *gen) part(k int64, row []val, ps [4][]val) {
	r := newRNG(g.seed, streamPart, k)
	row[0] = val{i: k}
	row[1] = val{s: partName(&r)}
	m := r.between(1, 5)
	row[2] = val{s: "Manufacturer#" + strconv.FormatInt(m, 10)}
	row[3] = val{s: "Brand#" + strconv.FormatInt(m*10+r.between(1, 5), 10)}
	row[4] = val{s: partTypes[r.between(0, int64(len(partTypes)-1))]}
	row[5] = val{i: r.between(1, 50)}
	row[6] = val{s: containers[r.between(0, int64(len(containers)-1))]}
	row[7] = val{i: retailCents(k)}
	row[8] = val{s: text(&r, g.pool, 5, 22)}
	for j, p := range ps {
		p[0] = val{i: k}
		p[1] = val{i: suppKey(k, int64(j), g.n.Supplier)}
		p[2] = val{i: r.between(1, 9999)}
		p[3] = val{i: r.between(100, 100000)}
		p[4] = val{s: text(&r, g.pool, 49, 198)}
	}
}

func (g *gen) customer(k int64, row []val) {
	r := newRNG(g.seed, streamCustomer, k)
	party(&r, "Customer#", k, row)
	row[6] = val{s: pick(&r, segments)}
	row[7] = val{s: text(&r, g.pool, 29, 116)}
}

// order fills row with the i-th order (0-based) and lines with its
// lineitems; it returns how many (1 to 7).
func (g *gen) order(i int64, row []val, lines *[7][16]val) int {
	r := newRNG(g.seed, streamOrder, i)
	key := orderKey(i)
	// Customers whose key is a multiple of 3 place no orders: draw among
	// the others and map the c-th to its key.
	c := r.between(0, g.n.Customer-g.n.Customer/3-1)
	date := r.between(0, lastOrderDay)
	row[0] = val{i: key}
	row[1] = val{i: c + c/2 + 1}
	row[4] = val{i: date}
	row[5] = val{s: pick(&r, priorities)}
	row[6] = val{s: keyName("Clerk#", r.between(1, g.clerks))}
	row[7] = val{i: 0}
	row[8] = val{s: text(&r, g.pool, 19, 78)}
	n := int(r.between(1, 7))
	var total int64
	var shipped int
	for ln := range n {
		l := &lines[ln]
		pk := r.between(1, g.n.Part)
		q := r.between(1, 50)
		price := q * retailCents(pk)
		disc, tax := r.between(0, 10), r.between(0, 8)
		ship := date + r.between(1, 121)
		commit := date + r.between(30, 90)
		receipt := ship + r.between(1, 30)
		l[0] = val{i: key}
		l[1] = val{i: pk}
		l[2] = val{i: suppKey(pk, r.between(0, 3), g.n.Supplier)}
		l[3] = val{i: int64(ln + 1)}
		l[4] = val{i: q * 100}
		l[5] = val{i: price}
		l[6] = val{i: disc}
		l[7] = val{i: tax}
		switch {
		case receipt > currentDay:
			l[8] = val{s: "N"}
		case r.between(0, 1) == 0:
			l[8] = val{s: "R"}
		default:
			l[8] = val{s: "A"}
		}
		if ship > currentDay {
			l[9] = val{s: "O"}
		} else {
			l[9] = val{s: "F"}
			shipped++
		}
		l[10] = val{i: ship}
		l[11] = val{i: commit}
		l[12] = val{i: receipt}
		l[13] = val{s: pick(&r, instructions)}
		l[14] = val{s: pick(&r, shipModes)}
		l[15] = val{s: text(&r, g.pool, 10, 43)}
		// extendedprice × (1 − discount) × (1 + tax), rounded to the cent
		total += (price*(100-disc)*(100+tax) + 5000) / 10000
	}
	row[3] = val{i: total}
	switch shipped {
	case n:
		row[2] = val{s: "F"}
	case 0:
		row[2] = val{s: "O"}
	default:
		row[2] = val{s: "P"}
	}
	return n
}

// partTypes and containers are every P_TYPE and P_CONTAINER.
var partTypes, containers = func() ([]string, []string) {
	var ts, cs []string
	for i := range len(typeSyllable1) * len(typeSyllable2) * len(typeSyllable3) {
		ts = append(ts, partType(i))
	}
	for i := range len(containerSyllable1) * len(containerSyllable2) {
		cs = append(cs, container(i))
	}
	return ts, cs
}()

// partName is five distinct colors (clause 4.2.3, P_NAME).
func partName(r *rng) string {
	var idx [5]int64
	n := 0
	buf := make([]byte, 0, 64)
	for n < 5 {
		c := r.between(0, int64(len(colors)-1))
		dup := false
		for _, x := range idx[:n] {
			dup = dup || x == c
		}
		if dup {
			continue
		}
		idx[n] = c
		if n > 0 {
			buf = append(buf, ' ')
		}
		buf = append(buf, colors[c]...)
		n++
	}
	return string(buf)
}

// keyName is prefix and k zero-padded to 9 digits ("Supplier#000000001").
func keyName(prefix string, k int64) string {
	buf := make([]byte, 0, len(prefix)+12)
	buf = append(buf, prefix...)
	d := strconv.FormatInt(k, 10)
	for i := len(d); i < 9; i++ {
		buf = append(buf, '0')
	}
	return string(append(buf, d...))
}

// phone is a phone number of nation nk (clause 4.2.2.9): country code
// nk+10, then three random local parts.
func phone(r *rng, nk int64) string {
	buf := make([]byte, 0, 15)
	buf = strconv.AppendInt(buf, nk+10, 10)
	buf = append(buf, '-')
	buf = strconv.AppendInt(buf, r.between(100, 999), 10)
	buf = append(buf, '-')
	buf = strconv.AppendInt(buf, r.between(100, 999), 10)
	buf = append(buf, '-')
	buf = strconv.AppendInt(buf, r.between(1000, 9999), 10)
	return string(buf)
}

// vAlphabet is the 64 characters of a random v-string (clause 4.2.2.7).
const vAlphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,."

// vstring is a random string of length [lo, hi] over vAlphabet.
func vstring(r *rng, lo, hi int64) string {
	n := r.between(lo, hi)
	buf := make([]byte, n)
	var bitsLeft int
	var x uint64
	for i := range buf {
		if bitsLeft < 6 {
			x, bitsLeft = r.next(), 64
		}
		buf[i] = vAlphabet[x&63]
		x >>= 6
		bitsLeft -= 6
	}
	return string(buf)
}
