package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The model's way of printing numbers, shared by calib's and decide's text.

// Num prints a number to 6 significant digits without exponent or
// trailing zeros: 3, 2.2, 0.05, 317.375.
func Num(v float64) string { return Sig(v, 6) }

// Sig prints v rounded to n significant digits, without exponent or
// trailing zeros.
func Sig(v float64, n int) string {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', n, 64), 64)
	if err != nil {
		return strconv.FormatFloat(v, 'g', n, 64)
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// G12 prints a number to 12 significant digits, enough for any use and
// free of floating-point noise.
func G12(v float64) string { return strconv.FormatFloat(v, 'g', 12, 64) }

// Percent prints a fraction as a percentage.
func Percent(x float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", 100*x), "0"), ".") + "%"
}

// Figure prints a figure (an assumption's value, a flip): whole numbers with thousands
// separators, others with four significant digits.
func Figure(v float64) string {
	if math.Abs(v) >= 1000 {
		return Thousands(v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// Thousands prints v rounded to a whole number with comma separators.
func Thousands(v float64) string {
	s := strconv.FormatFloat(math.Abs(math.Round(v)), 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if v < 0 {
		s = "-" + s
	}
	return s
}

// Fixed prints v with d decimals.
func Fixed(v float64, d int) string { return strconv.FormatFloat(v, 'f', d, 64) }

// AsGiven prints a refused value as short as it reads: 100, 0.5, 1e+300.
func AsGiven(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
