package tpch

import "time"

// DuckDB loads through the engine's Appender (engine.Bulk), one per table
// and worker, each on its own connection: appends from several connections
// to one table do not conflict.

// duckValue converts a value for DuckDB's Appender. A decimal goes in as
// its unscaled int64 (hundredths): the Appender stores an integer into a
// DECIMAL(15,2) column's 64-bit storage as is, with no rescaling and no
// big.Int per value. The cross-engine test checks the sums this gives.
func duckValue(k kind, v val) any {
	switch k {
	case kInt, kBig, kMoney:
		return v.i
	case kDate:
		return dateTime[v.i]
	}
	return v.s
}

// dateTime is every day of the population as a time.Time.
var dateTime = func() []time.Time {
	ts := make([]time.Time, endDay+1)
	for i := range ts {
		ts[i] = startDate.AddDate(0, 0, i)
	}
	return ts
}()
