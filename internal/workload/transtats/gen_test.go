package transtats

import (
	"strconv"
	"strings"
	"testing"
)

func TestRowAt(t *testing.T) {
	for _, c := range []struct {
		i, rate int64
		want    Row
	}{
		{1, 5000, Row{"X580 G01", 20, 20, "VC1", 1, "WRITE-ONLY", "FAILURE", 0, 1, 1, filler}},
		{3, 5000, Row{"X580 G03", 40, 40, "VC3", 3, "READ-ONLY", "SUCCESS", 0, 3, 3, filler}},
		{4999, 5000, Row{"X580 G39", 50, 80, "VC99", 4999, "WRITE-ONLY", "FAILURE", 0, 49, 99, filler}},
		{5000, 5000, Row{"X580 G00", 10, 10, "VC0", 5000, "READ-WRITE", "ROLLBACK", 1, 1, 0, filler}},
		{123457, 5000, Row{"X580 G17", 30, 20, "VC57", 123457, "WRITE-ONLY", "FAILURE", 24, 31, 57, filler}},
		{7, 2, Row{"X580 G07", 30, 80, "VC7", 7, "WRITE-ONLY", "FAILURE", 3, 10, 7, filler}},
	} {
		if got := RowAt(c.i, c.rate); got != c.want {
			t.Errorf("RowAt(%d, %d) =\n %+v, want\n %+v", c.i, c.rate, got, c.want)
		}
	}
	if len(filler) != 100 || !strings.HasPrefix(filler, "abc ") || strings.TrimSpace(filler) != "abc" {
		t.Errorf("filler = %q (%d chars), want 'abc' padded with spaces to 100", filler, len(filler))
	}
}

func TestDims(t *testing.T) {
	if DimensionRows != 1_440_000 {
		t.Errorf("DimensionRows = %d, want 40 × 100 × 3 × 3 × 5 × 8 = 1,440,000", DimensionRows)
	}
	// Every value a row takes is in its dimension, and every dimension
	// value is taken by some row among the first 600 (lcm of the moduli).
	seen := map[string]map[string]bool{}
	for _, d := range Dims() {
		seen[d.Column] = map[string]bool{}
	}
	for i := int64(1); i <= 600; i++ {
		r := RowAt(i, DefaultRate)
		seen["server_config"][r.ServerConfig] = true
		seen["thread_name"][r.ThreadName] = true
		seen["tran_type"][r.TranType] = true
		seen["tran_status"][r.TranStatus] = true
		seen["users"][itoa(r.Users)] = true
		seen["cpus"][itoa(r.CPUs)] = true
	}
	for _, d := range Dims() {
		vals := d.Text
		for _, v := range d.Ints {
			vals = append(vals, itoa(v))
		}
		if len(vals) != len(seen[d.Column]) {
			t.Errorf("%s has %d values, rows take %d", d.Table, len(vals), len(seen[d.Column]))
		}
		for _, v := range vals {
			if !seen[d.Column][v] {
				t.Errorf("%s value %q is taken by no row", d.Table, v)
			}
		}
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func TestTimeText(t *testing.T) {
	tt := newTimeText()
	for _, sec := range []int64{0, 1, 64, 0, 86399, 86400, 1} {
		want := TimeAt(sec).Format(TimeFormat)
		if got := tt.at(sec); got != want {
			t.Errorf("at(%d) = %q, want %q", sec, got, want)
		}
	}
	if got := TimeAt(86401).Format(TimeFormat); got != "2020-01-02 00:00:01" {
		t.Errorf("TimeAt(86401) = %q", got)
	}
}

func TestCheckSize(t *testing.T) {
	for _, c := range []struct {
		rows, rate int64
		ok         bool
	}{
		{1, 1, true}, {MaxRows, DefaultRate, true}, {0, 5000, false}, {MaxRows + 1, 5000, false}, {100, 0, false},
	} {
		if err := CheckSize(c.rows, c.rate); (err == nil) != c.ok {
			t.Errorf("CheckSize(%d, %d) = %v, want ok %v", c.rows, c.rate, err, c.ok)
		}
	}
}

func TestParseQueries(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		err  string
	}{
		{"P1", "P1", ""}, {"p2", "P2", ""}, {"P1,P2", "P1 P2", ""}, {" P2 , P1", "P2 P1", ""},
		{"P3", "", `unknown query "P3" (expected P1, P2 or P1,P2)`},
		{"P1,P1", "", "query P1 listed twice"},
		{"", "", `unknown query ""`},
	} {
		got, err := ParseQueries(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseQueries(%q) error = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("ParseQueries(%q) = %v, %v, want %s", c.in, got, err, c.want)
		}
	}
}

func TestQueryText(t *testing.T) {
	q, err := QueryText(SQLite, P2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(q, "t.tran_begin >= '2020-01-01 00:00:03' AND t.tran_begin < '2020-01-01 00:00:04'") {
		t.Errorf("SQLite P2(3) has the wrong window:\n%s", q)
	}
	q, _ = QueryText(Postgres, P2, 59)
	if !strings.Contains(q,
		"t.tran_begin >= TIMESTAMP '2020-01-01 00:00:59' AND t.tran_begin < TIMESTAMP '2020-01-01 00:01:00'") {
		t.Errorf("PostgreSQL P2(59) has the wrong window:\n%s", q)
	}
	if _, err := QueryText(DuckDB, "P9", 0); err == nil {
		t.Error("QueryText accepted P9")
	}
}

func TestPlanShape(t *testing.T) {
	a := "Finalize Aggregate\n  ->  Gather\n        Workers Planned: 1\n        ->  Partial Aggregate"
	b := "Finalize Aggregate\n  ->  Gather\n        Workers Planned: 3\n        ->  Partial Aggregate"
	if PlanShape(a) != PlanShape(b) {
		t.Errorf("PlanShape differs for plans differing only in planned workers")
	}
	if PlanShape(a) == PlanShape("Aggregate\n  ->  Seq Scan on tran_stats") {
		t.Errorf("PlanShape equal for a parallel and a serial plan")
	}
}
