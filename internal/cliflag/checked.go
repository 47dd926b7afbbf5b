package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/numalab/numalab/internal/result"
)

// ParseChecked is ParseNoArgs for a command that reports every bad flag at
// once: a value that a flag refuses (a flag.Value's Set, a number that is
// not one) does not stop the parse; its error comes back in bad, named by
// its flag, for the command to report with its own checks. done and err
// are ParseNoArgs's: --help, an unknown flag, a stray argument.
func ParseChecked(stdout io.Writer, fs *flag.FlagSet, args []string) (done bool, bad Errs, err error) {
	orig := map[string]flag.Value{}
	fs.VisitAll(func(f *flag.Flag) {
		orig[f.Name] = f.Value
		if b, ok := f.Value.(boolValue); ok && b.IsBoolFlag() {
			f.Value = checkedBool{checked{f.Value, f.Name, &bad}}
		} else {
			f.Value = checked{f.Value, f.Name, &bad}
		}
	})
	// Put the values back before anything prints the defaults, which
	// looks at each value's own type.
	restore := func() { fs.VisitAll(func(f *flag.Flag) { f.Value = orig[f.Name] }) }
	fs.Usage = wrapUsage(fs.Usage, restore)
	done, err = ParseNoArgs(stdout, fs, args)
	restore()
	return done, bad, err
}

// wrapUsage runs restore before usage.
func wrapUsage(usage func(), restore func()) func() {
	return func() {
		restore()
		usage()
	}
}

// boolValue is what the flag package looks for to parse "--x" as "--x=true".
type boolValue interface {
	flag.Value
	IsBoolFlag() bool
}

// checked passes Set to a flag's value and keeps its error instead of
// returning it; a refused value leaves the flag as it was (the flag
// package's numbers would become 0).
type checked struct {
	flag.Value
	name string
	bad  *Errs
}

func (c checked) Set(s string) error {
	was := c.Value.String()
	if err := c.Value.Set(s); err != nil {
		*c.bad = append(*c.bad, fmt.Errorf("-%s: %q is not valid: %w", c.name, result.Redact(s), err))
		c.Value.Set(was)
	}
	return nil
}

type checkedBool struct{ checked }

func (checkedBool) IsBoolFlag() bool { return true }

// ranged is a flag value that refuses, when it is set, a value outside
// [min, max]: the flag's range is part of its definition. want is the
// refusal.
type ranged[T int | time.Duration] struct {
	v        *T
	min, max T
	parse    func(string) (T, error)
	want     string
}

// RangedInt defines an int flag of fs that takes values from min to max.
func RangedInt(fs *flag.FlagSet, name string, value, min, max int, usage string) *int {
	return defineRanged(fs, name, usage,
		ranged[int]{&value, min, max, strconv.Atoi, fmt.Sprintf("want a whole number from %d to %d", min, max)})
}

// LeastInt defines an int flag of fs that takes values of at least min.
func LeastInt(fs *flag.FlagSet, name string, value, min int, usage string) *int {
	return defineRanged(fs, name, usage,
		ranged[int]{&value, min, math.MaxInt, strconv.Atoi, fmt.Sprintf("want a whole number, %d or more", min)})
}

// RangedDuration defines a duration flag of fs that takes values from min
// to max.
func RangedDuration(fs *flag.FlagSet, name string, value, min, max time.Duration, usage string) *time.Duration {
	return defineRanged(fs, name, usage,
		ranged[time.Duration]{&value, min, max, time.ParseDuration, fmt.Sprintf("want a duration from %v to %v", min, max)})
}

func defineRanged[T int | time.Duration](fs *flag.FlagSet, name, usage string, r ranged[T]) *T {
	fs.Var(r, name, usage)
	return r.v
}

// String is the value as its parser reads it; the flag package calls it
// on a zero ranged too, to tell a default worth printing.
func (r ranged[T]) String() string {
	if r.v == nil {
		var zero T
		return fmt.Sprint(zero)
	}
	return fmt.Sprint(*r.v)
}

func (r ranged[T]) Set(s string) error {
	v, err := r.parse(s)
	if err != nil || v < r.min || v > r.max {
		return errors.New(r.want)
	}
	*r.v = v
	return nil
}

func (r ranged[T]) wanted() string { return r.want }

// number is a float flag value that refuses, when it is set, anything but
// a finite number that ok accepts: want is the refusal, which says what to
// give ("want GHz above 0, e.g. --ghz 3").
type number struct {
	v    *float64
	ok   func(float64) bool
	want string
}

// Number defines a float flag of fs that takes the finite numbers ok
// accepts (Above, AtLeast, Between).
func Number(fs *flag.FlagSet, name string, value float64, ok func(float64) bool, want, usage string) *float64 {
	fs.Var(number{&value, ok, want}, name, usage)
	return &value
}

// Above is the test of a Number v > min.
func Above(min float64) func(float64) bool { return func(v float64) bool { return v > min } }

// AtLeast is the test of a Number v ≥ min.
func AtLeast(min float64) func(float64) bool { return func(v float64) bool { return v >= min } }

// Between is the test of a Number min ≤ v ≤ max.
func Between(min, max float64) func(float64) bool {
	return func(v float64) bool { return v >= min && v <= max }
}

// String is the value as the flag package prints a float's.
func (n number) String() string {
	if n.v == nil {
		return "0"
	}
	return strconv.FormatFloat(*n.v, 'g', -1, 64)
}

func (n number) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || !n.ok(v) {
		return errors.New(n.want)
	}
	*n.v = v
	return nil
}

func (n number) wanted() string { return n.want }

// Missing adds, for each named flag of fs that was not given, that it is
// missing and what it wants (its Number's or ranged flag's want).
func (f *Errs) Missing(fs *flag.FlagSet, names ...string) {
	for _, name := range names {
		if !Given(fs, name) {
			*f = append(*f, fmt.Errorf("-%s: missing: %s", name, fs.Lookup(name).Value.(interface{ wanted() string }).wanted()))
		}
	}
}
