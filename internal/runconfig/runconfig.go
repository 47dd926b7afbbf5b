// Package runconfig is the part of a run command's configuration that
// every workload shares ('numalab run oltp', tpch, report, insert, null,
// sql): the engine and its database, the seed, each cell's window and
// warm-up, the repetitions and the pacing, with their flags (Settings)
// and their checks (Check), each defined here once. A workload's RunConfig
// embeds Common, so that its stored configuration keeps these fields at
// its top level, under one spelling.
//
// It does not hold what only some workloads have (stream counts,
// placements, DOPs, the data node, monitoring): their meaning differs from
// one workload to the next.
package runconfig

import (
	"errors"
	"strconv"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/setting"
	"github.com/numalab/numalab/internal/sweep"
)

// Common is what every run command's configuration holds; it is stored
// with the run.
type Common struct {
	Engine string `toml:"engine" json:"engine"`
	// DSN is the server's as given (--dsn), to connect with: it may hold
	// a password, so it is never stored. StoredDSN is what is stored: the
	// DSN with its password hidden (Check sets it).
	DSN       string `toml:"dsn" json:"-"`
	StoredDSN string `toml:"-" json:"dsn,omitempty"`
	// ConnectTimeout bounds connecting to the server (0:
	// engine.Options.ConnectTimeout's default).
	ConnectTimeout time.Duration `toml:"connect_timeout" json:"connect_timeout,omitempty"`
	// DB is an embedded engine's database file; "" for a server (and in
	// run null, which has none).
	DB string `toml:"db" json:"db,omitempty"`
	// Seed seeds the data a workload loads and its streams' random
	// numbers, and paces the cells' arrivals.
	Seed     int64         `toml:"seed" json:"seed"`
	Duration time.Duration `toml:"duration" json:"duration_ns"` // each cell's measured window
	Warmup   time.Duration `toml:"warmup" json:"warmup_ns"`     // before each cell's window
	// Repeat runs every cell that many times; 0, in a run stored before
	// run report had repeats, is once.
	Repeat int `toml:"repeat" json:"repeat"`
	// Load paces the cells (think time, arrival rate) or asks for a load
	// curve (run oltp, run sql); the zero value runs closed loops.
	sweep.Load
}

// Repeats is how many times every cell runs: Repeat, once when 0.
func (c Common) Repeats() int { return max(c.Repeat, 1) }

// Check refuses what no workload takes, naming the flag at fault: a
// window that is not positive, a negative warm-up, repetitions below 1,
// pacing that does not hold together (sweep.Load.Check). It stores the
// DSN with its password hidden (StoredDSN).
func (c *Common) Check() error {
	var errs []error
	c.StoredDSN = result.Redact(c.DSN)
	if c.Duration <= 0 {
		errs = append(errs, cliflag.Bad("duration", c.Duration.String(), "is not positive: want e.g. 10s"))
	}
	if c.Warmup < 0 {
		errs = append(errs, cliflag.Bad("warmup", c.Warmup.String(), "is negative: want e.g. 2s or 0s"))
	}
	if c.Repeat < 1 {
		errs = append(errs, cliflag.Bad("repeat", strconv.Itoa(c.Repeat), "is not a positive count"))
	}
	if err := c.Load.Check(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// CheckEngine refuses, for a command that takes every engine of the
// registry, an engine it lacks, a DSN for an embedded engine, a database
// file for a server (serverData says where a server's data is instead),
// and a --db that is no file name (cliflag.CheckFileName: a sweep file's,
// which no flag check saw).
func (c Common) CheckEngine(serverData string) []error {
	var errs []error
	spec, ok := engine.Lookup(c.Engine)
	if !ok {
		errs = append(errs, cliflag.Bad("engine", c.Engine, "is not an engine: want "+engine.List(nil)))
	}
	if c.DSN != "" && !spec.Server {
		errs = append(errs, cliflag.Bad("dsn", result.Redact(c.DSN), "is for --engine "+engine.List(engine.IsServer)))
	}
	if c.DB != "" && spec.Server {
		errs = append(errs,
			cliflag.Bad("db", result.Redact(c.DB), "is for --engine "+engine.List(engine.IsEmbedded)+" ("+serverData+")"))
	}
	if err := cliflag.CheckFileName("db", c.DB); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// NoCurve refuses a load curve or a monitoring run's paced load (Load's
// own fields) in a configuration whose command has neither (cmd: "run
// insert"), as a sweep file can set them.
func (c Common) NoCurve(cmd string) error {
	if c.Curve || len(c.CurveAt) > 0 || c.KneeFactor != 0 || c.MonitorLoad != 0 {
		return setting.Errorf("curve",
			"%s has no load curve and no --monitor (leave out curve, curve_at, knee_factor and monitor_load)", cmd)
	}
	return nil
}

// Settings are the flags of Common's fields, each defined here once: its
// name, help, range, default, how its value reaches c and how it is
// spelled back (cliflag.Setting). A command places them in the order of
// its command line, and may say in its own words what a flag means to it
// (Setting.Flag).
type Settings struct {
	// Engine, DSN, ConnectTimeout and DB are checked when the
	// configuration is (the command's Check); Checked are the same
	// four checked against the registry as they are set
	// (cliflag.EngineSettings), for a command that loads its own data.
	Engine, DSN, ConnectTimeout, DB cliflag.Setting
	Checked                         cliflag.Settings
	Seed, Duration, Warmup, Repeat  cliflag.Setting
	// RepeatAs is Repeat's setting under another flag name (run tpch's
	// --repeats).
	RepeatAs func(name string) cliflag.Setting
	// Pacing are --think, --think-dist, --rate and --arrivals; Load adds
	// the load curve's --curve, --curve-at and --knee-factor.
	Pacing, Load cliflag.Settings
}

// Settings are c's settings: engines lists the engines the command takes
// ("" for every engine of the registry), dbDefault names --db's default.
func (c *Common) Settings(engines, dbDefault string) Settings {
	// A run report stored before repeats has 0: it ran once.
	repeat := func(name string) cliflag.Setting {
		return cliflag.InRange(cliflag.Field(name, &c.Repeat, strconv.Atoi,
			func(n int) string { return strconv.Itoa(max(n, 1)) }), 1, 1000).
			Flag("repetitions of every cell, 1 to 1000")
	}
	return Settings{
		Engine:         cliflag.Str("engine", &c.Engine).Flag(cliflag.EngineUsage(engines)),
		DSN:            cliflag.DSN(&c.DSN).Flag(cliflag.DSNUsage),
		ConnectTimeout: cliflag.ConnectTimeoutSetting(&c.ConnectTimeout),
		DB:             cliflag.Optional(cliflag.Str("db", &c.DB)).Flag(cliflag.DBUsage(dbDefault)),
		Checked:        cliflag.EngineSettings(&c.Engine, &c.DSN, &c.ConnectTimeout, &c.DB, engines, dbDefault),
		Seed:           cliflag.Int64("seed", &c.Seed).Flag("seed for the streams' random numbers"),
		Duration: cliflag.DurationIn("duration", &c.Duration, 10*time.Millisecond, 24*time.Hour).
			Flag("measured window of each cell, 10ms to 24h"),
		Warmup: cliflag.DurationIn("warmup", &c.Warmup, 0, time.Hour).
			Flag("warm-up before each cell's window, excluded from every figure, up to 1h"),
		Repeat: repeat("repeat"), RepeatAs: repeat,
		Pacing: cliflag.Pacing(&c.Pacing),
		Load:   cliflag.Load(&c.Load),
	}
}
