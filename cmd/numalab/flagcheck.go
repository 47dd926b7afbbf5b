package main

import (
	"flag"
	"fmt"
	"strconv"
	"time"
)

// parseChecked is parseNoArgs for a command that reports every bad flag at
// once: a value that a flag refuses (a flag.Value's Set, a number that is
// not one) does not stop the parse; its error comes back in bad, named by
// its flag, for the command to report with its own checks. done and err
// are parseNoArgs's: --help, an unknown flag, a stray argument.
func parseChecked(e *env, fs *flag.FlagSet, args []string) (done bool, bad []error, err error) {
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
	done, err = parseNoArgs(e, fs, args)
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
	bad  *[]error
}

func (c checked) Set(s string) error {
	was := c.Value.String()
	if err := c.Value.Set(s); err != nil {
		*c.bad = append(*c.bad, fmt.Errorf("-%s: %q is not valid: %w", c.name, s, err))
		c.Value.Set(was)
	}
	return nil
}

type checkedBool struct{ checked }

func (checkedBool) IsBoolFlag() bool { return true }

// intRange is an int flag that refuses, when it is set, a value outside
// [min, max]: the flag's range is part of its definition.
type intRange struct {
	v        *int
	min, max int
}

// rangedInt defines an int flag of fs that takes values from min to max.
func rangedInt(fs *flag.FlagSet, name string, value, min, max int, usage string) *int {
	p := new(int)
	*p = value
	fs.Var(intRange{p, min, max}, name, usage)
	return p
}

func (r intRange) String() string {
	if r.v == nil {
		return "0"
	}
	return strconv.Itoa(*r.v)
}

func (r intRange) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < r.min || n > r.max {
		return fmt.Errorf("want a whole number from %d to %d", r.min, r.max)
	}
	*r.v = n
	return nil
}

// durationRange is a duration flag that refuses, when it is set, a value
// outside [min, max].
type durationRange struct {
	v        *time.Duration
	min, max time.Duration
}

// rangedDuration defines a duration flag of fs that takes values from min
// to max.
func rangedDuration(fs *flag.FlagSet, name string, value, min, max time.Duration, usage string) *time.Duration {
	p := new(time.Duration)
	*p = value
	fs.Var(durationRange{p, min, max}, name, usage)
	return p
}

func (r durationRange) String() string {
	if r.v == nil {
		return "0s"
	}
	return r.v.String()
}

func (r durationRange) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d < r.min || d > r.max {
		return fmt.Errorf("want a duration from %v to %v", r.min, r.max)
	}
	*r.v = d
	return nil
}

// floatRange is a float flag that refuses, when it is set, a value outside
// [min, max] (NaN and the infinities included).
type floatRange struct {
	v        *float64
	min, max float64
}

// rangedFloat defines a float flag of fs that takes values from min to max.
func rangedFloat(fs *flag.FlagSet, name string, value, min, max float64, usage string) *float64 {
	p := new(float64)
	*p = value
	fs.Var(floatRange{p, min, max}, name, usage)
	return p
}

func (r floatRange) String() string {
	if r.v == nil {
		return "0"
	}
	return strconv.FormatFloat(*r.v, 'g', -1, 64)
}

func (r floatRange) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f >= r.min && f <= r.max) {
		return fmt.Errorf("want a number from %g to %g", r.min, r.max)
	}
	*r.v = f
	return nil
}
