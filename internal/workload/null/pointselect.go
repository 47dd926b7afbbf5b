package null

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/numalab/numalab/internal/engine"
)

// Calls: what one round trip asks.
const (
	CallSelect1     = "select1"      // SELECT 1: no table at all
	CallPointSelect = "point-select" // MariaDB, prepared: sysbench's oltp_point_select on numalab's sbtest1
)

// pointSelect is sysbench's oltp_point_select statement.
const pointSelect = "SELECT c FROM sbtest1 WHERE id=?"

// pointSelectRows is the rows of numalab's sbtest1: sysbench's default
// --table-size.
const pointSelectRows = 10000

// pointSelectTable is sysbench's table (oltp_common.lua's create_table
// for MySQL, InnoDB), made by numalab in its own database.
const pointSelectTable = `CREATE TABLE sbtest1 (
	id INTEGER NOT NULL AUTO_INCREMENT,
	k INTEGER NOT NULL DEFAULT 0,
	c CHAR(120) NOT NULL DEFAULT '',
	pad CHAR(60) NOT NULL DEFAULT '',
	PRIMARY KEY (id),
	KEY k_1 (k)
) ENGINE=InnoDB`

// makeSbtest makes sure numalab's database on eng holds sbtest1 with ids
// 1 to pointSelectRows, creating and filling it when it does not: c and
// pad are groups of 11 random digits joined by dashes, as sysbench
// writes them, and k random up to the rows; then ANALYZE TABLE.
func makeSbtest(ctx context.Context, eng engine.Engine) error {
	db := eng.DB()
	var n, hi int64
	if err := db.QueryRowContext(ctx, "SELECT count(*), coalesce(max(id), 0) FROM sbtest1").Scan(&n, &hi); err == nil &&
		n == pointSelectRows && hi == pointSelectRows {
		return nil
	}
	fail := func(err error) error { return fmt.Errorf("making the point select's table sbtest1: %w", err) }
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS sbtest1"); err != nil {
		return fail(err)
	}
	if _, err := db.ExecContext(ctx, pointSelectTable); err != nil {
		return fail(err)
	}
	b, err := eng.Bulk(ctx, "sbtest1", []string{"id", "k", "c", "pad"})
	if err != nil {
		return fail(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	digits := func(groups int) string {
		var s strings.Builder
		for g := range groups {
			if g > 0 {
				s.WriteByte('-')
			}
			for range 11 {
				s.WriteByte(byte('0' + r.IntN(10)))
			}
		}
		return s.String()
	}
	for id := int64(1); id <= pointSelectRows; id++ {
		if err := b.Append(id, r.Int64N(pointSelectRows)+1, digits(10), digits(5)); err != nil {
			b.Close()
			return fail(err)
		}
	}
	if err := b.Close(); err != nil {
		return fail(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE TABLE sbtest1"); err != nil {
		return fail(err)
	}
	return nil
}
