package tpch

// myIndexes are MariaDB's secondary indexes, made after the load: its
// joins are nested loops (no hash join by default), which look the inner
// table up by an index, and without one on the foreign keys Q2, Q17, Q20
// and Q21 scan a table per outer row. The specification allows indexes
// on primary and foreign keys (clause 1.4.2.3).
var myIndexes = []string{
	"CREATE INDEX n_regionkey ON nation (n_regionkey)",
	"CREATE INDEX s_nationkey ON supplier (s_nationkey)",
	"CREATE INDEX ps_suppkey ON partsupp (ps_suppkey)",
	"CREATE INDEX c_nationkey ON customer (c_nationkey)",
	"CREATE INDEX o_custkey ON orders (o_custkey)",
	"CREATE INDEX l_partkey ON lineitem (l_partkey, l_suppkey)",
	"CREATE INDEX l_suppkey ON lineitem (l_suppkey)",
}
