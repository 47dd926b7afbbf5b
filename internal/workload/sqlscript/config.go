package sqlscript

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/pgscript"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/runconfig"
	"github.com/numalab/numalab/internal/setting"
	"github.com/numalab/numalab/internal/sweep"
)

// RunKind is the kind of a 'numalab run sql' run in the store.
const RunKind = result.RunSQL

// RunConfig is a script sweep ('numalab run sql'); it is stored with the
// run (the scripts' texts too, as KindScripts).
type RunConfig struct {
	// Common are the engine, its database (a --db file, or a server),
	// the seed of the streams' random draws (:random_seed), the windows,
	// the repeats and the pacing or load curve.
	runconfig.Common
	// Scripts are --script FILE[@WEIGHT], Builtins --builtin
	// NAME[@WEIGHT], Defines --define NAME=VALUE, each as given.
	Scripts  []string `json:"scripts,omitempty"`
	Builtins []string `json:"builtins,omitempty"`
	Defines  []string `json:"defines,omitempty"`
	// Init is SQL (a script) run once before the sweep on a fresh --db
	// file or the managed server; "" for none.
	Init    string `json:"init,omitempty"`
	Scale   int    `json:"scale"`
	Streams []int  `json:"streams"`
	// DOPs are the degrees of parallelism of one statement to sweep
	// (engine.Spec.Parallel: DuckDB's and PostgreSQL's; 1 elsewhere),
	// checked against the engine as --dop is set (cliflag.DOPs).
	DOPs       []int    `json:"dop"`
	Placements []string `json:"placements"`
	Spread     bool     `json:"spread"`
	// MaxErrors is how many failed transactions the run tolerates, over
	// its cells' windows: one more stops it. MaxTries is how many times a
	// transaction that failed with a serialization failure or deadlock is
	// tried.
	MaxErrors int `json:"max_errors"`
	MaxTries  int `json:"max_tries"`
	// Trace is how many transactions each stream records (start, end,
	// script, ok); 0: none.
	Trace int `json:"trace,omitempty"`
	// Monitor names the monitoring facilities whose cost --monitor
	// measures, off against on; AllowSettings lets it set them in
	// numalab's sessions on a --dsn server.
	Monitor       []string `json:"monitor,omitempty"`
	AllowSettings bool     `json:"allow_settings,omitempty"`
}

// DefaultRunConfig is 'numalab run sql' without flags (a script is still
// to be named).
func DefaultRunConfig() RunConfig {
	return RunConfig{Common: runconfig.Common{Engine: "postgres", Seed: 1, Duration: 10 * time.Second,
		Warmup: 2 * time.Second, Repeat: 1},
		Scale: 1, Streams: []int{1, 2, 4}, DOPs: []int{1}, Placements: []string{""}, Spread: true, MaxTries: 1}
}

func bad(flag, v, want string) error { return fmt.Errorf("-%s: %q %s", flag, v, want) }

// Check validates the configuration, but for the scripts themselves
// (ParseScripts) and the files on disk (CheckFiles).
func (c *RunConfig) Check() error {
	var errs []error
	spec, _, ok := dialectOf(c.Engine)
	switch {
	case !ok:
		errs = append(errs, bad("engine", c.Engine, "is not an engine of run sql: want "+Engines()))
	case spec.Server && c.DB != "":
		errs = append(errs, bad("db", c.DB, "is for --engine "+engine.List(engine.IsEmbedded)+
			" ("+spec.Title+" takes --dsn, or none for numalab's own server)"))
	case !spec.Server && c.DSN != "":
		errs = append(errs, bad("dsn", result.Redact(c.DSN), "is for a server engine ("+spec.Title+" takes --db FILE)"))
	case !spec.Server && c.DB == "":
		errs = append(errs, setting.New("db", "no database file given: "+
			"want --db FILE (an existing database, or a new one with --init FILE)"))
	case c.DSN != "" && c.Init != "":
		errs = append(errs, bad("init", c.Init, "is for numalab's own server or a new --db file: numalab writes nothing "+
			"into a --dsn server's database but what the scripts do (run the SQL yourself first)"))
	}
	if len(c.Scripts)+len(c.Builtins) == 0 {
		errs = append(errs, setting.New("script", "no script given: want --script FILE[@WEIGHT] or "+
			"--builtin NAME[@WEIGHT] (tpcb-like, simple-update or select-only), once or more"))
	}
	for _, d := range c.Defines {
		if _, _, err := pgscript.ParseDefine(d); err != nil {
			errs = append(errs, setting.Wrap("define", err))
		}
	}
	if c.Scale < 1 {
		errs = append(errs,
			bad("scale", strconv.Itoa(c.Scale), "is not a positive scale: want 1 or more (the :scale variable)"))
	}
	if len(c.Streams) == 0 || slices.Min(c.Streams) < 1 {
		errs = append(errs, bad("streams", fmt.Sprint(c.Streams), "needs counts of 1 or more: want e.g. 1,2,4"))
	} else if why := sweep.TooManyStreams(c.Streams, runtime.NumCPU()); why != "" {
		errs = append(errs, bad("streams", fmt.Sprint(c.Streams), why))
	}
	if len(c.Placements) == 0 {
		c.Placements = []string{""}
	}
	if len(c.DOPs) == 0 {
		c.DOPs = []int{1}
	}
	if c.MaxErrors < 0 {
		errs = append(errs,
			bad("max-errors", strconv.Itoa(c.MaxErrors), "is negative: want 0 (stop at the first failure) or more"))
	}
	if c.MaxTries < 1 {
		errs = append(errs, bad("max-tries", strconv.Itoa(c.MaxTries), "is not a positive count: want 1 (no retry) or more"))
	}
	return errors.Join(append(errs, c.Common.Check())...)
}

