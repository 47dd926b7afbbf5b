package tpch

import (
	"fmt"
	"math"
	"time"
)

// The specification's fixed values (TPC-H clause 4.2): dates, the base row
// counts per unit of scale factor, and the word lists the columns draw from.

// Dates of the population (clause 4.2.3): orders are dated from startDate to
// endDate−151 days; currentDate splits shipped lines from open ones.
var (
	startDate   = time.Date(1992, 1, 1, 0, 0, 0, 0, time.UTC)
	currentDate = time.Date(1995, 6, 17, 0, 0, 0, 0, time.UTC)
	endDate     = time.Date(1998, 12, 31, 0, 0, 0, 0, time.UTC)
)

// day numbers, counted from startDate.
var (
	currentDay = int64(currentDate.Sub(startDate).Hours() / 24)
	endDay     = int64(endDate.Sub(startDate).Hours() / 24)
	// lastOrderDay is the last order date, endDate − 151 days.
	lastOrderDay = endDay - 151
)

// Counts are a database's row counts at one scale factor. Lineitem's count
// is not fixed (1 to 7 lines per order, drawn): LineitemMean is its
// expected value, 4 per order.
type Counts struct {
	Supplier, Part, PartSupp, Customer, Orders int64
	Nation, Region                             int64
}

// LineitemMean is the expected number of lineitem rows.
func (c Counts) LineitemMean() int64 { return c.Orders * 4 }

// ErrScale is wrapped by every error about a bad scale factor.
var ErrScale = fmt.Errorf("bad scale factor")

// CountsFor returns the row counts of scale factor sf (clause 4.2.5):
// SF × 10,000 suppliers, 200,000 parts, 800,000 partsupps (4 per part),
// 150,000 customers and 1,500,000 orders; 25 nations and 5 regions at any
// SF. sf must be positive and large enough for four distinct suppliers of
// every part (0.01 is; 0.001, with 10 suppliers, is not).
func CountsFor(sf float64) (Counts, error) {
	if !(sf > 0) || math.IsInf(sf, 0) {
		return Counts{}, fmt.Errorf("%w: %g is not a positive scale factor (try 0.01 or 1)", ErrScale, sf)
	}
	c := Counts{
		Supplier: int64(math.Round(sf * 10_000)),
		Part:     int64(math.Round(sf * 200_000)),
		Customer: int64(math.Round(sf * 150_000)),
		Orders:   int64(math.Round(sf * 1_500_000)),
		Nation:   25,
		Region:   5,
	}
	c.PartSupp = 4 * c.Part
	if !distinctSuppliers(c.Part, c.Supplier) {
		return Counts{}, fmt.Errorf("%w: %g gives %d suppliers, too few for four distinct suppliers of every part "+
			"(clause 4.2.3's PS_SUPPKEY repeats one, and PARTSUPP's key would too): try 0.01 or more", ErrScale, sf, c.Supplier)
	}
	if c.Orders*4*4 > math.MaxInt64/2 {
		return Counts{}, fmt.Errorf("%w: %g is too large", ErrScale, sf)
	}
	return c, nil
}

// orderKey is the key of the i-th order (0-based): the keys are sparse, the
// first 8 of every 32 (clause 4.2.3, O_ORDERKEY).
func orderKey(i int64) int64 { return i/8*32 + i%8 + 1 }

// distinctSuppliers reports whether suppKey gives each of parts parts four
// distinct suppliers among s: suppKey(p, j, s) steps by k = s/4 + (p-1)/s
// for each j, so two of them meet when s divides k, 2k or 3k.
func distinctSuppliers(parts, s int64) bool {
	if s < 4 {
		return false
	}
	for k := s / 4; k <= s/4+(parts-1)/s; k++ {
		for d := int64(1); d <= 3; d++ {
			if d*k%s == 0 {
				return false
			}
		}
	}
	return true
}

// suppKey is the supplier of part p's j-th supplier (j in 0..3), among s
// suppliers (clause 4.2.3, PS_SUPPKEY and L_SUPPKEY).
func suppKey(p, j, s int64) int64 { return (p+j*(s/4+(p-1)/s))%s + 1 }

// retailCents is part p's retail price in cents (clause 4.2.3,
// P_RETAILPRICE).
func retailCents(p int64) int64 { return 90000 + (p/10)%20001 + 100*(p%1000) }

// nations are the 25 nations with their region keys (clause 4.2.3), in key
// order.
var nations = []struct {
	name   string
	region int64
}{
	{"ALGERIA", 0}, {"ARGENTINA", 1}, {"BRAZIL", 1}, {"CANADA", 1}, {"EGYPT", 4},
	{"ETHIOPIA", 0}, {"FRANCE", 3}, {"GERMANY", 3}, {"INDIA", 2}, {"INDONESIA", 2},
	{"IRAN", 4}, {"IRAQ", 4}, {"JAPAN", 2}, {"JORDAN", 4}, {"KENYA", 0},
	{"MOROCCO", 0}, {"MOZAMBIQUE", 0}, {"PERU", 1}, {"CHINA", 2}, {"ROMANIA", 3},
	{"SAUDI ARABIA", 4}, {"VIETNAM", 2}, {"RUSSIA", 3}, {"UNITED KINGDOM", 3}, {"UNITED STATES", 1},
}

// regions are the 5 regions in key order.
var regions = []string{"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"}

// Column value lists (clause 4.2.2.13).
var (
	segments     = []string{"AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"}
	priorities   = []string{"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"}
	instructions = []string{"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"}
	shipModes    = []string{"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"}

	typeSyllable1 = []string{"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"}
	typeSyllable2 = []string{"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"}
	typeSyllable3 = []string{"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"}

	containerSyllable1 = []string{"SM", "LG", "MED", "JUMBO", "WRAP"}
	containerSyllable2 = []string{"CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"}

	// colors are P_NAME's 92 words.
	colors = []string{
		"almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched", "blue",
		"blush", "brown", "burlywood", "burnished", "chartreuse", "chiffon", "chocolate", "coral",
		"cornflower", "cornsilk", "cream", "cyan", "dark", "deep", "dim", "dodger", "drab", "firebrick",
		"floral", "forest", "frosted", "gainsboro", "ghost", "goldenrod", "green", "grey", "honeydew",
		"hot", "indian", "ivory", "khaki", "lace", "lavender", "lawn", "lemon", "light", "lime", "linen",
		"magenta", "maroon", "medium", "metallic", "midnight", "mint", "misty", "moccasin", "navajo",
		"navy", "olive", "orange", "orchid", "pale", "papaya", "peach", "peru", "pink", "plum", "powder",
		"puff", "purple", "red", "rose", "rosy", "royal", "saddle", "salmon", "sandy", "seashell",
		"sienna", "sky", "slate", "smoke", "snow", "spring", "steel", "tan", "thistle", "tomato",
		"turquoise", "violet", "wheat", "white", "yellow",
	}
)

// partType is the i-th of the 150 part types.
func partType(i int) string {
	return typeSyllable1[i/25] + " " + typeSyllable2[i/5%5] + " " + typeSyllable3[i%5]
}

// container is the i-th of the 40 containers.
func container(i int) string { return containerSyllable1[i/8] + " " + containerSyllable2[i%8] }

// dateText is every day of the population as text, "1992-01-01" on.
var dateText = func() []string {
	ds := make([]string, endDay+1)
	for i := range ds {
		ds[i] = startDate.AddDate(0, 0, i).Format(time.DateOnly)
	}
	return ds
}()
