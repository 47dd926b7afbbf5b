package planest

// DepartFactor is how far measured and estimated speedup may part before
// a point is flagged.
const DepartFactor = 2

// Prices reports whether a plan cost in unit prices parallelism:
// PostgreSQL's alone. DuckDB's stand-in (its estimated rows summed over the
// operators) does not change with the thread count, and SQLite gives no
// cost.
func Prices(unit string) bool { return unit == CostPostgres }

// Speedup is the optimizer's estimated speedup at a DOP whose plan costs
// cost, against base at the lowest DOP, and whether the measured speedup
// departs from it by more than DepartFactor either way; 0 and false when
// unit does not price parallelism or a cost is missing.
func Speedup(unit string, base, cost, measured float64) (est float64, departs bool) {
	if !Prices(unit) || base <= 0 || cost <= 0 {
		return 0, false
	}
	est = base / cost
	r := measured / est
	return est, measured > 0 && (r > DepartFactor || r < 1.0/DepartFactor)
}
