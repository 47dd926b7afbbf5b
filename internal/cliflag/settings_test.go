package cliflag

import (
	"flag"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSettings: Argv spells a zero optional setting not at all, an
// optional bool bare, any other bool as --name=v, a DSN without its
// password, a When setting only while its condition holds; Apply sets the flags given (or all), in the settings' order,
// and returns every refused value.
func TestSettings(t *testing.T) {
	var (
		name, dsn    string
		on, off, opt bool
		n, zero      int
		list         []int
		words        []string
		wait         time.Duration
		big, pg      uint64
	)
	ss := Settings{Str("name", &name), DSN(&dsn), Bool("on", &on), Optional(Bool("off", &off)),
		Optional(Bool("opt", &opt)), Int("n", &n), Optional(Int("zero", &zero)), Ints("list", &list),
		Optional(List("words", ";", &words)), Duration("wait", &wait), Uint64("big", &big),
		When(Uint64("pg", &pg), func() bool { return name == "postgres" })}
	name, dsn, opt, list, wait, big = "0", "postgres://me:secret@db/x", true, []int{1, 2}, 1500*time.Millisecond, 1<<64-1
	want := []string{"cmd", "--name", "0", "--dsn", "postgres://me:xxxxx@db/x", "--on=false", "--opt", "--n", "0",
		"--list", "1,2", "--wait", "1.5s",
		"--big", "18446744073709551615"}
	if got := ss.Argv("cmd"); !slices.Equal(got, want) {
		t.Errorf("Argv:\n%q\nwant\n%q", got, want)
	}
	name = "postgres"
	if got := ss.Argv("cmd"); !slices.Equal(got[len(got)-2:], []string{"--pg", "0"}) {
		t.Errorf("Argv with its When holding: %q; want --pg 0 last", got)
	}
	name = "0"

	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.String("name", "default", "")
	fs.String("list", "3", "")
	fs.String("words", "", "")
	fs.Int("n", 7, "")
	if err := fs.Parse([]string{"--words", "a;b", "--list", "x"}); err != nil {
		t.Fatal(err)
	}
	bad := ss.Apply(fs, false)
	if len(bad) != 1 || !strings.HasPrefix(bad[0].Error(), `-list: "x" is not a list`) {
		t.Errorf("Apply refused %v; want --list alone", bad)
	}
	if name != "0" || n != 0 || !slices.Equal(words, []string{"a", "b"}) || !slices.Equal(list, []int{1, 2}) {
		t.Errorf("Apply of the flags given: name %q n %d words %q list %v", name, n, words, list)
	}
	if bad := ss.Apply(fs, true); len(bad) != 1 || name != "default" || n != 7 {
		t.Errorf("Apply of every flag: refused %v, name %q n %d; want --list refused, the defaults set", bad, name, n)
	}
}

// config is a command's configuration for TestArgvRoundTrip.
type config struct {
	Engine, DSN string
	SF          float64
	Seed        int64
	Streams     []int
	Places      []string
	Spread      bool
	Extra       bool
	Wait        time.Duration
}

func (c *config) settings() Settings {
	return Settings{Str("engine", &c.Engine), DSN(&c.DSN), Float("sf", &c.SF), Int64("seed", &c.Seed),
		Ints("streams", &c.Streams),
		List("placement", ";", &c.Places), Bool("spread", &c.Spread), Optional(Bool("extra", &c.Extra)),
		Duration("wait", &c.Wait)}
}

// flags defines c's flags on a new flag set, its defaults those of c.
func (c config) flags() *flag.FlagSet {
	fs := New(io.Discard, "x", "Usage: x")
	fs.String("engine", c.Engine, "")
	fs.String("dsn", c.DSN, "")
	fs.Float64("sf", c.SF, "")
	fs.Int64("seed", c.Seed, "")
	fs.String("streams", FormatInts(c.Streams), "")
	fs.String("placement", strings.Join(c.Places, ";"), "")
	fs.Bool("spread", c.Spread, "")
	fs.Bool("extra", c.Extra, "")
	fs.Duration("wait", c.Wait, "")
	return fs
}

// TestArgvRoundTrip: the command line Argv writes, parsed by flags whose
// defaults are all different, gives the configuration back.
func TestArgvRoundTrip(t *testing.T) {
	defaults := config{Engine: "sqlite", SF: 1, Seed: 9, Streams: []int{8}, Places: []string{"node=1"}, Spread: true,
		Extra: true, Wait: time.Hour}
	for _, c := range []config{
		{Engine: "postgres", DSN: "postgres://db/x", SF: 0.01, Seed: -3, Streams: []int{1, 2, 4},
			Places: []string{"smt=on", "smt=off"}, Wait: 1500 * time.Millisecond},
		{Engine: "duckdb", SF: 1e-3, Seed: 1, Streams: []int{3}, Places: []string{""}, Spread: true, Extra: true},
	} {
		argv := c.settings().Argv("x")
		fs := defaults.flags()
		if err := fs.Parse(argv[1:]); err != nil {
			t.Fatalf("%q: %v", argv, err)
		}
		if fs.NArg() > 0 {
			t.Errorf("%q leaves %q unparsed", argv, fs.Args())
		}
		var got config
		if bad := got.settings().Apply(fs, true); len(bad) > 0 {
			t.Fatalf("%q: %v", argv, bad)
		}
		if !Given(fs, "extra") && c.Extra {
			t.Errorf("%q: an optional true bool is not given", argv)
		}
		got.Extra = Given(fs, "extra")
		if !slices.Equal(got.settings().Argv("x"), argv) || got.Engine != c.Engine || got.SF != c.SF ||
			got.Wait != c.Wait || !slices.Equal(got.Streams, c.Streams) {
			t.Errorf("%q parses back to %+v, want %+v", argv, got, c)
		}
	}
}

// TestSweepFileRefusesUnknownKey: a key the configuration lacks is named.
func TestSweepFileRefusesUnknownKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.toml")
	if err := os.WriteFile(path, []byte("repeat = 3\nrepeats = 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Repeat int `toml:"repeat"`
	}
	_, err := SweepFile("run x", path, &cfg)
	if err == nil ||
		!strings.Contains(err.Error(), `unknown setting "repeats" (see 'numalab run x --help'`) || cfg.Repeat != 3 {
		t.Errorf("err %v, repeat %d", err, cfg.Repeat)
	}
}

// TestDefine: a setting's flag is the flag package's of its field's type
// (so --help prints it as before), its default the field's value or the
// one FlagDefault gives, its range refused at parse time, and a setting
// without Flag has no flag.
func TestDefine(t *testing.T) {
	var (
		name    = "sqlite"
		n       = 7
		wait    = 2 * time.Second
		load    float64
		list    = []int{1, 2}
		on      = true
		hidden  int
		parse   = func(s string) (string, error) { return s, nil }
		defined = map[string]string{}
	)
	ss := Settings{Str("name", &name).Flag("a `word`"), IntIn("n", &n, 1, 10).Flag("n"),
		DurationIn("wait", &wait, 0, time.Minute).Flag("w"),
		Float("load", &load).FlagDefault("0.5", "l"), Ints("list", &list).Flag("l"), Bool("on", &on).Flag("b"),
		Int("hidden", &hidden),
		Field("q", &name, parse, func(s string) string { return s }).FlagDefault("1-22", "q")}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ss.Define(fs)
	fs.VisitAll(func(f *flag.Flag) { defined[f.Name] = f.DefValue })
	want := map[string]string{"name": "sqlite", "n": "7", "wait": "2s", "load": "0.5", "list": "1,2",
		"on": "true", "q": "1-22"}
	if !maps.Equal(defined, want) {
		t.Errorf("Define: flags and defaults %v; want %v", defined, want)
	}
	if _, ok := fs.Lookup("load").Value.(flag.Getter); !ok {
		t.Error("--load is not the flag package's float")
	}
	_, bad, err := ParseChecked(io.Discard, fs, []string{"--n", "11", "--wait", "2m", "--load", "0.25"})
	if err != nil || len(bad) != 2 {
		t.Fatalf("ParseChecked of --n 11 --wait 2m: bad %v, err %v; want both refused", bad, err)
	}
	if bad := ss.Apply(fs, true); len(bad) != 0 || load != 0.25 || n != 7 || wait != 2*time.Second || name != "1-22" {
		t.Errorf("Apply: refused %v, load %v n %d wait %v name %q", bad, load, n, wait, name)
	}
}

// TestRepeated: a Repeated flag keeps each value given, in order, argv
// spells each back, and none when none was given.
func TestRepeated(t *testing.T) {
	var files []string
	ss := Settings{Repeated("script", &files).Flag("a script")}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	ss.Define(fs)
	if got := ss.Argv("run"); !slices.Equal(got, []string{"run"}) {
		t.Errorf("Argv of none: %q", got)
	}
	if err := fs.Parse([]string{"--script", "a.sql@2", "--script", "b c.sql"}); err != nil {
		t.Fatal(err)
	}
	if bad := ss.Apply(fs, true); len(bad) != 0 || !slices.Equal(files, []string{"a.sql@2", "b c.sql"}) {
		t.Errorf("Apply: %q (%v)", files, bad)
	}
	if got, want := ss.Argv("run"),
		[]string{"run", "--script", "a.sql@2", "--script", "b c.sql"}; !slices.Equal(got, want) {
		t.Errorf("Argv %q, want %q", got, want)
	}
	fs.SetOutput(io.Discard)
	if err := fs.Parse([]string{"--script", "a\nb"}); err == nil || !strings.Contains(err.Error(), "newline") {
		t.Errorf("a value with a newline: %v", err)
	}
}
