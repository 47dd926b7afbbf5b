// Package dram is DDR memory timing (`numalab model dram`): the clock
// period, CAS latency and random-row access of a transfer rate and its
// CL-tRCD-tRP timings, the row cycle tRC that bounds pointer chasing in
// one bank, and the bounds of any DDR generation's rates and timings
// (DDR-200 to DDR5-8800) that every input of them is checked against.
// It does no I/O beyond the writer it is given.
package dram
