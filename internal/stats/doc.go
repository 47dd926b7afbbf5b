// Package stats is numalab's one home for summary statistics: the median
// of a few repeated figures, and a mergeable histogram for the many
// latencies of a measurement, from which every percentile is read.
//
// It measures nothing and keeps no clock: callers record values and ask
// for figures. It does not estimate confidence intervals or test
// hypotheses; a comparison of runs reports their spread (min and max)
// beside the median instead.
package stats
