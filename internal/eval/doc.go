// Package eval composes 'numalab eval' on the plan its budget buys
// (evalplan): the typed configuration of each step after the memory
// probe (Configs), the plan made again when the probe overran, the steps
// run in order, each within its share of the budget (evalplan.Share),
// with the run each stored, and the HTML report and summary built from
// those runs (Run).
//
// eval runs no workload itself and parses no flags: each step is a
// function the command gives it (Commands: a numalab command run
// in-process on a typed configuration). It prints only to the writers it
// is given, and writes no file but the report, through outfile (it
// makes the directory, --dir, where the steps' databases and the report
// go).
package eval
