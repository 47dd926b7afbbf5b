package pgscript

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// kind is a value's type. The zero kind is an unset variable.
type kind uint8

const (
	kUnset kind = iota
	kNull
	kBool
	kInt
	kDouble
	// kString is text a variable holds (from a definition or a query): an
	// expression reads it as pgbench reads a variable's text (textValue).
	kString
	// kOther is any other value a query returned (a time.Time): it can be
	// bound to SQL but not used in an expression.
	kOther
)

func (k kind) String() string {
	switch k {
	case kNull:
		return "null"
	case kBool:
		return "boolean"
	case kInt:
		return "int"
	case kDouble:
		return "double"
	case kString:
		return "string"
	case kOther:
		return "non-numeric value"
	}
	return "unset"
}

// value is a variable's or an expression's value. Strings and other values
// keep their boxed form in x, made once when set, so that binding them
// allocates nothing.
type value struct {
	k kind
	i int64 // kInt; kBool: 0 or 1
	f float64
	s string
	x any
}

func intValue(i int64) value      { return value{k: kInt, i: i} }
func doubleValue(f float64) value { return value{k: kDouble, f: f} }
func stringValue(s string) value  { return value{k: kString, s: s, x: s} }

func boolValue(b bool) value {
	if b {
		return value{k: kBool, i: 1}
	}
	return value{k: kBool}
}

// definedValue types a definition's text (--define NAME=VALUE) as pgbench
// does for SQL: an integer if it reads as one, a double if it reads as
// one, else text.
func definedValue(s string) value {
	t := strings.TrimSpace(s)
	if i, err := strconv.ParseInt(t, 10, 64); err == nil {
		return intValue(i)
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && !strings.ContainsAny(t, "xXpP_") {
		return doubleValue(f)
	}
	return stringValue(s)
}

// queryValue is a value an engine returned for \gset or \aset.
func queryValue(v any) value {
	switch v := v.(type) {
	case nil:
		return value{k: kNull}
	case int64:
		return intValue(v)
	case float64:
		return doubleValue(v)
	case string:
		return stringValue(v)
	case bool:
		return boolValue(v)
	}
	return value{k: kOther, x: v}
}

// arg is v as a bound parameter.
func (v value) arg() any {
	switch v.k {
	case kInt:
		return v.i
	case kDouble:
		return v.f
	case kBool:
		return v.i != 0
	case kString, kOther:
		return v.x
	}
	return nil
}

// numeric is v as an expression reads it: text is read as pgbench reads a
// variable's text (null, a boolean word or its prefix, an integer, a
// double), and anything else is an error.
func (v value) numeric() (value, error) {
	switch v.k {
	case kString:
		return textValue(v.s)
	case kOther:
		return value{}, fmt.Errorf("cannot use a %T in an expression", v.x)
	}
	return v, nil
}

func textValue(s string) (value, error) {
	n := len(s)
	switch {
	case n == 0:
		return value{}, fmt.Errorf("cannot read an empty string as a number")
	case strings.EqualFold(s, "null"):
		return value{k: kNull}, nil
	case strings.EqualFold(s, "on") || prefixFold("true", s) || prefixFold("yes", s):
		return boolValue(true), nil
	case strings.EqualFold(s, "off") || prefixFold("false", s) || prefixFold("no", s):
		return boolValue(false), nil
	}
	t := strings.TrimSpace(s)
	if isInteger(t) {
		i, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return value{}, fmt.Errorf("%q is out of range for an integer", s)
		}
		return intValue(i), nil
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && !strings.ContainsAny(t, "xXpP_") {
		return doubleValue(f), nil
	}
	return value{}, fmt.Errorf("malformed value %q: not a number, boolean or null", s)
}

// prefixFold says whether s is a non-empty prefix of word, ignoring case.
func prefixFold(word, s string) bool {
	return len(s) <= len(word) && strings.EqualFold(word[:len(s)], s)
}

func isInteger(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// toInt coerces as pgbench: a double is rounded to the nearest integer,
// ties to even.
func (v value) toInt() (int64, error) {
	switch v.k {
	case kInt:
		return v.i, nil
	case kDouble:
		r := math.RoundToEven(v.f)
		if math.IsNaN(r) || r < -0x1p63 || r >= 0x1p63 {
			return 0, fmt.Errorf("double to int overflow for %g", v.f)
		}
		return int64(r), nil
	}
	return 0, fmt.Errorf("cannot coerce %s to int", v.k)
}

func (v value) toDouble() (float64, error) {
	switch v.k {
	case kDouble:
		return v.f, nil
	case kInt:
		return float64(v.i), nil
	}
	return 0, fmt.Errorf("cannot coerce %s to double", v.k)
}

// toBool coerces as pgbench's AND, OR and NOT: only a boolean is one.
func (v value) toBool() (bool, error) {
	if v.k == kBool {
		return v.i != 0, nil
	}
	return false, fmt.Errorf("cannot coerce %s to boolean", v.k)
}

// truth is v as a condition of \if, \elif and CASE WHEN: null and zero are
// false.
func (v value) truth() (bool, error) {
	switch v.k {
	case kNull:
		return false, nil
	case kBool, kInt:
		return v.i != 0, nil
	case kDouble:
		return v.f != 0, nil
	}
	return false, fmt.Errorf("cannot use %s as a condition", v.k)
}

// String formats v as pgbench prints a variable (doubles with 15
// significant digits).
func (v value) String() string {
	switch v.k {
	case kNull:
		return "NULL"
	case kBool:
		return strconv.FormatBool(v.i != 0)
	case kInt:
		return strconv.FormatInt(v.i, 10)
	case kDouble:
		switch {
		case math.IsInf(v.f, 1):
			return "Infinity"
		case math.IsInf(v.f, -1):
			return "-Infinity"
		case math.IsNaN(v.f):
			return "NaN"
		}
		return strconv.FormatFloat(v.f, 'g', 15, 64)
	case kString:
		return v.s
	case kOther:
		return fmt.Sprint(v.x)
	}
	return "unset"
}
