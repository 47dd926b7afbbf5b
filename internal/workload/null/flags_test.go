package null

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

// checkFlags runs CheckFlags on c with args given on run null's flags.
func checkFlags(t *testing.T, c *RunConfig, args ...string) error {
	t.Helper()
	fs := flag.NewFlagSet("run null", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.Settings().Define(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return errors.Join(append(c.Settings().Apply(fs, true), c.CheckFlags(fs)...)...)
}

// TestCheckFlagsTransport: a --dsn server's transport is the DSN's unless
// --transport is given; SQLite has none; --monitor on SQLite is refused by
// name.
func TestCheckFlagsTransport(t *testing.T) {
	c := DefaultRunConfig()
	if err := checkFlags(t, &c, "--dsn", "host=/tmp dbname=x"); err != nil || !slices.Equal(c.Transports, []string{Unix}) {
		t.Errorf("--dsn on a socket: transports %q, err %v; want unix", c.Transports, err)
	}
	c = DefaultRunConfig()
	if err := checkFlags(t, &c, "--dsn", "host=/tmp dbname=x", "--transport", "tcp"); err != nil ||
		!slices.Equal(c.Transports, []string{TCP}) {
		t.Errorf("--dsn with --transport tcp: transports %q, err %v; want tcp", c.Transports, err)
	}
	c = DefaultRunConfig()
	if err := checkFlags(t, &c, "--engine", "sqlite"); err != nil || c.Transports != nil {
		t.Errorf("--engine sqlite: transports %q, err %v; want none", c.Transports, err)
	}
	c = DefaultRunConfig()
	if err := checkFlags(t, &c, "--engine", "sqlite", "--monitor", "sysmon"); err == nil ||
		!strings.Contains(err.Error(), "-monitor:") {
		t.Errorf("--engine sqlite --monitor sysmon: %v; want --monitor refused", err)
	}
}
