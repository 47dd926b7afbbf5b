package pgscript

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
)

var errDivZero = errors.New("division by zero")

func errRange(what string) error { return fmt.Errorf("bigint %s out of range", what) }

// eval computes n for client c.
func (c *Client) eval(n *node) (value, error) {
	switch n.op {
	case opConst:
		return n.val, nil
	case opVar:
		v := c.vars[c.global[n.v]]
		if v.k == kUnset {
			return value{}, fmt.Errorf("undefined variable %q", c.set.names[c.global[n.v]])
		}
		return v.numeric()
	case opAnd, opOr:
		return c.logic(n)
	case opCase:
		for i := 0; i+1 < len(n.args); i += 2 {
			w, err := c.eval(n.args[i])
			if err != nil {
				return value{}, err
			}
			t, err := w.truth()
			if err != nil {
				return value{}, err
			}
			if t {
				return c.eval(n.args[i+1])
			}
		}
		return c.eval(n.args[len(n.args)-1])
	case opFunc:
		base := len(c.stack)
		null := false
		for _, a := range n.args {
			v, err := c.eval(a)
			if err != nil {
				c.stack = c.stack[:base]
				return value{}, err
			}
			null = null || v.k == kNull
			c.stack = append(c.stack, v)
		}
		var v value
		var err error
		if null && n.fn.name != "debug" {
			v = value{k: kNull}
		} else {
			v, err = n.fn.eval(c, c.stack[base:])
		}
		c.stack = c.stack[:base]
		return v, err
	}
	a, err := c.eval(n.args[0])
	if err != nil {
		return value{}, err
	}
	if n.op == opNot {
		if a.k == kNull {
			return a, nil
		}
		b, err := a.toBool()
		return boolValue(!b), err
	}
	if n.op == opNeg {
		return arith(opSub, intValue(0), a)
	}
	b, err := c.eval(n.args[1])
	if err != nil {
		return value{}, err
	}
	if n.op == opIs { // pgbench's IS: same type and value
		return boolValue(a.k == b.k && a.i == b.i), nil
	}
	if a.k == kNull || b.k == kNull {
		return value{k: kNull}, nil
	}
	return arith(n.op, a, b)
}

// logic is AND and OR as pgbench: a null left side gives null, the right
// side is evaluated only when it decides.
func (c *Client) logic(n *node) (value, error) {
	a, err := c.eval(n.args[0])
	if err != nil || a.k == kNull {
		return a, err
	}
	ab, err := a.toBool()
	if err != nil {
		return value{}, err
	}
	if ab == (n.op == opOr) {
		return boolValue(ab), nil
	}
	b, err := c.eval(n.args[1])
	if err != nil || b.k == kNull {
		return b, err
	}
	bb, err := b.toBool()
	return boolValue(bb), err
}

// arith is a binary operator on two non-null values: in doubles when either
// is a double (but %, bitwise operators and shifts, always in integers),
// else in integers with overflow an error.
func arith(o op, a, b value) (value, error) {
	if (a.k == kDouble || b.k == kDouble) && o <= opLe && (o < opMod || o > opShr) {
		x, err := a.toDouble()
		if err != nil {
			return value{}, err
		}
		y, err := b.toDouble()
		if err != nil {
			return value{}, err
		}
		switch o {
		case opAdd:
			return doubleValue(x + y), nil
		case opSub:
			return doubleValue(x - y), nil
		case opMul:
			return doubleValue(x * y), nil
		case opDiv:
			return doubleValue(x / y), nil
		case opEq:
			return boolValue(x == y), nil
		case opNe:
			return boolValue(x != y), nil
		case opLt:
			return boolValue(x < y), nil
		case opLe:
			return boolValue(x <= y), nil
		}
	}
	x, err := a.toInt()
	if err != nil {
		return value{}, err
	}
	y, err := b.toInt()
	if err != nil {
		return value{}, err
	}
	switch o {
	case opAdd:
		s := x + y
		if (s > x) != (y > 0) {
			return value{}, errRange("add")
		}
		return intValue(s), nil
	case opSub:
		d := x - y
		if (d < x) != (y > 0) {
			return value{}, errRange("sub")
		}
		return intValue(d), nil
	case opMul:
		hi, lo := bits.Mul64(uint64(abs64(x)), uint64(abs64(y)))
		neg := (x < 0) != (y < 0)
		if hi != 0 || lo > math.MaxInt64+boolToU(neg) {
			return value{}, errRange("mul")
		}
		return intValue(x * y), nil
	case opDiv, opMod:
		return intDiv(o, x, y)
	case opBitAnd:
		return intValue(x & y), nil
	case opBitOr:
		return intValue(x | y), nil
	case opBitXor:
		return intValue(x ^ y), nil
	case opShl: // the shift count taken modulo 64, as pgbench's C shift on x86-64
		return intValue(x << (uint64(y) & 63)), nil
	case opShr:
		return intValue(x >> (uint64(y) & 63)), nil
	case opEq:
		return boolValue(x == y), nil
	case opNe:
		return boolValue(x != y), nil
	case opLt:
		return boolValue(x < y), nil
	case opLe:
		return boolValue(x <= y), nil
	}
	return value{}, fmt.Errorf("internal error: operator %d", o)
}

