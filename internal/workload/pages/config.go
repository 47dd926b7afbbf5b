package pages

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/setting"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/workload/sqlscript"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// RunConfig is one run of the experiment, as 'numalab run pages' takes
// it and stores it with the run (the JSON names are those eval stored
// before the experiment had a command).
type RunConfig struct {
	// Engine is whose memory the data is in: "sqlite" (or "": DB's image
	// in memory numalab maps), or a server engine of serverPages (its own
	// buffers in a managed server of each page size, loaded with W=1).
	Engine string `json:"engine,omitempty"`
	// DB is the tpcc-ro SQLite file (any number of warehouses; the
	// transactions read warehouse 1), or with Script the scripts'
	// database; SQLite only.
	DB string `json:"db"`
	// CPU is the CPU the cells and chains run on; -1, the machine's
	// first.
	CPU int `json:"cpu"`
	// Pairs of cells, each Cell long: one in 4 KiB pages, one in 2 MiB.
	Pairs int           `json:"pairs"`
	Cell  time.Duration `json:"cell_ns"`
	// Repeats is how many off-speed cells may run again; RepeatWithin,
	// when not 0, leaves out a repeat that would end later than that
	// after the start.
	Repeats      int           `json:"repeats"`
	RepeatWithin time.Duration `json:"repeat_within_ns,omitempty"`
	// GHz is the core clock the points are at, within the bounds model
	// applies to a clock; 0: the clock of the memory probe ProbeRun in the
	// store (0: its newest). A ProbeRun given with GHz must exist too.
	GHz      float64 `json:"ghz,omitempty"`
	ProbeRun int64   `json:"probe_run"`
	// Tolerance is how far off its median the speed sentinel's core
	// reading may be before the cells beside it are left out.
	Tolerance float64 `json:"sentinel_tolerance"`
	// Script, when not nil, is the user's scripts, run in the cells in
	// place of tpcc-ro, as run sql takes them (their settings only:
	// --script, --builtin, --define, --init, --scale; the seed is run
	// sql's default): on a server engine both servers set up by --init,
	// on SQLite read-only on DB's image (no --init).
	Script *sqlscript.RunConfig `json:"script,omitempty"`
}

// workload is the workload the cells run, as the fit names it: tpcc-ro,
// or the user's scripts (calib.ScriptsWorkload).
func (c RunConfig) workload() string {
	if c.Script == nil {
		return "tpcc-ro"
	}
	return calib.ScriptsWorkload(c.Script.Scripts, c.Script.Builtins)
}

// CheckScripts reads and parses the scripts and --init (sqlscript's
// ParseScripts and ParseInit) before anything runs; nil without scripts.
func (c RunConfig) CheckScripts() error {
	if c.Script == nil {
		return nil
	}
	_, _, err := c.Script.ParseScripts()
	if err == nil {
		_, err = c.Script.ParseInit()
	}
	return err
}

// sqliteInit says why run pages refuses --init on SQLite.
const sqliteInit = "is for --engine postgres or mariadb: on SQLite the cells read an image of --db, read-only, " +
	"so the database is made first ('numalab run sql --engine sqlite --db FILE --init FILE' makes one)"

// DefaultRunConfig is eval's five-minute plan's: 4 pairs of 650 ms cells.
func DefaultRunConfig() RunConfig {
	return RunConfig{DB: tpcc.DefaultPath("sqlite", 1), CPU: -1, Pairs: 4, Cell: 650 * time.Millisecond,
		Repeats: 2, Tolerance: 0.15}
}

// engine is c's engine, "sqlite" for "".
func (c RunConfig) engine() string { return cmp.Or(c.Engine, "sqlite") }

// Time is what a run of c takes as planned: its cells, each followed by
// a timing of its memory's chain, six more timings (every chain before
// the first pair and after the last), the warm-up of each image (a
// quarter cell), and the copies and sentinel samples (two seconds). It
// leaves the repeats out.
func (c RunConfig) Time() time.Duration {
	return time.Duration(2*c.Pairs)*(c.Cell+ChaseTime) + 6*ChaseTime + c.Cell/2 + 2*time.Second
}

