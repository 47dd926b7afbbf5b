package planest

import (
	"slices"
	"testing"
)

func TestChanged(t *testing.T) {
	rm, ad := Changed(Plan{Shape: "Gather\n  Hash Join\n    Seq Scan\n    Seq Scan"},
		Plan{Shape: "Gather\n  Merge Join\n    Seq Scan\n    Index Scan"})
	if !slices.Equal(rm, []string{"Hash Join", "Seq Scan"}) || !slices.Equal(ad, []string{"Index Scan", "Merge Join"}) {
		t.Errorf("removed %q, added %q", rm, ad)
	}
}

// TestSpeedup: the estimate is the lowest DOP's cost over this DOP's,
// flagged beyond 2× either way, and only PostgreSQL's cost gives one.
func TestSpeedup(t *testing.T) {
	for _, c := range []struct {
		unit           string
		base, cost, ms float64
		est            float64
		departs        bool
	}{
		{CostPostgres, 1000, 500, 1.5, 2, false},
		{CostPostgres, 1000, 500, 0.9, 2, true},
		{CostPostgres, 1000, 1000, 4.3, 1, true},
		{CostPostgres, 1000, 0, 2, 0, false},
		{CostDuckDB, 1000, 500, 0.1, 0, false},
		{"", 0, 0, 2, 0, false},
	} {
		est, dep := Speedup(c.unit, c.base, c.cost, c.ms)
		if est != c.est || dep != c.departs {
			t.Errorf("%+v: estimated %v, departs %v", c, est, dep)
		}
	}
}

// TestMyCost reads the cost of MySQL's and MariaDB 11's JSON plans, and
// none from MariaDB 10's, which has none.
func TestMyCost(t *testing.T) {
	for _, c := range []struct {
		raw  string
		cost float64
		unit string
	}{
		{`{"query_block": {"select_id": 1, "cost_info": {"query_cost": "2042.25"}, "table": {"table_name": "t"}}}`,
			2042.25, CostMySQL},
		{`{"query_block": {"select_id": 1, "cost": 0.01248, "nested_loop": []}}`, 0.01248, CostMariaDB},
		{`{"query_block": {"select_id": 1, "table": {"table_name": "t", "access_type": "ALL"}}}`, 0, ""},
	} {
		cost, unit, err := myCost([]byte(c.raw))
		if err != nil || cost != c.cost || unit != c.unit {
			t.Errorf("myCost(%s) = %v, %q, %v; want %v, %q", c.raw, cost, unit, err, c.cost, c.unit)
		}
	}
	if _, _, err := myCost([]byte(`{"query_block": {"cost_info": {"query_cost": "many"}}}`)); err == nil {
		t.Errorf("myCost of a query_cost that is no number: no error")
	}
}
