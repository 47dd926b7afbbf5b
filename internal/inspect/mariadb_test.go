package inspect

import (
	"context"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/mariaserver/mytest"
)

// my is the managed MariaDB server the tests of this package share.
var my = mytest.New(mariaserver.Config{BufferPool: 32 << 20})

func TestMariaDB(t *testing.T) {
	s := my.Server(t)
	ctx := context.Background()
	e, err := engine.Open(ctx, "mariadb", engine.Options{DSN: s.DSN(), Schema: "inspect_test"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, q := range []string{
		"DROP TABLE IF EXISTS t", // left by an earlier -count round
		"CREATE TABLE t (id int PRIMARY KEY, a int, b varchar(20))",
		"INSERT INTO t SELECT seq, seq % 7, concat('row ', seq) FROM seq_1_to_3000",
		"CREATE INDEX t_ab ON t (a, b DESC)",
		"ANALYZE TABLE t",
	} {
		if _, err := e.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	in, err := MariaDB(ctx, s.DSN(), Options{Schema: "inspect_test", ExactRows: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(in.Database, s.Password()) || in.Version != s.Version() || in.PageSize != 16384 {
		t.Errorf("inspection %q, version %q, page size %d", in.Database, in.Version, in.PageSize)
	}
	found := false
	for _, tb := range in.Tables {
		if tb.Name != "t" {
			continue
		}
		found = true
		if tb.Rows != 3000 || !tb.RowsExact || tb.Data <= 0 || tb.Index == nil || *tb.Index <= 0 || tb.IndexCount != 1 ||
			len(tb.Indexes) != 2 {
			t.Fatalf("table t: %+v", tb)
		}
		pk, ix := tb.Indexes[0], tb.Indexes[1]
		if !pk.Primary || !pk.Clustered || len(pk.Columns) != 1 || pk.Columns[0].Name != "id" {
			t.Errorf("primary key %+v", pk)
		}
		if ix.Name != "t_ab" || ix.Unique || len(ix.Columns) != 2 || ix.Columns[0].Name != "a" ||
			ix.Columns[1].Name != "b" || !ix.Columns[1].Desc || ix.Bytes == nil || *ix.Bytes <= 0 {
			t.Errorf("index %+v", ix)
		}
	}
	if !found {
		t.Errorf("no table t in %+v", in.Tables)
	}
	if _, err := MariaDB(ctx, s.DSN(), Options{Schema: "no_such_db"}); err == nil ||
		!strings.Contains(err.Error(), "no database") {
		t.Errorf("a missing database: %v", err)
	}
}
