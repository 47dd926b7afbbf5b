package tpch

import (
	"errors"
	"fmt"
	"github.com/numalab/numalab/internal/engine"
	"strconv"
	"strings"
	"time"
)

// Query is one of the 22 queries, written for one dialect with its
// substitution parameters in place.
type Query struct {
	N   int    // 1 to 22
	SQL string // for the dialect asked
	// Params are the substitution parameters, "NAME=value", in the
	// specification's order, for the record.
	Params []string
	// Ordered says the query has an ORDER BY, so its rows come in a
	// defined order (all but 6, 14, 17 and 19, which return one row).
	Ordered bool
}

// ErrQuery is wrapped by the error for a query number outside 1–22.
var ErrQuery = errors.New("no such TPC-H query")

// Queries is how many queries there are.
const Queries = 22

// QueryFor returns query n (1 to 22) for the engine named name
// ("sqlite", "duckdb", "postgres" or "mariadb", in its SQL) with substitution parameters drawn as qgen
// does (clause 2.4.n.3) by an RNG of seed: the same n, seed and sf give
// the same parameters on every engine. sf sets Q11's FRACTION (0.0001/SF).
func QueryFor(n int, name string, seed int64, sf float64) (Query, error) {
	if n < 1 || n > Queries {
		return Query{}, fmt.Errorf("%w: %d (expected 1 to %d)", ErrQuery, n, Queries)
	}
	d := engine.SQLOf(name)
	if d == nil {
		return Query{}, fmt.Errorf("tpch query %d: no SQL for engine %q (expected %s)", n, name, engine.List(nil))
	}
	if _, err := CountsFor(sf); err != nil {
		return Query{}, fmt.Errorf("tpch query %d: %w", n, err)
	}
	q := &qb{d: d, r: newRNG(seed, streamParams, int64(n)), sf: sf}
	sql := queryText[n-1](q)
	return Query{N: n, SQL: sql, Params: q.params, Ordered: n != 6 && n != 14 && n != 17 && n != 19}, nil
}

// qb builds one query: it draws the parameters, records them, and writes
// the dialect's forms of dates and years.
type qb struct {
	d      engine.SQL
	r      rng
	sf     float64
	params []string
}

// param records a parameter and returns v.
func (q *qb) param(name, v string) string {
	q.params = append(q.params, name+"="+v)
	return v
}

// int draws an integer in [lo, hi] as a parameter.
func (q *qb) int(name string, lo, hi int64) string {
	return q.param(name, strconv.FormatInt(q.r.between(lo, hi), 10))
}

// word draws from list as a parameter.
func (q *qb) word(name string, list []string) string { return q.param(name, pick(&q.r, list)) }

// month draws the first day of a month, from from's month on, n months, as
// a parameter.
func (q *qb) month(name string, from time.Time, n int64) time.Time {
	t := from.AddDate(0, int(q.r.between(0, n-1)), 0)
	q.param(name, t.Format(time.DateOnly))
	return t
}

// jan1 draws January 1st of a year in [1993, 1997] as a parameter.
func (q *qb) jan1(name string) time.Time {
	t := time.Date(int(q.r.between(1993, 1997)), 1, 1, 0, 0, 0, 0, time.UTC)
	q.param(name, t.Format(time.DateOnly))
	return t
}

// brand draws Brand#MN, M and N in [1, 5].
func (q *qb) brand(name string) string {
	return q.param(name, fmt.Sprintf("Brand#%d%d", q.r.between(1, 5), q.r.between(1, 5)))
}

// distinct draws k distinct elements of list.
func (q *qb) distinct(list []string, k int) []string {
	var out []string
	for len(out) < k {
		w := pick(&q.r, list)
		dup := false
		for _, o := range out {
			dup = dup || o == w
		}
		if !dup {
			out = append(out, w)
		}
	}
	return out
}

func ymd(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func nationNames() []string {
	ns := make([]string, len(nations))
	for i, n := range nations {
		ns[i] = n.name
	}
	return ns
}

// quoteList is 'a', 'b', ...
func quoteList(ws []string) string { return "'" + strings.Join(ws, "', '") + "'" }

// cents writes hundredths c as a decimal: 6 is "0.06".
func cents(c int64) string {
	s := ""
	if c < 0 {
		s, c = "-", -c
	}
	return s + strconv.FormatInt(c/100, 10) + "." + string(rune('0'+c%100/10)) + string(rune('0'+c%10))
}
