package tpch

// SQLite loads through the engine's bulk path (engine.Bulk: prepared
// multi-row INSERTs in large transactions) from one worker: SQLite has one
// writer at a time.

// sqliteValue converts a value for SQLite: decimals are doubles (c/100 is
// the double nearest the decimal, as parsing "12.34" gives), dates text.
func sqliteValue(k kind, v val) any {
	switch k {
	case kInt, kBig:
		return v.i
	case kMoney:
		return float64(v.i) / 100
	case kDate:
		return dateText[v.i]
	}
	return v.s
}
