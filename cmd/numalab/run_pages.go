package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/sentinel"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/workload/pages"
)

// pagesSettings are run pages' flags on the fields of c.
func pagesSettings(c *pages.RunConfig) cliflag.Settings {
	return cliflag.Settings{cliflag.Str("db", &c.DB), cliflag.Int("cpu", &c.CPU), cliflag.Int("pairs", &c.Pairs), cliflag.Duration("cell", &c.Cell),
		cliflag.Int("repeats", &c.Repeats), cliflag.Optional(cliflag.Duration("repeat-within", &c.RepeatWithin)), cliflag.Optional(cliflag.Float("ghz", &c.GHz)),
		cliflag.Optional(cliflag.Int64("probe-run", &c.ProbeRun)), cliflag.Float("tolerance", &c.Tolerance)}
}

func runPages(ctx context.Context, e *env, args []string) error {
	c := pages.DefaultRunConfig()
	fs := cliflag.New(e.stderr, "run pages", helpText("run-pages"))
	fs.String("db", c.DB, "tpcc SQLite `file` (run oltp --engine sqlite loads one); warehouse 1 is read")
	fs.Int("cpu", c.CPU, "`CPU` the cells and chains run on (-1: the machine's first)")
	fs.Int("pairs", c.Pairs, "pairs of cells, one in 4 KiB pages and one in 2 MiB, 1 to 1000")
	fs.Duration("cell", c.Cell, "each cell's length, 10ms to 1h")
	fs.Int("repeats", c.Repeats, "off-speed cells run again at the end, 0 to two a pair")
	fs.Duration("repeat-within", 0, "leave out a repeat that would end later than this after the start (0: no bound)")
	fs.Float64("ghz", 0, "core clock of the points (0: the memory probe's, --probe-run)")
	fs.Int64("probe-run", 0, "memory probe `run` whose clock the points are at (0: the store's newest)")
	fs.Float64("tolerance", c.Tolerance, "how far off its median the speed sentinel may read before the cells beside it are left out")
	sp := cliflag.Store(fs)
	done, bad, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return err
	}
	if err := errors.Join(append(append(bad, pagesSettings(&c).Apply(fs, true)...), c.Check())...); err != nil {
		return err
	}
	return runPagesConfig(ctx, e, c, *sp)
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
	mem, err := sentinel.MemoryFor(machine)
	if err != nil {
		fmt.Fprintf(e.stdout, "speed sentinel: the core reference alone: %v\n", err)
	} else {
		defer mem.Free()
	}
	fmt.Fprintf(e.stdout, "%d pairs of %v cells on CPU %d at %.2f GHz, the database image in 4 KiB then 2 MiB pages, each transaction run cold then hot (the same inputs again), a random chain in memory mapped alike and one in the caches timed before and after; up to %d off-speed cells repeated\n",
		c.Pairs, c.Cell, c.CPU, ghz, c.Repeats)
	rec, err := startRun(ctx, e.withArgs(pagesSettings(&c).Argv("run", "pages", "--store", storePath)), storePath, calib.RunFit, c)
	if err != nil {
		return err
	}
	f, err := pages.Measure(ctx, c, ghz, pages.CacheChainBytes(machine), mem, func(fc calib.FitCell) {
		fmt.Fprintf(e.stdout, "  %-28s %8.0f tps  %6.1f ns  %s\n", fc.Label, fc.TPSPerCore, fc.ChainNS, time.Duration(fc.Seconds*float64(time.Second)).Round(time.Millisecond))
	})
	headline := ""
	if f != nil {
		err = errors.Join(err, rec.Add(calib.KindMeasuredFit.Of(*f)))
		headline = f.Headline()
		for _, l := range f.Lines() {
			fmt.Fprintln(e.stdout, l)
		}
	}
	return finishRun(e, rec, err, headline, false, nil)
}
