// Package cliflag is the typed command-line flags of numalab's commands:
// values checked at parse time, every bad value reported together, and a
// configuration's settings table, where each flag is defined once (name,
// help, default, range, check, field), that defines the flags, reads them
// and sweep files and writes the command line back; and the settings the
// run commands share (pacing, the load curve, --monitor).
//
// It knows flags, not commands: it prints only a flag set's usage and the
// flag package's own errors, to the writers it is given, and never exits.
package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/setting"
)

// ErrUsage reports bad command-line input whose message was already printed.
var ErrUsage = errors.New("usage")

// New makes a command's flag set, printing to stderr. help is printed by
// --help, before the flag list: a synopsis line, what the command does,
// and examples.
func New(stderr io.Writer, name, help string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "%s\nFlags:\n", strings.TrimSpace(help)+"\n")
		fs.PrintDefaults()
	}
	return fs
}

// Parse parses args; --help prints the usage to stdout and returns done
// with a nil error. The flag package would print the usage itself on
// --help and on a bad flag; it is held back during the parse so that the
// usage prints once: on stdout for --help, on the flag set's output after
// the flag package's error line otherwise.
func Parse(stdout io.Writer, fs *flag.FlagSet, args []string) (done bool, err error) {
	usage := fs.Usage
	fs.Usage = func() {}
	err = fs.Parse(args)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return true, nil
	}
	if err != nil {
		fs.Usage()
		return true, ErrUsage
	}
	if err := CheckFileFlags(fs); err != nil {
		return true, err
	}
	return false, nil
}

// ParseNoArgs is Parse for a command that takes no arguments: a stray one
// is an error too.
func ParseNoArgs(stdout io.Writer, fs *flag.FlagSet, args []string) (done bool, err error) {
	if done, err := Parse(stdout, fs, args); done {
		return true, err
	}
	err = NoArgs(fs)
	return err != nil, err
}

// NoArgs refuses stray positional arguments.
func NoArgs(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q (flags go before arguments; see 'numalab %s --help')",
			fs.Name(), fs.Arg(0), fs.Name())
	}
	return nil
}

// Given reports whether the flag was given on the command line.
func Given(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// Bad is the error for a flag value that parsed but makes no sense.
func Bad(name, value, want string) error {
	return setting.Errorf(name, "%q %s", value, want)
}

// Errs collects a command's bad flags, to report them all at once.
type Errs []error

// BadIf adds Bad(name, value, want) when bad holds.
func (f *Errs) BadIf(bad bool, name, value, want string) {
	if bad {
		*f = append(*f, Bad(name, value, want))
	}
}

// ParseInts parses flag name's comma-separated list of integers of at
// least least.
func ParseInts(name, s string, least int) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < least {
			return nil, Bad(name, s, fmt.Sprintf("is not a list of whole numbers of at least %d: want e.g. 1,2,4", least))
		}
		out = append(out, v)
	}
	return out, nil
}

// FormatInts is v as ParseInts reads it.
func FormatInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
