package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/decide"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/modelinput"
)

func cmdModelBuy(e *env, args []string) error {
	if hostsMode(args) {
		return cmdModelBuyHosts(e, args)
	}
	fs := cliflag.New(e.stderr, "model buy", helpText("model-buy"))
	workload := modelinput.WorkloadFlags(fs)
	candidates := fs.String("candidates", "", "candidate servers, a TOML `file` (default: built in, from this CPU)")
	catalogue := fs.Bool("catalogue", false, "choose among the built-in catalogue of server CPUs, with list prices (docs/model.md)")
	catalogueFile := fs.String("catalogue-file", "", "choose among the CPUs of a catalogue `file` (JSON, the built-in one's form)")
	thisCPU := fs.String("this-cpu", "", "this machine's CPU `model` for --catalogue's per-core speeds, "+
		"a catalogue or reference CPU of the catalogue file (default with --run: the model name the run recorded)")
	runID := fs.Int64("run", 0, "stored OLTP run `ID` to calibrate the workload to")
	probeID := fs.Int64("probe-run", 0, "stored memory probe run `ID` for --run (default: the latest before it)")
	fitID := modelinput.FitRunFlag(fs)
	storePath := cliflag.Store(fs) // read with --run
	ghz := cliflag.Number(fs, "ghz", 0, func(v float64) bool { return v > 0 && v <= model.PlausibleMaxGHz },
		fmt.Sprintf("want GHz above 0 and up to %g, e.g. --ghz 3 (or --run ID)", model.PlausibleMaxGHz), "this CPU's clock, `GHz` (without --run)")
	latencies := modelinput.AddLatencyFlags(fs, "memory latency to a remote node, `ns` (without --run; default: "+model.Sig(model.PublishedRemoteRatio.Value, 4)+"× --local-ns, the published ratio, with its band)")
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
	in := modelinput.Buy{Workload: workload(), Candidates: *candidates, Catalogue: *catalogue, CatalogueFile: *catalogueFile, ThisCPU: *thisCPU,
		Run: *runID, ProbeRun: *probeID, FitRun: *fitID, Store: *storePath}
	errs = append(errs, in.Read()...)
	errs.BadIf(*fitID != 0 && *runID == 0, "fit-run", strconv.FormatInt(*fitID, 10), "needs --run: it gives A and M to the calibration of a stored OLTP run")
	if *runID != 0 {
		for _, f := range []string{"ghz", "local-ns", "one-socket-ns", "remote-ns", "cores", "instructions", "miss"} {
			if cliflag.Given(fs, f) {
				errs = append(errs, fmt.Errorf("-%s: --run measures it: give one or the other", f))
			}
		}
		if cliflag.Given(fs, "smt") {
			in.SMT = *smt
		}
	} else if in.NeedsCPU() || cliflag.Given(fs, "ghz") || cliflag.Given(fs, "local-ns") || cliflag.Given(fs, "one-socket-ns") || cliflag.Given(fs, "remote-ns") {
		errs.Missing(fs, "ghz", "local-ns")
		l := latencies.Read()
		errs = append(errs, l.Check())
		errs.BadIf(l.TwoHopNS > 0, "remote-ns", model.Num(l.TwoHopNS), "is a second hop's latency: model buy's candidates stop at 4 sockets, all one hop apart")
		in.CPU = &decide.GivenCPUFigures{GHz: *ghz, Latencies: l, Cores: *cores, SMT: *smt}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	p, err := in.Purchase()
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
