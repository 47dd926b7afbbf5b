package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/numalab/numalab/internal/model"
)

func cmdModelBuy(e *env, args []string) error {
	fs := newFlags(e, "model buy", helpText("model-buy"))
	wf := addWorkloadFlags(fs)
	candidates := fs.String("candidates", "", "candidate servers, a TOML `file` (default: built in, from this CPU)")
	runID := fs.Int64("run", 0, "stored OLTP run `ID` to calibrate the workload to")
	probeID := fs.Int64("probe-run", 0, "stored memory probe run `ID` for --run (default: the latest before it)")
	storePath := storeFlag(fs) // read with --run
	ghz := fs.Float64("ghz", 0, "this CPU's clock, `GHz` (without --run)")
	local := fs.Float64("local-ns", 0, "this CPU's local memory latency, `ns` (without --run)")
	remote := fs.Float64("remote-ns", 0, "this CPU's remote memory latency, `ns` (without --run; default local × 125/67)")
	cores := fs.Int("cores", 1, "this CPU's physical cores per socket (without --run)")
	smt := fs.Int("smt", 2, "hardware threads per core of the built-in SMT candidate")
	asJSON := fs.Bool("json", false, "print JSON")
	asCSV := fs.Bool("csv", false, "print CSV (one row per candidate)")
	if done, err := parseNoArgs(e, fs, args); done {
		return err
	}
	var errs flagErrs
	if *asJSON && *asCSV {
		errs = append(errs, errors.New("-json and -csv: choose one output format"))
	}
	var servers []model.Server
	if *candidates != "" {
		data, err := os.ReadFile(*candidates)
		if err != nil {
			errs = append(errs, fmt.Errorf("-candidates: %w", err))
		} else if servers, err = model.ParseCandidates(*candidates, data); err != nil {
			errs = append(errs, err)
		}
	}
	var (
		w           model.Workload
		band        model.Band
		assumptions []model.Assumption
		this        thisCPU
	)
	if *runID != 0 {
		for _, f := range []string{"ghz", "local-ns", "remote-ns", "cores", "instructions", "miss"} {
			if flagGiven(fs, f) {
				errs = append(errs, fmt.Errorf("-%s: --run measures it: give one or the other", f))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		c, err := calibrateRun(*storePath, *runID, *probeID)
		if err != nil {
			return err
		}
		w, band, assumptions = c.Workload, model.CalibrationBand(c), c.Assumptions
		this = thisCPU{c.GHz, c.CoresPerSocket, *smt, c.LocalNS, c.RemoteNS}
		if k := c.ThreadsPerCore(); k > 1 && !flagGiven(fs, "smt") {
			this.smt = k
		}
	} else {
		var err error
		w, err = wf.workload()
		errs = append(errs, err)
		needCPU := *candidates == "" || flagGiven(fs, "ghz") || flagGiven(fs, "local-ns")
		if needCPU {
			errs.badIf(!(*ghz > 0 && *ghz <= 10), "ghz", model.Num(*ghz), "is not a clock: want GHz above 0, e.g. --ghz 3 (or --run ID)")
			errs.badIf(!(*local > 0) || math.IsInf(*local, 0), "local-ns", model.Num(*local), "is not a latency: want ns above 0, e.g. --local-ns 90 (or --run ID)")
			errs.badIf(*remote != 0 && !(*remote >= *local), "remote-ns", model.Num(*remote), "is below --local-ns: want the remote latency, at least the local one")
		}
		errs.badIf(*cores < 1, "cores", strconv.Itoa(*cores), "is not a core count: want 1 or more")
		if err := errors.Join(errs...); err != nil {
			return err
		}
		assumptions = model.GivenWorkload(w)
		anchorNS, anchorGHz := *local, *ghz
		if !needCPU {
			anchorNS, anchorGHz = servers[0].LocalNS, servers[0].GHz
		} else {
			r, given := model.GivenCPU(*ghz, *local, *remote)
			this = thisCPU{*ghz, *cores, *smt, *local, r}
			assumptions = append(assumptions, given...)
		}
		band = model.MissBand(w, anchorNS, anchorGHz)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if *candidates == "" {
		servers = model.BuiltinCandidates(this.ghz, this.cores, this.smt, this.localNS, this.remoteNS)
	}
	p, err := model.Buy(w, band, servers)
	if err != nil {
		return err
	}
	p.Assumptions = assumptions
	switch {
	case *asJSON:
		return writeJSON(e.stdout, p)
	case *asCSV:
		return model.WritePurchaseCSV(e.stdout, p)
	}
	return model.WritePurchase(e.stdout, p)
}

// thisCPU is what the built-in candidates are derived from.
type thisCPU struct {
	ghz      float64
	cores    int
	smt      int
	localNS  float64
	remoteNS float64
}
