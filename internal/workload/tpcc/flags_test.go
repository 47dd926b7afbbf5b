package tpcc

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/curve"
	"github.com/numalab/numalab/internal/monitor"
)

// TestCheckFlags: --monitor takes its own --repeat and --monitor-load
// defaults unless given (by flag or sweep file), and refuses --neighbour;
// off, --allow-settings is refused by name; a curve gets its fractions and
// knee factor spelled out, and refuses --neighbour; --neighbour-pairs
// needs --neighbour.
func TestCheckFlags(t *testing.T) {
	none := func(flag, key string) bool { return false }
	c := DefaultRunConfig()
	c.Monitor = []string{"sysmon"}
	if err := errors.Join(c.CheckFlags(none)...); err != nil {
		t.Fatal(err)
	}
	if c.Repeat != monitor.MinRepeat || c.MonitorLoad != monitor.DefaultPacedLoad {
		t.Errorf("--monitor without --repeat or --monitor-load: repeat %d, load %g; want %d, %g",
			c.Repeat, c.MonitorLoad, monitor.MinRepeat, monitor.DefaultPacedLoad)
	}
	c = DefaultRunConfig()
	c.Monitor, c.Repeat, c.Neighbour = []string{"sysmon"}, 2, true
	err := errors.Join(c.CheckFlags(func(flag, key string) bool { return key == "repeat" })...)
	if c.Repeat != 2 || err == nil || !strings.Contains(err.Error(), "-neighbour: not with --monitor") {
		t.Errorf("--monitor --neighbour with repeat in the sweep file: repeat %d, err %v", c.Repeat, err)
	}
	c = DefaultRunConfig()
	c.AllowSettings = true
	if err := errors.Join(c.CheckFlags(none)...); err == nil || !strings.HasPrefix(err.Error(), "-allow-settings:") {
		t.Errorf("--allow-settings without --monitor: %v", err)
	}
	c = DefaultRunConfig()
	c.Curve, c.Neighbour = true, true
	err = errors.Join(c.CheckFlags(none)...)
	if !slices.Equal(c.CurveAt, curve.DefaultFractions) || c.KneeFactor != curve.DefaultFactor || err == nil ||
		!strings.Contains(err.Error(), "-neighbour: not with --curve") {
		t.Errorf("--curve --neighbour: at %v, factor %g, err %v", c.CurveAt, c.KneeFactor, err)
	}
	c = DefaultRunConfig()
	c.NeighbourPairs = 2
	if err := errors.Join(c.CheckFlags(none)...); err == nil ||
		!strings.Contains(err.Error(), "-neighbour-pairs: 2 pairs without --neighbour") {
		t.Errorf("--neighbour-pairs without --neighbour: %v", err)
	}
}

// TestSettingsDefineDefaults: run oltp's flags default to
// DefaultRunConfig's values, and a configuration's Argv parses back to it.
func TestSettingsDefineDefaults(t *testing.T) {
	c := DefaultRunConfig()
	fs := flag.NewFlagSet("run oltp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.Settings().Define(fs)
	for name, want := range map[string]string{"engine": "sqlite", "warehouses": "1", "streams": "1,2,4",
		"spread": "true", "data-node": "-1",
		"duration": "10s", "warmup": "2s", "repeat": "1", "seed": "1", "monitor-load": "0.5", "curve-at": ""} {
		if f := fs.Lookup(name); f == nil || f.DefValue != want {
			t.Errorf("--%s: flag %v; want default %q", name, f, want)
		}
	}
	c.Streams, c.Placements, c.Augmented, c.Seed = []int{3}, []string{"node=0", "node=1"}, true, 7
	argv := c.Argv()
	got := DefaultRunConfig()
	fs = flag.NewFlagSet("run oltp", flag.ContinueOnError)
	got.Settings().Define(fs)
	if err := fs.Parse(argv[2:]); err != nil {
		t.Fatal(err)
	}
	if bad := got.Settings().Apply(fs, false); len(bad) > 0 || !slices.Equal(got.Argv(), argv) {
		t.Errorf("Argv %q parses to %q (refused %v)", argv, got.Argv(), bad)
	}
}