// CheckFiles checks the database file against --init: a fresh file for
// --init, an existing one without it.
func (c *RunConfig) CheckFiles() error {
	spec, _, ok := dialectOf(c.Engine)
	if !ok || spec.Server || c.DB == "" {
		return nil
	}
	_, err := os.Stat(c.DB)
	switch {
	case err == nil && c.Init != "":
		return bad("db", c.DB,
			"exists, and --init sets up a new database: name a new file, or leave out --init to run on this one")
	case errors.Is(err, os.ErrNotExist) && c.Init == "":
		return bad("db", c.DB, "does not exist: name an existing database, or add --init FILE to make this one")
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return setting.Wrap("db", err)
	}
	return nil
}

// Spec is the configuration's sweep.
func (c RunConfig) Spec() sweep.Spec {
	return sweep.Spec{Streams: c.Streams, Placements: c.Placements, DOPs: c.DOPs, Repeat: c.Repeat, DataNode: -1}
}

// Plan is the configuration's sweep plan with its cells.
func (c RunConfig) Plan(cells []sweep.Cell) sweep.Plan {
	return sweep.Plan{Cells: cells, Warmup: c.Warmup, Duration: c.Duration, Trace: c.Trace, Monitor: drive.SysMonitor("/"),
		Pace: c.Load.Pacer(c.Seed)}
}

// Script is one script of the run as it is stored: where it came from,
// its weight and its text.
type Script struct {
	Name   string `json:"name"` // the file as given, or builtin:NAME
	Weight int    `json:"weight"`
	Text   string `json:"text"`
}

// KindScripts is the stored item of a run's scripts, in the order the
// cells' types and per-statement figures number them.
const KindScripts result.Kind[[]Script] = "sql.Scripts"

// ParseScripts reads and parses every script of c, built-ins and files, before
// anything connects: each error names the file, line and column. It
// returns them in the order the cells number them (files, then
// built-ins), with their stored form.
func (c RunConfig) ParseScripts() ([]pgscript.Weighted, []Script, error) {
	var ws []pgscript.Weighted
	var stored []Script
	var errs []error
	for _, spec := range c.Scripts {
		file, weight, err := pgscript.ParseSpec(spec)
		if err != nil {
			errs = append(errs, setting.Wrap("script", err))
			continue
		}
		text, err := os.ReadFile(file)
		if err != nil {
			errs = append(errs, unreadable("script", file, err))
			continue
		}
		s, err := pgscript.Parse(file, strings.NewReader(string(text)))
		if err != nil {
			errs = append(errs, setting.Wrap("script", err))
			continue
		}
		ws = append(ws, pgscript.Weighted{Script: s, Weight: weight})
		stored = append(stored, Script{Name: file, Weight: weight, Text: string(text)})
	}
	for _, spec := range c.Builtins {
		name, weight, err := pgscript.ParseSpec(spec)
		if err != nil {
			errs = append(errs, setting.New("builtin", strings.Replace(err.Error(), "--script", "--builtin", 1)))
			continue
		}
		s, err := pgscript.Builtin(name)
		if err != nil {
			errs = append(errs, setting.Wrap("builtin", err))
			continue
		}
		ws = append(ws, pgscript.Weighted{Script: s, Weight: weight})
		stored = append(stored, Script{Name: s.Name, Weight: weight})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return ws, stored, nil
}

// ParseInit reads and parses --init's file, nil when there is none.
func (c RunConfig) ParseInit() (*pgscript.Script, error) {
	if c.Init == "" {
		return nil, nil
	}
	f, err := os.Open(c.Init)
	if err != nil {
		return nil, unreadable("init", c.Init, err)
	}
	defer f.Close()
	s, err := pgscript.Parse(c.Init, f)
	if err != nil {
		return nil, setting.Wrap("init", err)
	}
	return s, nil
}

// options are the scripts' options on engine d, without Observe.
func (c RunConfig) options(d dialect) pgscript.Options {
	defs := map[string]string{}
	for _, def := range c.Defines {
		name, value, _ := pgscript.ParseDefine(def)
		defs[name] = value
	}
	return pgscript.Options{Placeholders: d.placeholders, Seed: uint64(c.Seed), Scale: int64(c.Scale), Defines: defs,
		MaxTries: c.MaxTries, Retryable: d.retryable}
}

// unreadable says which file of a flag could not be read, and why.
func unreadable(flag, file string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("-%s: cannot read %s: %w", flag, file, err)
}
