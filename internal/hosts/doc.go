// Package hosts answers "which of these servers should I buy" from
// measurements of the servers themselves: each candidate host (an
// evaluation unit, a colleague's server, a cloud instance type rented for
// an hour) runs 'numalab eval' or 'numalab run oltp' into a store, its own
// or a shared one, and Compare takes each host's best measured cell of the
// same workload on the same engine, its repeats' spread, its price and its
// licences, and gives the cost per 1,000 tps with a band, the decision
// ("Buy X") or "cannot tell" with the repeats that would tell, and beside
// each host what its own calibrated model says of 2 and 4 sockets of its
// CPU.
//
// Select reads the runs through the Store interface its caller opens;
// the writers (text, CSV, HTML) render a Comparison and compute nothing.
// It refuses to compare runs that measured different things (another
// workload, engine, warehouses or scale, a paced run against a closed
// loop), saying what differs, and it never guesses a price: every host
// needs one (ParsePrices). It measures nothing and writes no store.
package hosts
