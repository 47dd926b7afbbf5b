package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/decide"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/published"
	"github.com/numalab/numalab/internal/store"
)

func cmdModelBuy(e *env, args []string) error {
	if hostsMode(args) {
		return cmdModelBuyHosts(e, args)
	}
	fs := cliflag.New(e.stderr, "model buy", helpText("model-buy"))
	workload := workloadFlags(fs)
	candidates := fs.String("candidates", "", "candidate servers, a TOML `file` (default: built in, from this CPU)")
	catalogue := fs.Bool("catalogue", false, "choose among the built-in catalogue of server CPUs, with list prices (docs/model.md)")
	catalogueFile := fs.String("catalogue-file", "", "choose among the CPUs of a catalogue `file` (JSON, the built-in one's form)")
	thisCPU := fs.String("this-cpu", "", "this machine's CPU `model` for --catalogue's per-core speeds, "+
		"a catalogue or reference CPU of the catalogue file (default with --run: the model name the run recorded)")
	runID := fs.Int64("run", 0, "stored OLTP run `ID` to calibrate the workload to")
	probeID := fs.Int64("probe-run", 0, "stored memory probe run `ID` for --run (default: the latest before it)")
	fitID := fitRunFlag(fs)
	storePath := cliflag.Store(fs) // read with --run
	ghz := cliflag.Number(fs, "ghz", 0, func(v float64) bool { return v > 0 && v <= model.PlausibleMaxGHz },
		fmt.Sprintf("want GHz above 0 and up to %g, e.g. --ghz 3 (or --run ID)", model.PlausibleMaxGHz), "this CPU's clock, `GHz` (without --run)")
	latencies := addLatencyFlags(fs, "memory latency to a remote node, `ns` (without --run; default: "+model.Sig(model.PublishedRemoteRatio.Value, 4)+"× --local-ns, the published ratio, with its band)")
	cores := cliflag.LeastInt(fs, "cores", 1, 1, "this CPU's physical `cores` per socket (without --run)")
	smt := cliflag.LeastInt(fs, "smt", 2, 1, "hardware `threads` per core of the built-in SMT candidate")
	asJSON := fs.Bool("json", false, "print JSON")
	asCSV := fs.Bool("csv", false, "print CSV (one row per candidate)")
	done, errs, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return err
	}
	if *asJSON && *asCSV {
		errs = append(errs, errors.New("-json and -csv: choose one output format"))
	}
	var servers []decide.Server
	cat, err := readCatalogue(*catalogue, *catalogueFile, *candidates != "")
	errs = append(errs, err)
	if *candidates != "" {
		data, err := os.ReadFile(*candidates)
		if err != nil {
			errs = append(errs, fmt.Errorf("-candidates: %w", err))
		} else if servers, err = decide.ParseCandidates(*candidates, data); err != nil {
			errs = append(errs, err)
		}
	}
	errs.BadIf(*thisCPU != "" && cat == nil, "this-cpu", *thisCPU,
		"needs --catalogue or --catalogue-file: it names the CPU the catalogue's per-core figures are taken against")
	if *thisCPU != "" && cat != nil {
		_, _, ok := cat.PerCoreOf(*thisCPU)
		errs.BadIf(!ok, "this-cpu", *thisCPU,
			"names no catalogue or reference CPU with a per-core figure (see internal/published/data/cpus.json, e.g. \"AMD EPYC 7763\")")
	}
	errs.BadIf(*fitID != 0 && *runID == 0, "fit-run", strconv.FormatInt(*fitID, 10), "needs --run: it gives A and M to the calibration of a stored OLTP run")
	var p *decide.Purchase
	if *runID != 0 {
		for _, f := range []string{"ghz", "local-ns", "one-socket-ns", "remote-ns", "cores", "instructions", "miss"} {
			if cliflag.Given(fs, f) {
				errs = append(errs, fmt.Errorf("-%s: --run measures it: give one or the other", f))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		c, err := calibrateRun(*storePath, *runID, *probeID, *fitID)
		if err != nil {
			return err
		}
		smtGiven := 0 // the threads per core the run measured
		if cliflag.Given(fs, "smt") {
			smtGiven = *smt
		}
		if cat != nil {
			cpu := *thisCPU
			if cpu == "" {
				cpu, err = runCPUModel(*storePath, *runID)
				if err != nil {
					return err
				}
			}
			p, err = decide.BuyCatalogueCalibrated(c, cat, cpu)
		} else {
			p, err = decide.BuyCalibrated(c, smtGiven, servers)
		}
	} else {
		var cpu *decide.GivenCPUFigures // none: the candidates file anchors the band
		if (*candidates == "" && cat == nil) || cliflag.Given(fs, "ghz") || cliflag.Given(fs, "local-ns") || cliflag.Given(fs, "one-socket-ns") || cliflag.Given(fs, "remote-ns") {
			errs.Missing(fs, "ghz", "local-ns")
			l := latencies.read()
			errs = append(errs, l.Check())
			errs.BadIf(l.TwoHopNS > 0, "remote-ns", model.Num(l.TwoHopNS), "is a second hop's latency: model buy's candidates stop at 4 sockets, all one hop apart")
			cpu = &decide.GivenCPUFigures{GHz: *ghz, Latencies: l, Cores: *cores, SMT: *smt}
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		if cat != nil {
			p, err = decide.BuyCatalogueGiven(workload(), cpu, cat, *thisCPU)
		} else {
			p, err = decide.BuyGiven(workload(), cpu, servers)
		}
	}
	if err != nil {
		return err
	}
	switch {
	case *asJSON:
		return writeJSON(e.stdout, p)
	case *asCSV:
		return decide.WritePurchaseCSV(e.stdout, p)
	}
	return decide.WritePurchase(e.stdout, p)
}

// runCPUModel is the CPU model name a stored run recorded ("" when it
// recorded none).
func runCPUModel(storePath string, runID int64) (model string, err error) {
	err = readStore(storePath, func(st *store.Store) error {
		run, err := st.Get(runID)
		if err == nil && run.Machine != nil {
			model = run.Machine.CPUModel
		}
		return err
	})
	return model, err
}

// readCatalogue is --catalogue's built-in catalogue or --catalogue-file's;
// nil with neither.
func readCatalogue(builtin bool, file string, candidates bool) (*published.Catalogue, error) {
	switch {
	case builtin && file != "":
		return nil, errors.New("-catalogue and -catalogue-file: give one (the built-in catalogue or yours)")
	case (builtin || file != "") && candidates:
		return nil, errors.New("-candidates and a catalogue: choose among one set of candidates")
	case builtin:
		return published.BuiltinCatalogue()
	case file != "":
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("-catalogue-file: %w", err)
		}
		return published.ParseCatalogue(file, data)
	}
	return nil, nil
}
