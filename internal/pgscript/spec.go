package pgscript

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseSpec reads a --script flag's FILE[@WEIGHT]: the weight a
// non-negative integer, 1 when not given (pgbench's -f FILE@WEIGHT). The
// last @ separates the weight.
func ParseSpec(s string) (file string, weight int, err error) {
	file, w, ok := cut(s)
	if file == "" {
		return "", 0, fmt.Errorf("reading --script %q: expected FILE[@WEIGHT], a file name first (as in bank.sql@5)", s)
	}
	if !ok {
		return file, 1, nil
	}
	n, err := strconv.ParseInt(w, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt32 {
		return "", 0, fmt.Errorf("reading --script %q: expected a weight from 0 to %d after @, found %q", s, math.MaxInt32, w)
	}
	return file, int(n), nil
}

func cut(s string) (before, after string, found bool) {
	i := strings.LastIndexByte(s, '@')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}
