package tpcc

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// PgbenchScripts are two pgbench custom scripts that make exactly the calls
// a tpcc-ro stream makes on PostgreSQL: the same functions, with inputs
// drawn from the same distributions (Clauses 2.6.1 and 2.8.1: warehouse and
// district uniform; Order-Status by last name 60% of the time with
// NURand(255, 0, 999), else by id with NURand(1023, 1, 3000), using the
// run's C constants; Stock-Level's threshold uniform in [10, 20]). Run them
// with equal weights, which is the streams' 50/50 mix:
//
//	pgbench -n -M prepared -c N -j N -T 30 -f order_status.sql@1 -f stock_level.sql@1
//
// pgbench's random() is its own generator, so the two make different calls,
// but from the same distributions over the same data. pgbench draws the
// customer id and the last-name number on every Order-Status and passes 0
// for the one not used, as the stream does: the function builds the name
// from its number in both cases.
func (w *Workload) PgbenchScripts(schema string) (orderStatus, stockLevel string) {
	if schema == "" {
		schema = w.eng.Schema()
	}
	q := pgx.Identifier{schema}.Sanitize()
	suffix := ""
	if w.opt.Augmented {
		suffix = "_aug"
	}
	var os, sl strings.Builder
	fmt.Fprintf(&os, `-- tpcc-ro Order-Status (numalab): the same call as a numalab stream makes.
\set w random(1, %d)
\set d random(1, %d)
\set byname random(1, 100)
\set n ((random(0, %d) | random(0, 999)) + %d) %% 1000
\set c ((random(0, %d) | random(1, %d)) + %d) %% %d + 1
\set c case when :byname <= 60 then 0 else :c end
\set n case when :byname <= 60 then :n else 0 end
SELECT * FROM %s.order_status%s(:w, :d, :c, :n);
`, w.meta.Warehouses, DistrictsPerWH, aLast, w.run.CLast, aCID, CustomersPerDist, w.run.CID,
		CustomersPerDist, q, suffix)
	fmt.Fprintf(&sl, `-- tpcc-ro Stock-Level (numalab): the same call as a numalab stream makes.
\set w random(1, %d)
\set d random(1, %d)
\set t random(10, 20)
SELECT %s.stock_level%s(:w, :d, :t);
`, w.meta.Warehouses, DistrictsPerWH, q, suffix)
	return os.String(), sl.String()
}
