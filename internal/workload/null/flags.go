package null

import (
	"time"

	"github.com/numalab/numalab/internal/cliflag"
)

// Settings are run null's flags on the fields of c, each defined once: its
// name, help, range and default (c's value when they are defined), how its
// value reaches c, and how c is spelled back as the command line that
// re-runs it, in that line's order (cliflag.Settings). A server's
// transport, pairing and protocol are spelled out for it alone.
func (c *RunConfig) Settings() cliflag.Settings {
	pg := func() bool { return c.Engine != "sqlite" }
	ss := cliflag.Settings{
		cliflag.Str("engine", &c.Engine).Flag("engine: postgres, mariadb or sqlite"),
		cliflag.DSN(&c.DSN).Flag("PostgreSQL or MariaDB/MySQL `DSN` to use (default: a throwaway server numalab starts)"),
		cliflag.ConnectTimeoutSetting(&c.ConnectTimeout),
		cliflag.When(cliflag.List("transport", ",", &c.Transports), pg).Flag("server transports: unix, tcp or unix,tcp"),
		cliflag.When(cliflag.List("pairing", ",", &c.Pairings), pg).Flag("client/backend pairings to run"),
		cliflag.When(cliflag.Str("protocol", &c.Protocol), pg).Flag("how the server call is sent: prepared or simple"),
		cliflag.When(cliflag.Str("call", &c.Call), func() bool { return c.Engine == "mariadb" }).Flag("what a round trip asks: select1 (SELECT 1) or point-select (sysbench's oltp_point_select on numalab's sbtest1; --engine mariadb, --protocol prepared)"),
		cliflag.Ints("streams", &c.Streams).Flag("stream counts to sweep, e.g. 1,2,4"),
		cliflag.DurationIn("duration", &c.Duration, 10*time.Millisecond, 24*time.Hour).Flag("measured window of each cell, 10ms to 24h"),
		cliflag.DurationIn("warmup", &c.Warmup, 0, time.Hour).Flag("warm-up before each cell's window, excluded from every figure, up to 1h"),
		cliflag.IntIn("repeat", &c.Repeat, 1, 1000).Flag("repetitions of every cell, interleaved, 1 to 1000"),
		cliflag.Monitor(&c.Monitor, false), cliflag.AllowSettings(&c.AllowSettings), cliflag.MonitorLoad(&c.MonitorLoad, &c.Monitor),
	}
	return append(ss, cliflag.Pacing(&c.Pacing)...)
}
