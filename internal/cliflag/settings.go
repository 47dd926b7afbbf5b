package cliflag

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/setting"
)

// Setting ties one flag of a run command to the field of its configuration
// that the flag sets. A command's settings, in the order its stored command
// line spells them, are the one place that defines a flag (Setting.Flag,
// Settings.Define: its name, help, default and range), says how its value
// reaches the configuration (Settings.Apply) and how the configuration is
// written back as the command line that re-runs it (Settings.Argv).
type Setting struct {
	name string
	set  func(string) error // parse a flag's value into the field
	get  func() string      // the field as the flag spells it
	zero func() bool        // whether the field holds its type's zero
	bool bool               // a bool: argv writes --name=v, or --name when optional
	opt  bool               // argv leaves it out when zero
	when func() bool        // if set, argv leaves it out unless it holds
	each func() []string    // a repeated flag's values: argv spells each
	// define defines the flag on a flag set with a default spelled as
	// argv spells it, and the flag's help; usage is its help (none: no
	// flag), dflt its default when that is not the field's value.
	define      func(fs *flag.FlagSet, value, usage string)
	usage, dflt string
	hasDflt     bool
}

// Settings are a command's settings, in the order of its command line.
type Settings []Setting

// Field is the setting of name on *p, with parse and format.
func Field[T any](name string, p *T, parse func(string) (T, error), format func(T) string) Setting {
	_, isBool := any(p).(*bool)
	return Setting{
		name: name,
		set: func(s string) error {
			v, err := parse(s)
			if err == nil {
				*p = v
			}
			return err
		},
		get:    func() string { return format(*p) },
		zero:   func() bool { var z T; return format(*p) == format(z) },
		bool:   isBool,
		define: func(fs *flag.FlagSet, v, usage string) { fs.String(name, v, usage) },
	}
}

// typed is s with its flag defined as the flag package's own type,
// def, parsing the default with parse.
func typed[T, R any](s Setting, parse func(string) (T, error),
	def func(fs *flag.FlagSet, name string, v T, usage string) R) Setting {
	name := s.name
	s.define = func(fs *flag.FlagSet, v, usage string) {
		x, _ := parse(v)
		def(fs, name, x, usage)
	}
	return s
}

// Flag is s with its flag: usage its help, its default the field's value
// when the flags are defined (Settings.Define).
func (s Setting) Flag(usage string) Setting {
	s.usage = usage
	return s
}

// FlagDefault is s with its flag, whose default is v (spelled as argv
// spells it) rather than the field's value.
func (s Setting) FlagDefault(v, usage string) Setting {
	s.usage, s.dflt, s.hasDflt = usage, v, true
	return s
}

// IntIn is the setting of an int field whose flag takes values from min
// to max.
func IntIn(name string, p *int, min, max int) Setting { return InRange(Int(name, p), min, max) }

// DurationIn is the setting of a time.Duration field whose flag takes
// values from min to max.
func DurationIn(name string, p *time.Duration, min, max time.Duration) Setting {
	return InRange(Duration(name, p), min, max)
}

// InRange is s, the setting of an int or time.Duration field, with a flag
// that takes values from min to max (RangedInt, RangedDuration).
func InRange[T int | time.Duration](s Setting, min, max T) Setting {
	name := s.name
	s.define = func(fs *flag.FlagSet, v, usage string) {
		if _, isInt := any(min).(int); isInt {
			n, _ := strconv.Atoi(v)
			RangedInt(fs, name, n, int(min), int(max), usage)
			return
		}
		d, _ := time.ParseDuration(v)
		RangedDuration(fs, name, d, time.Duration(min), time.Duration(max), usage)
	}
	return s
}

// Define defines the flag of every setting that has one (Setting.Flag) on
// fs.
func (ss Settings) Define(fs *flag.FlagSet) {
	for _, s := range ss {
		if s.usage == "" {
			continue
		}
		v := s.get()
		if s.hasDflt {
			v = s.dflt
		}
		s.define(fs, v, s.usage)
	}
}

// Optional is s left out of argv when zero.
func Optional(s Setting) Setting {
	s.opt = true
	return s
}

// When is s left out of argv unless cond holds: a setting that only some
// configurations have (PostgreSQL's transport, say).
func When(s Setting, cond func() bool) Setting {
	s.when = cond
	return s
}

// Validated is s with check of the value given run after each set.
func Validated(s Setting, check func(v string) error) Setting {
	set := s.set
	s.set = func(v string) error {
		if err := set(v); err != nil {
			return err
		}
		return check(v)
	}
	return s
}

// Str, Bool, Int, Int64, Uint64, Float and Duration are the settings of a
// field of that type, spelled in argv as strconv and time write it; their
// flags are the flag package's of that type.

// Str is the setting of a string field, spelled as it is.
func Str(name string, p *string) Setting {
	return Field(name, p, func(s string) (string, error) { return s, nil }, func(s string) string { return s })
}

// DSN is the DSN setting: optional, its password hidden in argv.
func DSN(p *string) Setting {
	s := Optional(Str("dsn", p))
	s.get = func() string { return result.Redact(*p) }
	return s
}

