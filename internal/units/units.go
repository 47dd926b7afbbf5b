// Package units holds numalab's one byte-size type: every size a flag
// reads, and every size a table, report or message prints, goes through
// Bytes, so they all share one grammar and one spelling.
//
// It does not do decimal (SI) sizes: a kilobyte is 1024 bytes here even
// when written "KB", as in sysfs, PostgreSQL and most database manuals;
// throughputs in MB/s (10^6 bytes) are printed by whoever measures them.
package units

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// ErrSyntax is wrapped by every error of Parse.
var ErrSyntax = errors.New("not a size")

// Bytes is a size in bytes.
//
// Written form (what Parse reads): a decimal number, optionally with a
// fraction, then optionally spaces and a unit. Units are binary and their
// case does not matter: B; K, KB, KiB (2^10); M, MB, MiB (2^20); G, GB,
// GiB (2^30); T, TB, TiB (2^40); P, PB, PiB (2^50). No unit means bytes.
// The size must come to a whole number of bytes ("1.5K" is 1536, "0.3K" is
// refused) and fit in an int64; signs and exponents are refused. Examples:
// 4096, 64k, 1.5MiB, 4 GiB, 30720K.
//
// Printed form (what String writes): the largest unit that leaves at
// least 1, at most two decimals with trailing zeros dropped, and no space:
// 512B, 4KiB, 1.25MiB, 30.98GiB. Parse reads it back (exactly when it has
// no more than two decimals).
//
// A *Bytes is a flag.Value, so a flag holding a size is checked as the
// command line is parsed.
type Bytes int64

var names = [...]string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}

// String prints b in the printed form above; negative sizes get a minus.
func (b Bytes) String() string {
	v, u := math.Abs(float64(b)), 0
	for v >= 1024 && u < len(names)-1 {
		v /= 1024
		u++
	}
	// Rounding to two decimals may reach the next unit: 1023.999KiB.
	if math.Round(v*100) >= 1024*100 && u < len(names)-1 {
		v /= 1024
		u++
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if b < 0 {
		s = "-" + s
	}
	return s + names[u]
}

// Parse reads a size in the written form described at Bytes.
func Parse(s string) (Bytes, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.TrimSpace(t[i:])
	}
	r, ok := new(big.Rat).SetString(num)
	if num == "" || !ok {
		return 0, fmt.Errorf("parsing size %q: %w (want a number and a unit such as 512MiB, 64k or 4096)", s, ErrSyntax)
	}
	shift, ok := shifts[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf(
			"parsing size %q: unknown unit %q: %w (want B, K, M, G, T or P, optionally followed by B or iB)", s, unit, ErrSyntax)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), shift)))
	if !r.IsInt() {
		return 0, fmt.Errorf("parsing size %q: %w: not a whole number of bytes", s, ErrSyntax)
	}
	if !r.Num().IsInt64() {
		return 0, fmt.Errorf("parsing size %q: %w: too large", s, ErrSyntax)
	}
	return Bytes(r.Num().Int64()), nil
}

// shifts maps a lower-case unit to its power of two.
var shifts = map[string]uint{
	"": 0, "b": 0,
	"k": 10, "kb": 10, "kib": 10,
	"m": 20, "mb": 20, "mib": 20,
	"g": 30, "gb": 30, "gib": 30,
	"t": 40, "tb": 40, "tib": 40,
	"p": 50, "pb": 50, "pib": 50,
}

// Set parses s into b (flag.Value).
func (b *Bytes) Set(s string) error {
	v, err := Parse(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// List is a comma-separated list of sizes, each in Bytes's written form:
// "64KiB,256KiB,1MiB". A *List is a flag.Value; Set replaces the list.
type List []Bytes

// String prints the sizes comma-separated, each as Bytes.String does.
func (l List) String() string {
	s := make([]string, len(l))
	for i, b := range l {
		s[i] = b.String()
	}
	return strings.Join(s, ",")
}

// Set parses a comma-separated list into l (flag.Value).
func (l *List) Set(s string) error {
	var out List
	for _, f := range strings.Split(s, ",") {
		v, err := Parse(f)
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	*l = out
	return nil
}
