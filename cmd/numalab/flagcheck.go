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
func parseChecked(e *env, fs *flag.FlagSet, args []string) (done bool, bad flagErrs, err error) {
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
	bad  *flagErrs
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

// ranged is a flag value that refuses, when it is set, a value outside
// [min, max]: the flag's range is part of its definition. want is the
// refusal, formatted with min and max.
type ranged[T int | time.Duration] struct {
	v        *T
	min, max T
	parse    func(string) (T, error)
	want     string
}

// rangedInt defines an int flag of fs that takes values from min to max.
func rangedInt(fs *flag.FlagSet, name string, value, min, max int, usage string) *int {
	return defineRanged(fs, name, usage, ranged[int]{&value, min, max, strconv.Atoi, "want a whole number from %d to %d"})
}

// rangedDuration defines a duration flag of fs that takes values from min
// to max.
func rangedDuration(fs *flag.FlagSet, name string, value, min, max time.Duration, usage string) *time.Duration {
	return defineRanged(fs, name, usage, ranged[time.Duration]{&value, min, max, time.ParseDuration, "want a duration from %v to %v"})
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
		return fmt.Errorf(r.want, r.min, r.max)
	}
	*r.v = v
	return nil
}
