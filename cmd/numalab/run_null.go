package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/workload/null"
)

func nullFlags(e *env, args []string) (cfg null.RunConfig, storePath string, asJSON, done bool, err error) {
	cfg = null.DefaultRunConfig()
	fs := cliflag.New(e.stderr, "run null", helpText("run-null"))
	eng := fs.String("engine", cfg.Engine, "engine: postgres or sqlite")
	dsn := fs.String("dsn", "", "PostgreSQL `DSN` to use (default: a throwaway server numalab starts)")
	transport := fs.String("transport", strings.Join(cfg.Transports, ","), "PostgreSQL transports: unix, tcp or unix,tcp")
	pairing := fs.String("pairing", strings.Join(cfg.Pairings, ","), "client/backend pairings to run")
	protocol := fs.String("protocol", cfg.Protocol, "PostgreSQL call: prepared or simple")
	streams := fs.String("streams", cliflag.FormatInts(cfg.Streams), "stream counts to sweep, e.g. 1,2,4")
	dur := fs.Duration("duration", cfg.Duration, "measured window of each cell")
	warm := fs.Duration("warmup", cfg.Warmup, "warm-up before each cell's window, excluded from every figure")
	repeat := fs.Int("repeat", cfg.Repeat, "repetitions of every cell, interleaved")
	sp := storeFlag(fs)
	js := fs.Bool("json", false, "print the cells as JSON on stdout at the end (the table goes to stderr)")
	if done, err = cliflag.Parse(e.stdout, fs, args); done {
		return cfg, "", false, true, err
	}
	if err = cliflag.NoArgs(fs); err != nil {
		return cfg, "", false, true, err
	}
	var errs []error
	cfg.Engine, cfg.DSN, cfg.Protocol, cfg.Duration, cfg.Warmup, cfg.Repeat = *eng, *dsn, *protocol, *dur, *warm, *repeat
	cfg.Transports, cfg.Pairings = strings.Split(*transport, ","), strings.Split(*pairing, ",")
	if cfg.DSN != "" && !cliflag.Given(fs, "transport") {
		cfg.Transports = []string{null.DSNTransport(cfg.DSN)}
	}
	if cfg.Engine == "sqlite" {
		cfg.Transports = nil
	}
	if cfg.Streams, err = cliflag.ParseInts("streams", *streams, 1); err != nil {
		errs = append(errs, err)
	}
	if err := cfg.Check(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, "", false, true, err
	}
	return cfg, *sp, *js, false, nil
}

// nullArgv is the one command line that gives cfg, every setting spelled
// out (the password of a DSN is hidden).
func nullArgv(cfg null.RunConfig) []string {
	a := []string{"run", "null", "--engine", cfg.Engine}
	if cfg.DSN != "" {
		a = append(a, "--dsn", result.Redact(cfg.DSN))
	}
	if cfg.Engine == "postgres" {
		a = append(a, "--transport", strings.Join(cfg.Transports, ","), "--pairing", strings.Join(cfg.Pairings, ","), "--protocol", cfg.Protocol)
	}
	return append(a, "--streams", cliflag.FormatInts(cfg.Streams), "--duration", cfg.Duration.String(), "--warmup", cfg.Warmup.String(),
		"--repeat", strconv.Itoa(cfg.Repeat))
}

func runNull(ctx context.Context, e *env, args []string) error {
	cfg, storePath, asJSON, done, err := nullFlags(e, args)
	if done || err != nil {
		return err
	}
	return runNullConfig(ctx, e, cfg, storePath, asJSON)
}

