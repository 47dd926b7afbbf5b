package tpcc

import (
	"context"
	"os"
	"strings"
	"testing"
)

func TestPrewarm(t *testing.T) {
	path := loaded(t)
	w, err := openFile(t, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := w.Prewarm(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if st.FileBytes != fi.Size() {
		t.Errorf("read %d bytes of a %d-byte file", st.FileBytes, fi.Size())
	}
	// 9 tables, 2 secondary indexes, numalab_meta and its key's index,
	// sqlite_stat1.
	if st.Objects != 14 {
		t.Errorf("scanned %d tables and indexes, want 14", st.Objects)
	}
	// Every row once per table, again per secondary index.
	var rows int64
	db := openDB(t, path)
	if err := db.QueryRow(
		`SELECT (SELECT count(*) FROM item) + (SELECT count(*) FROM warehouse) + (SELECT count(*) FROM stock)
		+ (SELECT count(*) FROM district) + 2 * (SELECT count(*) FROM customer) + (SELECT count(*) FROM history)
		+ 2 * (SELECT count(*) FROM orders) + (SELECT count(*) FROM new_order) + (SELECT count(*) FROM order_line)`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if st.Entries < rows {
		t.Errorf("visited %d entries, want at least %d", st.Entries, rows)
	}
	// The scans must read the b-trees they name.
	for _, q := range []string{
		`SELECT count("s_data") FROM "stock" NOT INDEXED`,
		`SELECT count(*) FROM "customer" INDEXED BY "customer_name" WHERE "c_w_id" IS NOT NULL OR "c_w_id" IS NULL`,
	} {
		var detail string
		var a, b, c int
		if err := db.QueryRow("EXPLAIN QUERY PLAN "+q).Scan(&a, &b, &c, &detail); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(detail, "SCAN") {
			t.Errorf("%s: plan %q, want a full scan", q, detail)
		}
		t.Logf("%s -> %s", q, detail)
	}
}
