package null

import (
	"flag"
	"runtime"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/sweep"
)

// Settings are run null's flags on the fields of c, each defined once: its
// name, help, range and default (c's value when they are defined), how its
// value reaches c, and how c is spelled back as the command line that
// re-runs it, in that line's order (cliflag.Settings). A server's
// transport, pairing and protocol are spelled out for it alone.
func (c *RunConfig) Settings() cliflag.Settings {
	pg := func() bool { spec, _ := engine.Lookup(c.Engine); return spec.Server }
	r := c.Common.Settings(Engines(), "")
	ss := cliflag.Settings{
		r.Engine, r.DSN, r.ConnectTimeout,
		cliflag.When(cliflag.List("transport", ",", &c.Transports), pg).Flag("server transports: unix, tcp or unix,tcp"),
		cliflag.When(cliflag.List("pairing", ",", &c.Pairings), pg).Flag("client/backend pairings to run"),
		cliflag.When(cliflag.Str("protocol", &c.Protocol), pg).Flag("how the server call is sent: prepared or simple"),
		cliflag.When(cliflag.Str("call", &c.Call), func() bool { return PointSelectOn(c.Engine) }).Flag(
			"what a round trip asks: select1 (SELECT 1) or point-select (sysbench's oltp_point_select on numalab's " +
				"sbtest1; --engine mariadb, --protocol prepared)"),
		cliflag.Ints("streams", &c.Streams).Flag("stream counts to sweep, e.g. 1,2,4"),
		r.Duration, r.Warmup, r.Repeat.Flag("repetitions of every cell, interleaved, 1 to 1000"),
		cliflag.Monitor(&c.Monitor, false), cliflag.AllowSettings(&c.AllowSettings),
		cliflag.MonitorLoad(&c.MonitorLoad, &c.Monitor),
	}
	return append(ss, r.Pacing...)
}

// MonitorRequest is c's --monitor request.
func (c RunConfig) MonitorRequest() monitor.Request {
	return monitor.Request{Names: c.Monitor, Engine: c.Engine, DSN: c.DSN != "", AllowSettings: c.AllowSettings}
}

// CheckFlags checks and completes c as the flags of fs set it
// (Settings.Apply): the stream counts against this machine's CPUs, a
// --dsn server's transport unless --transport is given (none for SQLite),
// --monitor's request and defaults (cliflag.CheckMonitor), then Check.
func (c *RunConfig) CheckFlags(fs *flag.FlagSet) []error {
	var errs []error
	if why := sweep.TooManyStreams(c.Streams, runtime.NumCPU()); why != "" {
		errs = append(errs, cliflag.Bad("streams", cliflag.FormatInts(c.Streams), why))
	}
	if c.DSN != "" && !cliflag.Given(fs, "transport") {
		c.Transports = []string{DSNTransport(c.Engine, c.DSN)}
	}
	spec, _ := engine.Lookup(c.Engine)
	if !spec.Server {
		c.Transports = nil
	}
	errs = append(errs, cliflag.CheckMonitor(fs, len(c.Monitor) > 0 && spec.Server, c.MonitorRequest(), c.Paced(),
		"--rate or --think", &c.Repeat, &c.MonitorLoad)...)
	return append(errs, c.Check())
}

// Argv is the one command line that gives c, 'numalab run null' with every
// setting spelled out, so that a stored command re-runs the same cells
// whatever the defaults become (the password of a DSN is hidden).
func (c RunConfig) Argv() []string { return c.Settings().Argv("run", "null") }