// Bool is the setting of a bool field.
func Bool(name string, p *bool) Setting {
	return typed(Field(name, p, strconv.ParseBool, strconv.FormatBool), strconv.ParseBool, (*flag.FlagSet).Bool)
}

// Int is the setting of a int field.
func Int(name string, p *int) Setting {
	return typed(Field(name, p, strconv.Atoi, strconv.Itoa), strconv.Atoi, (*flag.FlagSet).Int)
}

// Int64 is the setting of a int64 field.
func Int64(name string, p *int64) Setting {
	parse := func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }
	return typed(Field(name, p, parse, func(v int64) string { return strconv.FormatInt(v, 10) }), parse,
		(*flag.FlagSet).Int64)
}

// Uint64 is the setting of a uint64 field.
func Uint64(name string, p *uint64) Setting {
	parse := func(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) }
	return typed(Field(name, p, parse, func(v uint64) string { return strconv.FormatUint(v, 10) }), parse,
		(*flag.FlagSet).Uint64)
}

// Float is the setting of a float64 field.
func Float(name string, p *float64) Setting {
	parse := func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
	return typed(Field(name, p, parse, func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }), parse,
		(*flag.FlagSet).Float64)
}

// Duration is the setting of a time.Duration field.
func Duration(name string, p *time.Duration) Setting {
	return typed(Field(name, p, time.ParseDuration, time.Duration.String), time.ParseDuration, (*flag.FlagSet).Duration)
}

// Ints is a comma-separated list of whole numbers of at least 1.
func Ints(name string, p *[]int) Setting {
	return Field(name, p, func(s string) ([]int, error) { return ParseInts(name, s, 1) }, FormatInts)
}

// List is a list of words separated by sep.
func List(name, sep string, p *[]string) Setting {
	return Field(name, p, func(s string) ([]string, error) { return strings.Split(s, sep), nil },
		func(v []string) string { return strings.Join(v, sep) })
}

// Repeated is the setting of a flag given once per value (--script a.sql
// --script b.sql), the values in the order given; argv spells each so,
// and none when there are none. A value may not hold a newline.
func Repeated(name string, p *[]string) Setting {
	s := Optional(Field(name, p, func(v string) ([]string, error) {
		if v == "" {
			return nil, nil
		}
		return strings.Split(v, "\n"), nil
	}, func(v []string) string { return strings.Join(v, "\n") }))
	s.each = func() []string { return *p }
	s.define = func(fs *flag.FlagSet, v, usage string) { fs.Var(&repeated{name: name}, name, usage) }
	return s
}

// Strings adds a flag given once per value (--run 3 --run 7), the values
// in the order given.
func Strings(fs *flag.FlagSet, name, usage string) *[]string {
	v := &repeated{name: name}
	fs.Var(v, name, usage)
	return &v.vals
}

// repeated is a Repeated setting's flag: each value given appended.
type repeated struct {
	name string
	vals []string
}

func (r *repeated) String() string {
	if r == nil {
		return ""
	}
	return strings.Join(r.vals, "\n")
}

func (r *repeated) Set(v string) error {
	if strings.Contains(v, "\n") {
		return fmt.Errorf("%q holds a newline (expected one value per --%s)", v, r.name)
	}
	r.vals = append(r.vals, v)
	return nil
}

// Apply sets the field of every flag of fs given on the command line (all:
// of every flag, given or default), in the settings' order, and returns
// the values refused.
func (ss Settings) Apply(fs *flag.FlagSet, all bool) Errs {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var bad Errs
	for _, s := range ss {
		if f := fs.Lookup(s.name); f != nil && (all || given[s.name]) {
			if err := s.set(f.Value.String()); err != nil {
				bad = append(bad, err)
			}
		}
	}
	return bad
}

// Argv is the command line words... followed by every setting: the one
// command line that gives the configuration, whatever the defaults become.
func (ss Settings) Argv(words ...string) []string {
	a := words
	for _, s := range ss {
		switch {
		case s.when != nil && !s.when():
		case s.opt && s.zero():
		case s.each != nil:
			for _, v := range s.each() {
				a = append(a, "--"+s.name, v)
			}
		case s.opt && s.bool:
			a = append(a, "--"+s.name)
		case s.bool:
			a = append(a, "--"+s.name+"="+s.get())
		default:
			a = append(a, "--"+s.name, s.get())
		}
	}
	return a
}

// SweepFile decodes the sweep file of 'numalab cmd -f path' into cfg, a
// pointer to the command's configuration, refusing a key it does not have;
// an empty path is no sweep file.
func SweepFile(cmd, path string, cfg any) (toml.MetaData, error) {
	if path == "" {
		return toml.MetaData{}, nil
	}
	md, err := toml.DecodeFile(path, cfg)
	if err != nil {
		return md, setting.Errorf("f", "reading sweep file %s: %w", path, err)
	}
	if un := md.Undecoded(); len(un) > 0 {
		return md,
			setting.Errorf("f", "%s: unknown setting %q (see 'numalab %s --help' for the names)", path, un[0].String(), cmd)
	}
	return md, nil
}
