package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/workload/pages"
	"github.com/numalab/numalab/internal/workload/sqlscript"
)

// pagesSettings are run pages' flags on the fields of c, the scripts'
// (run sql's, sqlscript's ScriptSettings) where c has scripts.
func pagesSettings(c *pages.RunConfig) cliflag.Settings {
	ss := cliflag.Settings{cliflag.Optional(cliflag.Str("engine", &c.Engine)), cliflag.Optional(cliflag.Str("db", &c.DB)), cliflag.Int("cpu", &c.CPU), cliflag.Int("pairs", &c.Pairs), cliflag.Duration("cell", &c.Cell),
		cliflag.Int("repeats", &c.Repeats), cliflag.Optional(cliflag.Duration("repeat-within", &c.RepeatWithin)), cliflag.Optional(cliflag.Float("ghz", &c.GHz)),
		cliflag.Optional(cliflag.Int64("probe-run", &c.ProbeRun)), cliflag.Float("tolerance", &c.Tolerance)}
	if c.Script != nil {
		ss = append(ss, c.Script.ScriptSettings()...)
	}
	return ss
}

// pagesFlags parses run pages' command line into a checked
// configuration and the store.
func pagesFlags(e *env, args []string) (c pages.RunConfig, storePath string, done bool, err error) {
	c = pages.DefaultRunConfig()
	fs := cliflag.New(e.stderr, "run pages", helpText("run-pages"))
	fs.String("engine", "", "`engine` whose data memory is mapped in both page sizes: sqlite (its image; \"\" too), postgres (shared buffers, huge_pages), mariadb (buffer pool, large pages)")
	fs.String("db", c.DB, "tpcc SQLite `file` (run oltp --engine sqlite loads one); warehouse 1 is read; sqlite only")
	fs.Int("cpu", c.CPU, "`CPU` the cells and chains run on (-1: the machine's first)")
	fs.Int("pairs", c.Pairs, "pairs of cells, one in 4 KiB pages and one in 2 MiB, 1 to 1000")
	fs.Duration("cell", c.Cell, "each cell's length, 10ms to 1h")
	fs.Int("repeats", c.Repeats, "off-speed cells run again at the end, 0 to two a pair")
	fs.Duration("repeat-within", 0, "leave out a repeat that would end later than this after the start (0: no bound)")
	fs.Float64("ghz", 0, "core clock of the points (0: the memory probe's, --probe-run)")
	fs.Int64("probe-run", 0, "memory probe `run` whose clock the points are at (0: the store's newest)")
	fs.Float64("tolerance", c.Tolerance, "how far off its median the speed sentinel may read before the cells beside it are left out")
	sc := sqlscript.DefaultRunConfig()
	scripts := sc.ScriptSettings()
	scripts.Define(fs)
	sp := cliflag.Store(fs)
	done, bad, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return c, "", true, err
	}
	bad = append(bad, pagesSettings(&c).Apply(fs, true)...)
	bad = append(bad, scripts.Apply(fs, true)...)
	if c.Engine != "" && c.Engine != "sqlite" && !cliflag.Given(fs, "db") {
		c.DB = "" // a server's data is its own: no SQLite file to name
	}
	for _, name := range []string{"script", "builtin", "define", "init", "scale"} {
		if cliflag.Given(fs, name) {
			sc.Engine, c.Script = c.Engine, &sc
		}
	}
	if err := errors.Join(append(bad, c.Check())...); err != nil {
		return c, *sp, false, err
	}
	return c, *sp, false, c.CheckScripts()
}

func runPages(ctx context.Context, e *env, args []string) error {
	c, storePath, done, err := pagesFlags(e, args)
	if done || err != nil {
		return err
	}
	return runPagesConfig(ctx, e, c, storePath)
}

// runPagesConfig runs a checked configuration and stores the fit; with
// Ctrl-C what was measured is fitted and stored.
func runPagesConfig(ctx context.Context, e *env, c pages.RunConfig, storePath string) error {
	machine, err := topo.FromSysfs("/")
	if err != nil {
		return fmt.Errorf("reading this machine's topology: %w", err)
	}
	ghz, err := c.Resolve(machine, storePath)
	if err != nil {
		return err
	}
	rec, err := startRun(ctx, e.withArgs(pagesSettings(&c).Argv("run", "pages", "--store", storePath)), storePath, calib.RunFit, c)
	if err != nil {
		return err
	}
	f, err := pages.Run(ctx, c, machine, ghz, e.stdout)
	headline := ""
	if f != nil {
		err, headline = errors.Join(err, rec.Add(calib.KindMeasuredFit.Of(*f))), f.Headline()
	}
	return finishRun(e, rec, err, headline, false, nil)
}