// runNullConfig runs a checked configuration: cells, store, sweep, render.
func runNullConfig(ctx context.Context, e *env, cfg null.RunConfig, storePath string, asJSON bool) error {
	machine, err := topo.FromSysfs("/")
	if err != nil {
		return fmt.Errorf("reading this machine's topology: %w", err)
	}
	cells, layout, matrix := cfg.Cells(machine)
	if len(cells) == 0 {
		var why []string
		for _, p := range null.Select(matrix, cfg.Pairings) {
			why = append(why, p.String())
		}
		return fmt.Errorf("-pairing: this machine offers none of %s (%s)", strings.Join(cfg.Pairings, ", "), strings.Join(why, "; "))
	}
	prog := &nullRows{progress: newProgress(e.stderr), table: e.stdout}
	if asJSON {
		prog.table = e.stderr
	}
	defer prog.Done()
	rec, err := startRun(ctx, e.withArgs(nullArgv(cfg)), storePath, null.RunKind, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(prog.table, nullRowFormat, "cell", "transport", "pairing", "cpus", "streams", "calls/s", "/stream", "p50 µs", "p95 µs", "p99 µs", "cs/s", "cs/call")
	measured, err := sweep.Run(ctx, cfg.Plan(cells), null.NewSweep(cfg, layout, matrix), rec, prog)
	if ferr := rec.Finish(err, nullHeadline(measured)); ferr != nil {
		return errors.Join(err, ferr)
	}
	if asJSON {
		if measured == nil {
			measured = []*null.Cell{}
		}
		if jerr := writeJSON(e.stdout, measured); jerr != nil {
			return errors.Join(err, jerr)
		}
	}
	return err
}

// nullRows prints a row per cell as it is stored.
type nullRows struct {
	*progress
	table io.Writer
}

const nullRowFormat = "%4v %-10v %-11v %-5v %7v %9v %9v %8v %8v %8v %9v %7v\n"

func (r *nullRows) Measured(_ sweep.Cell, c *null.Cell) {
	r.Done()
	m := &c.Cell
	cpus := strconv.Itoa(c.Pairing.Client)
	if c.Pairing.Backend >= 0 {
		cpus += "/" + strconv.Itoa(c.Pairing.Backend)
	}
	cut := ""
	switch {
	case m.Interrupted:
		cut = " (cut short)"
	case c.NoCall != "":
		cut = " (no call completed)"
	}
	us := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	fmt.Fprintf(r.table, nullRowFormat, m.Index, c.Transport, c.Pairing.Name, cpus, m.Streams, fmt.Sprintf("%.0f", m.TPS), fmt.Sprintf("%.0f", c.PerStream),
		us(m.Total.P50US), us(m.Total.P95US), us(m.Total.P99US), fmt.Sprintf("%.0f", c.CtxSwitchesPerSec), fmt.Sprintf("%.2f", c.CtxSwitchesPerCall)+cut)
}

// nullHeadline is the fastest and slowest cell, for 'numalab runs'.
func nullHeadline(cells []*null.Cell) string {
	// One figure a transport and pairing: the median over its repeats.
	order, groups := stats.Group(cells, func(c *null.Cell) string {
		name := c.Transport
		if c.Pairing.Name != c.Transport {
			name += " " + c.Pairing.Name
		}
		if c.Cell.Streams > 1 {
			name += " " + sweep.Count(c.Cell.Streams, "stream")
		}
		return name
	})
	if len(order) == 0 {
		return ""
	}
	tps := func(c *null.Cell) float64 { return c.Cell.TPS }
	hi, lo := order[0], order[0]
	for _, k := range order {
		if stats.MedianOf(groups[k], tps) > stats.MedianOf(groups[hi], tps) {
			hi = k
		}
		if stats.MedianOf(groups[k], tps) < stats.MedianOf(groups[lo], tps) {
			lo = k
		}
	}
	s := fmt.Sprintf("%s: %.0f round trips/s %s", cells[0].Cell.Engine, stats.MedianOf(groups[hi], tps), hi)
	if lo != hi {
		s += fmt.Sprintf(", %.0f %s", stats.MedianOf(groups[lo], tps), lo)
	}
	if n := len(groups[hi]); n > 1 {
		s += fmt.Sprintf(" (medians of %d repeats)", n)
	}
	return s
}
