package report

import "github.com/numalab/numalab/internal/chart"

// The chart toolkit (internal/chart) under the names the workloads'
// sections draw with (a Section's helpers, see Section.HTML).
type (
	Chart  = chart.Chart
	Series = chart.Series
	Point  = chart.Point
	Scale  = chart.Scale
	VLine  = chart.VLine
	HLine  = chart.HLine
)

// FmtF formats v with prec digits after the point (chart.FmtF).
func FmtF(v float64, prec int) string { return chart.FmtF(v, prec) }

// FmtN formats a large count rounded, with thousands separators (chart.FmtN).
func FmtN(v float64) string { return chart.FmtN(v) }

// FmtSig formats with about three significant digits (chart.FmtSig).
func FmtSig(v float64) string { return chart.FmtSig(v) }

// FmtCompact labels ticks briefly: 1.25M, 250k, 12.5 (chart.FmtCompact).
func FmtCompact(v float64) string { return chart.FmtCompact(v) }

// Pct formats a fraction as a signed percentage: +12.3% (chart.Pct).
func Pct(f float64) string { return chart.Pct(f) }

// PctAbs formats a fraction as a percentage without sign: 12.3% (chart.PctAbs).
func PctAbs(f float64) string { return chart.PctAbs(f) }

// Bars draws one bar per label with its value on top (chart.Bars).
func Bars(id, title, ylabel string, labels []string, values []float64, notes []string) string {
	return chart.Bars(id, title, ylabel, labels, values, notes)
}
