package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/workload/tpch"
)

// TestSettings: argv spells a zero optional setting not at all, an
// optional bool bare, any other bool as --name=v, a DSN without its
// password; apply sets the flags given (or all), in the settings' order,
// and returns every refused value.
func TestSettings(t *testing.T) {
	var (
		name, dsn    string
		on, off, opt bool
		n, zero      int
		list         []int
		words        []string
		wait         time.Duration
	)
	ss := settings{strSetting("name", &name), dsnSetting(&dsn), boolSetting("on", &on), optional(boolSetting("off", &off)),
		optional(boolSetting("opt", &opt)), intSetting("n", &n), optional(intSetting("zero", &zero)), intsSetting("list", &list),
		optional(listSetting("words", ";", &words)), durationSetting("wait", &wait)}
	name, dsn, opt, list, wait = "0", "postgres://me:secret@db/x", true, []int{1, 2}, 1500*time.Millisecond
	want := []string{"cmd", "--name", "0", "--dsn", "postgres://me:xxxxx@db/x", "--on=false", "--opt", "--n", "0", "--list", "1,2", "--wait", "1.5s"}
	if got := ss.argv("cmd"); !slices.Equal(got, want) {
		t.Errorf("argv:\n%q\nwant\n%q", got, want)
	}

	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.String("name", "default", "")
	fs.String("list", "3", "")
	fs.String("words", "", "")
	fs.Int("n", 7, "")
	if err := fs.Parse([]string{"--words", "a;b", "--list", "x"}); err != nil {
		t.Fatal(err)
	}
	bad := ss.apply(fs, false)
	if len(bad) != 1 || !strings.HasPrefix(bad[0].Error(), `-list: "x" is not a list`) {
		t.Errorf("apply refused %v; want --list alone", bad)
	}
	if name != "0" || n != 0 || !slices.Equal(words, []string{"a", "b"}) || !slices.Equal(list, []int{1, 2}) {
		t.Errorf("apply of the flags given: name %q n %d words %q list %v", name, n, words, list)
	}
	if bad := ss.apply(fs, true); len(bad) != 1 || name != "default" || n != 7 {
		t.Errorf("apply of every flag: refused %v, name %q n %d; want --list refused, the defaults set", bad, name, n)
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
	_, err := sweepFile("run x", path, &cfg)
	if err == nil || !strings.Contains(err.Error(), `unknown setting "repeats" (see 'numalab run x --help'`) || cfg.Repeat != 3 {
		t.Errorf("err %v, repeat %d", err, cfg.Repeat)
	}
}

// TestTPCHArgvReparses: the command line stored for a run tpch parses
// back to the same configuration and threshold.
func TestTPCHArgvReparses(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []tpch.RunConfig{
		{Engine: "postgres", DSN: "postgres://me:xxxxx@db/x", SF: 0.01, Seed: 3, DOP: []int{1, 2}, Queries: []int{1, 6}, Repeats: 2,
			Duration: time.Second, Warmup: 0, Placement: "node=0", DataNode: 0},
		{Engine: "sqlite", DB: filepath.Join(dir, "t.sqlite"), SF: 0.001, Seed: 1, DOP: []int{1}, Queries: []int{22}, Streams: []int{2, 4}, Repeats: 1,
			Duration: 3 * time.Second, Warmup: time.Second, DataNode: -1},
	} {
		argv := tpchArgv(c, 17)
		got, _, _, thr, _, _, err := tpchFlags(&env{stdout: io.Discard, stderr: io.Discard}, argv[2:])
		if err != nil || asJSON(t, got) != asJSON(t, c) || thr != 17 {
			t.Errorf("%q parses to %s, threshold %v, %v\nwant %s, 17", argv, asJSON(t, got), thr, err, asJSON(t, c))
		}
	}
}
