package chart

import (
	"math"
	"strconv"
	"strings"
)

// FmtF formats v with prec digits after the point.
func FmtF(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if s == "-0" || strings.HasPrefix(s, "-0.") && strings.Trim(s[3:], "0") == "" {
		s = s[1:]
	}
	return s
}

// FmtN formats a large count rounded, with thousands separators: 12,345.
func FmtN(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	if math.Abs(v) < 100 {
		return FmtF(v, 1)
	}
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Pct formats a fraction as a signed percentage: +12.3%.
func Pct(f float64) string {
	s := FmtF(100*f, 1) + "%"
	if f > 0 {
		s = "+" + s
	}
	return s
}

// PctAbs formats a fraction as a percentage without sign: 12.3%.
func PctAbs(f float64) string { return FmtF(100*f, 1) + "%" }
