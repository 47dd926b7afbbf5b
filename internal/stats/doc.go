// Package stats is numalab's one home for summary statistics: the median
// of a few repeated figures, a mergeable histogram for the many latencies
// of a measurement, from which every percentile is read, and the test that
// says whether two sets of repeats differ (Compare, with each side's
// median and its confidence interval: golang.org/x/perf/benchmath, the
// statistics benchstat uses).
//
// It measures nothing and keeps no clock: callers record values and ask
// for figures. It never turns one value into a verdict: with a single
// repeat on either side Compare says it cannot tell.
package stats