func intDiv(o op, x, y int64) (value, error) {
	switch {
	case y == 0:
		return value{}, errDivZero
	case y == -1 && o == opMod:
		return intValue(0), nil
	case y == -1:
		if x == math.MinInt64 {
			return value{}, errRange("div")
		}
		return intValue(-x), nil
	case o == opMod:
		return intValue(x % y), nil
	}
	return intValue(x / y), nil
}

// abs64 is |x| as an unsigned magnitude (MinInt64 included).
func abs64(x int64) uint64 {
	if x < 0 {
		return uint64(-x)
	}
	return uint64(x)
}

func boolToU(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// functions are pgbench 15's, by name.
var functions = map[string]*function{}

func init() {
	for _, f := range []*function{
		{name: "abs", min: 1, max: 1, eval: fnAbs},
		{name: "debug", min: 1, max: 1, eval: func(_ *Client, a []value) (value, error) { return a[0], nil }},
		{name: "double", min: 1, max: 1, eval: math1(func(x float64) float64 { return x })},
		{name: "exp", min: 1, max: 1, eval: math1(math.Exp)},
		{name: "greatest", min: 1, max: -1, eval: extremum(false)},
		{name: "hash", min: 1, max: 2, fill: "default_seed", eval: hash(hashMurmur2)},
		{name: "hash_fnv1a", min: 1, max: 2, fill: "default_seed", eval: hash(hashFNV1a)},
		{name: "hash_murmur2", min: 1, max: 2, fill: "default_seed", eval: hash(hashMurmur2)},
		{name: "int", min: 1, max: 1, eval: fnInt},
		{name: "least", min: 1, max: -1, eval: extremum(true)},
		{name: "ln", min: 1, max: 1, eval: math1(math.Log)},
		{name: "mod", min: 2, max: 2, eval: func(_ *Client, a []value) (value, error) { return arith(opMod, a[0], a[1]) }},
		{name: "permute", min: 2, max: 3, fill: "default_seed", eval: fnPermute},
		{name: "pi", min: 0, max: 0, eval: func(*Client, []value) (value, error) { return doubleValue(math.Pi), nil }},
		{name: "pow", min: 2, max: 2, eval: fnPow},
		{name: "power", min: 2, max: 2, eval: fnPow},
		{name: "random", min: 2, max: 2, eval: random(uniform)},
		{name: "random_exponential", min: 3, max: 3, eval: random(exponential)},
		{name: "random_gaussian", min: 3, max: 3, eval: random(gaussian)},
		{name: "random_zipfian", min: 3, max: 3, eval: random(zipfian)},
		{name: "sqrt", min: 1, max: 1, eval: math1(math.Sqrt)},
	} {
		functions[f.name] = f
	}
}

func functionNames() string {
	var names []string
	for n := range functions {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func fnAbs(_ *Client, a []value) (value, error) {
	if a[0].k == kInt { // |MinInt64| wraps to itself, as in pgbench
		if a[0].i < 0 {
			return intValue(-a[0].i), nil
		}
		return a[0], nil
	}
	f, err := a[0].toDouble()
	return doubleValue(math.Abs(f)), err
}

func fnInt(_ *Client, a []value) (value, error) {
	i, err := a[0].toInt()
	return intValue(i), err
}

func math1(f func(float64) float64) func(*Client, []value) (value, error) {
	return func(_ *Client, a []value) (value, error) {
		x, err := a[0].toDouble()
		return doubleValue(f(x)), err
	}
}

func fnPow(_ *Client, a []value) (value, error) {
	x, err := a[0].toDouble()
	if err != nil {
		return value{}, err
	}
	y, err := a[1].toDouble()
	return doubleValue(math.Pow(x, y)), err
}

// extremum is least (min) or greatest: a double if any argument is one.
func extremum(least bool) func(*Client, []value) (value, error) {
	return func(_ *Client, a []value) (value, error) {
		if slices.ContainsFunc(a, func(v value) bool { return v.k == kDouble }) {
			m, err := pick(least, a, value.toDouble)
			return doubleValue(m), err
		}
		m, err := pick(least, a, value.toInt)
		return intValue(m), err
	}
}

// pick is the least or greatest of a, each converted by conv; the first
// conversion error ends it.
func pick[T int64 | float64](least bool, a []value, conv func(value) (T, error)) (T, error) {
	m, err := conv(a[0])
	for _, v := range a[1:] {
		if err != nil {
			break
		}
		var x T
		x, err = conv(v)
		if least == (x < m) && x != m {
			m = x
		}
	}
	return m, err
}

func hash(h func(v, seed int64) int64) func(*Client, []value) (value, error) {
	return func(_ *Client, a []value) (value, error) {
		v, err := a[0].toInt()
		if err != nil {
			return value{}, err
		}
		seed, err := a[1].toInt()
		return intValue(h(v, seed)), err
	}
}

func fnPermute(_ *Client, a []value) (value, error) {
	var x [3]int64
	for i := range x {
		var err error
		if x[i], err = a[i].toInt(); err != nil {
			return value{}, err
		}
	}
	if x[1] <= 0 {
		return value{}, fmt.Errorf("permute size parameter must be greater than zero (not %d)", x[1])
	}
	return intValue(permute(x[0], x[1], x[2])), nil
}

// Which random function a three-argument call is.
const (
	uniform = iota
	exponential
	gaussian
	zipfian
)

// random is random (uniform), random_exponential, random_gaussian or
// random_zipfian, with pgbench's checks of the range and the parameter.
func random(dist int) func(*Client, []value) (value, error) {
	return func(c *Client, a []value) (value, error) {
		lo, err := a[0].toInt()
		if err != nil {
			return value{}, err
		}
		hi, err := a[1].toInt()
		if err != nil {
			return value{}, err
		}
		if lo > hi {
			return value{}, fmt.Errorf("empty range given to random (%d > %d)", lo, hi)
		}
		if hi-lo < 0 || hi-lo+1 < 0 {
			return value{}, fmt.Errorf("random range is too large (%d to %d)", lo, hi)
		}
		if dist == uniform {
			return intValue(c.rng.uniform(lo, hi)), nil
		}
		p, err := a[2].toDouble()
		if err != nil {
			return value{}, err
		}
		switch dist {
		case exponential:
			if !(p > 0) {
				return value{}, fmt.Errorf("exponential parameter must be greater than zero (not %g)", p)
			}
			return intValue(c.rng.exponential(lo, hi, p)), nil
		case gaussian:
			if !(p >= minGaussian) {
				return value{}, fmt.Errorf("gaussian parameter must be at least %g (not %g)", minGaussian, p)
			}
			return intValue(c.rng.gaussian(lo, hi, p)), nil
		}
		if !(p >= minZipfian && p <= maxZipfian) {
			return value{}, fmt.Errorf("zipfian parameter must be in range [%g, %g] (not %g)", minZipfian, maxZipfian, p)
		}
		return intValue(c.rng.zipfian(lo, hi, p)), nil
	}
}

// pgbench 15's bounds of the distributions' parameters.
const (
	minGaussian = 2.0
	minZipfian  = 1.001
	maxZipfian  = 1000.0
)
