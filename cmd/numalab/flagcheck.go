package main

import (
	"flag"
	"fmt"
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