// Check refuses values no run could use, naming the flag.
func (c RunConfig) Check() error {
	var bad cliflag.Errs
	bad = append(bad, checkEngine(c.Engine)...)
	if c.Script != nil {
		bad.BadIf(c.engine() == "sqlite" && c.Script.Init != "", "init", c.Script.Init, sqliteInit)
		bad.BadIf(len(c.Script.Scripts)+len(c.Script.Builtins) == 0, "script", "",
			"names no script (expected --script FILE[@WEIGHT] or --builtin NAME[@WEIGHT])")
		bad.BadIf(c.Script.Scale < 1, "scale", fmt.Sprint(c.Script.Scale),
			"is not a positive scale: want 1 or more (the :scale variable)")
	}
	bad.BadIf(c.engine() != "sqlite" && c.DB != "", "db", c.DB, "names a SQLite file, and --engine "+c.engine()+
		" loads its own database into its own servers (leave --db out)")
	bad.BadIf(c.engine() == "sqlite" && c.DB == "", "db", c.DB,
		"names no file (expected a tpcc SQLite file; numalab run oltp --engine sqlite loads one)")
	bad.BadIf(c.CPU < -1, "cpu", fmt.Sprint(c.CPU), "is not a CPU number (or -1 for the machine's first)")
	bad.BadIf(c.Pairs < 1 || c.Pairs > 1000, "pairs", fmt.Sprint(c.Pairs), "is not 1 to 1000 pairs of cells")
	bad.BadIf(c.Cell < 10*time.Millisecond || c.Cell > time.Hour, "cell", c.Cell.String(), "is not a cell of 10ms to 1h")
	// --repeats is bounded by --pairs: judged only against pairs that
	// pass, so that a bad --pairs is not blamed on it.
	bad.BadIf(c.Repeats < 0 || c.Pairs >= 1 && c.Pairs <= 1000 && c.Repeats > c.Pairs*2, "repeats",
		fmt.Sprint(c.Repeats), fmt.Sprintf("is not 0 to %d repeats (two cells a pair)", c.Pairs*2))
	bad.BadIf(c.RepeatWithin < 0, "repeat-within", c.RepeatWithin.String(), "is not a duration (0 for no bound)")
	if _, why := model.Implausible(nil, []float64{c.GHz}, nil); c.GHz != 0 && why != "" || math.IsNaN(c.GHz) {
		// The bounds model applies to a clock: a fit stored at a clock no
		// machine has would be refused by every model command reading it.
		bad.BadIf(true, "ghz", fmt.Sprint(c.GHz), "is not "+cmp.Or(why, "a clock")+" (0 for the memory probe's)")
	}
	bad.BadIf(c.ProbeRun < 0, "probe-run", fmt.Sprint(c.ProbeRun),
		"is not a run ID (0 for the store's newest memory probe)")
	bad.BadIf(!(c.Tolerance > 0 && c.Tolerance < 1), "tolerance", fmt.Sprint(c.Tolerance),
		"is not a fraction above 0 and below 1 (0.15 is 15%)")
	return errors.Join(bad...)
}

// loadHint says how to make the file --db wants.
const loadHint = "expected a tpcc SQLite file; numalab run oltp --engine sqlite --warehouses 1 loads one"

// checkDB refuses, naming what is wrong with it, a --db that is no
// SQLite file: missing, unreadable, a directory, empty, or another kind of
// file by its first bytes.
func checkDB(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return setting.Errorf("db", "%s: no such file (%s)", path, loadHint)
	case err != nil:
		return setting.Errorf("db", "%w (%s)", err, loadHint)
	case st.IsDir():
		return setting.Errorf("db", "%s is a directory (%s)", path, loadHint)
	case st.Size() == 0:
		return setting.Errorf("db", "%s is empty (%s)", path, loadHint)
	}
	name, err := engine.FileEngine(path)
	switch {
	case errors.Is(err, engine.ErrUnknownFile):
		return setting.Errorf("db", "%s is not an SQLite database by its first bytes (%s)", path, loadHint)
	case err != nil:
		return setting.Errorf("db", "%w (%s)", err, loadHint)
	case name != "sqlite":
		return setting.Errorf("db", "%s is a %s database, not SQLite (%s)", path, name, loadHint)
	}
	return nil
}

// Resolve gives c's defaults their values on machine t with the store
// at storePath: CPU -1 becomes t's first CPU, and without GHz the clock
// is read from the memory probe ProbeRun (the newest when 0), which
// ProbeRun then names. It returns the clock.
func (c *RunConfig) Resolve(t *result.Topology, storePath string) (float64, error) {
	if c.CPU < 0 {
		c.CPU = 0
		if t != nil && len(t.CPUs) > 0 {
			c.CPU = t.CPUs[0].ID
		}
	}
	if t != nil && len(t.CPUs) > 0 && !slices.ContainsFunc(t.CPUs, func(x result.CPU) bool { return x.ID == c.CPU }) {
		return 0, setting.Errorf("cpu", "%d is not a CPU of this machine (numalab topo lists them)", c.CPU)
	}
	if c.engine() == "sqlite" {
		if err := checkDB(c.DB); err != nil {
			return 0, err
		}
	}
	if c.GHz > 0 && c.ProbeRun == 0 {
		return c.GHz, nil
	}
	st, err := store.OpenToRead(storePath)
	if err != nil {
		return 0, setting.Errorf("probe-run", "reading the memory probe's clock: %w (or give --ghz)", err)
	}
	defer st.Close()
	if c.ProbeRun == 0 {
		if c.ProbeRun, err = st.Latest(result.RunProbeMem, 0, result.StatusComplete); err != nil {
			return 0, err
		}
		if c.ProbeRun == 0 {
			return 0, setting.Errorf("probe-run", "%s holds no complete memory probe whose clock the points could be "+
				"at (run numalab probe mem --store %s first, or give --ghz)", storePath, storePath)
		}
	}
	run, err := st.Get(c.ProbeRun)
	if err != nil {
		return 0, setting.Errorf("probe-run", "%w (numalab runs --kind probe-mem lists the memory probes)", err)
	}
	if run.Kind != result.RunProbeMem {
		return 0, setting.Errorf("probe-run",
			"run %d is a %s run, not a memory probe (numalab runs --kind probe-mem lists them)", c.ProbeRun, run.Kind)
	}
	if c.GHz > 0 {
		return c.GHz, nil // the clock given, beside the probe named
	}
	p, err := calib.ReadProbe(run)
	if err != nil {
		return 0, setting.Wrap("probe-run", err)
	}
	if !(p.GHz > 0) {
		return 0, setting.Errorf("probe-run", "memory probe run %d measured no clock (give --ghz)", c.ProbeRun)
	}
	if v, why := model.Implausible(nil, []float64{p.GHz}, nil); why != "" {
		return 0, setting.Errorf("probe-run",
			"memory probe run %d measured a clock of %s GHz, which is not %s (give --ghz)", c.ProbeRun, v, why)
	}
	return p.GHz, nil
}
