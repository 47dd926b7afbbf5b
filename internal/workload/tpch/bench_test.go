package tpch

import (
	"context"
	"testing"
)

// The load benchmarks report rows/s: generating and appending every table
// at SF 0.1 (about 866,000 rows) with a worker per CPU, without the
// primary keys and statistics that follow. Each iteration loads a new
// database (a new file, or a freshly emptied schema).

func BenchmarkLoadDuckDB(b *testing.B)   { benchLoad(b, dialectDuckDB) }
func BenchmarkLoadPostgres(b *testing.B) { benchLoad(b, dialectPostgres) }

func benchLoad(b *testing.B, name string) {
	ctx := context.Background()
	var rows int64
	var secs float64
	for b.Loop() {
		b.StopTimer()
		eng := openNew(b, name, "tpch_bench")
		if name == dialectPostgres {
			for _, t := range tables {
				if _, err := eng.DB().Exec("DROP TABLE IF EXISTS " + t.name); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StartTimer()
		st, err := Load(ctx, eng, Config{SF: 0.1, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		rows += st.Total
		secs += st.Insert.Seconds()
	}
	b.ReportMetric(float64(rows)/secs, "rows/s")
}

// BenchmarkGenerate reports the generator's own rate (rows/s, one
// goroutine, SF 0.1's orders and lineitems), with no engine.
func BenchmarkGenerate(b *testing.B) {
	g, err := newGen(1, 0.1)
	if err != nil {
		b.Fatal(err)
	}
	row := make([]val, len(tOrders.cols))
	var lines [7][16]val
	var rows int64
	for b.Loop() {
		for i := range g.n.Orders {
			rows += 1 + int64(g.order(i, row, &lines))
		}
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
