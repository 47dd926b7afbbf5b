package transtats

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

// TestCheckFlagsNamesArrivalRate: run report's pacing errors name its
// open-loop flag, --arrival-rate, never --rate (the data's shape here).
func TestCheckFlagsNamesArrivalRate(t *testing.T) {
	c := DefaultRunConfig()
	fs := flag.NewFlagSet("run report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.Settings().Define(fs)
	if err := fs.Parse([]string{"--arrival-rate", "-5", "--arrivals", "uniform"}); err != nil {
		t.Fatal(err)
	}
	err := errors.Join(append(c.Settings().Apply(fs, true), c.CheckFlags(fs)...)...)
	if err == nil || !strings.Contains(err.Error(), `-arrival-rate: "-5"`) || strings.Contains(err.Error(), "\n-rate") ||
		strings.Contains(err.Error(), "--rate") {
		t.Errorf("--arrival-rate -5: %v; want it refused by --arrival-rate's name", err)
	}
	if c.Rate != DefaultRate {
		t.Errorf("--arrival-rate set the data's rate: %d", c.Rate)
	}
}
