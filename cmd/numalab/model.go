package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/modelinput"
)

// modelSubcommands are the model's subcommands, each with its own flags.
var modelSubcommands = map[string]func(e *env, args []string) error{
	"dram": cmdModelDRAM, "tier": cmdModelTier, "size": cmdModelSize, "dop": cmdModelDOP, "fit": cmdModelFit, "buy": cmdModelBuy, "validate": cmdModelValidate,
}

func cmdModel(_ context.Context, e *env, args []string) error {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if sub, ok := modelSubcommands[args[0]]; ok {
			return sub(e, args[1:])
		}
		return fmt.Errorf("model: unknown subcommand %q (want dram, tier, size, dop, fit, buy or validate; see 'numalab model --help')", args[0])
	}
	fs := cliflag.New(e.stderr, "model", helpText("model"))
	workload := modelinput.WorkloadFlags(fs)
	mf := modelinput.AddMachineFlags(fs)
	ghz := cliflag.Number(fs, "ghz", 0, cliflag.Above(0), "want GHz above 0, e.g. --ghz 3", "core clock in `GHz` (default: the topology's highest, if it has one)")
	ghzList := fs.String("ghz-list", "", "several core clocks in GHz, e.g. 3,2,1: one table each (overrides --ghz)")
	sockets := fs.String("sockets", "", "socket counts to model (default 1,2,4, the published figures' reach; with a topology, 1 up to its sockets)")
	smt := fs.String("smt", "1", "hardware threads per core to model, e.g. 1,2,4")
	smtGain := cliflag.Number(fs, "smt-gain", 0, cliflag.Above(0), "want a throughput ratio above 0, e.g. --smt-gain 1.15",
		"`ratio` of a core's throughput with more than one hardware thread to one thread's (default: "+model.PublishedSMTGain.String()+", the published OLTP measurements; see --help)")
	smtRun := fs.Int64("smt-run", 0, "stored OLTP run `ID` whose smt=on and smt=off cells measure the SMT gain (instead of --smt-gain)")
	asJSON := fs.Bool("json", false, "print JSON")
	asCSV := fs.Bool("csv", false, "print CSV (one row per configuration)")
	done, errs, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return err
	}
	errs = append(errs, mf.Check())
	ks, err := cliflag.ParseInts("smt", *smt, 1)
	errs = append(errs, err)
	if *smtGain > 0 {
		errs = append(errs, model.CheckSMTGain(*smtGain, ks))
	}
	errs.BadIf(*smtRun != 0 && *smtGain > 0, "smt-run", strconv.FormatInt(*smtRun, 10), "measures the gain --smt-gain gives: give one or the other")
	var ss []int
	if *sockets != "" {
		ss, err = cliflag.ParseInts("sockets", *sockets, 1)
		errs = append(errs, err, model.Plausible("sockets", nil, nil, ss, *mf.Unchecked))
	}
	gs, err := model.ParseClocks(*ghz, *ghzList, *mf.Unchecked)
	errs = append(errs, err)
	if *asJSON && *asCSV {
		errs = append(errs, errors.New("-json and -csv: choose one output format"))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	spec, err := mf.Spec()
	if err != nil {
		return err
	}
	g := model.Grid{GHz: gs, SMT: ks, Sockets: ss, SMTGain: *smtGain}
	if *smtRun != 0 {
		r, err := modelinput.SMTGain(*mf.Store, *smtRun)
		if err != nil {
			return err
		}
		g.SMTGain, g.SMTSource = r.Value, r.Source
	}
	tab, err := spec.Predict(workload(), g, *sockets)
	if err != nil {
		return err
	}
	switch {
	case *asJSON:
		return writeJSON(e.stdout, tab)
	case *asCSV:
		return model.WriteCSV(e.stdout, tab)
	}
	return model.WriteTable(e.stdout, tab)
}
