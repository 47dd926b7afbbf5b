package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/dop"
	"github.com/numalab/numalab/internal/dram"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/modelinput"
)

func cmdModelDRAM(e *env, args []string) error {
	fs := cliflag.New(e.stderr, "model dram", helpText("model-dram"))
	mts := cliflag.Number(fs, "mts", 0, cliflag.Above(0), "want MT/s above 0, e.g. --mts 2666", "transfer rate in `MT/s`, e.g. 2666 for DDR4-2666")
	timings := fs.String("timings", "", "module timings `CL-tRCD-tRP` in memory clocks, e.g. 19-19-19")
	trc := fs.String("trc", "", "row cycle time `tRC` with its unit, e.g. 45.75ns or 8clk")
	tras := fs.String("tras", "", "row active time `tRAS` with its unit, e.g. 32ns: tRC = tRAS + tRP (needs --timings)")
	ghz := cliflag.Number(fs, "ghz", 0, cliflag.Above(0), "want GHz above 0, e.g. --ghz 3", "core clock in `GHz` to express the access time in core cycles too")
	asJSON := fs.Bool("json", false, "print JSON")
	done, errs, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return err
	}
	errs.Missing(fs, "mts")
	a, err := dram.Input{MTS: *mts, MTSGiven: cliflag.Given(fs, "mts"), Timings: *timings, TRC: *trc, TRAS: *tras, GHz: *ghz}.Access()
	if err := errors.Join(append(errs, err)...); err != nil {
		return err
	}
	return writeAs(e.stdout, *asJSON, a, dram.Write)
}

func cmdModelTier(e *env, args []string) error {
	fs := cliflag.New(e.stderr, "model tier", helpText("model-tier"))
	fast := cliflag.Number(fs, "fast-ns", 0, cliflag.Above(0), "want ns above 0, e.g. --fast-ns 40", "fast tier's latency, `ns` (S)")
	slow := cliflag.Number(fs, "slow-ns", 0, cliflag.Above(0), "want ns above 0, e.g. --slow-ns 300", "slow tier's latency, `ns` (I)")
	dram := cliflag.Number(fs, "dram-ns", 0, cliflag.Above(0), "want ns above 0, e.g. --dram-ns 90", "conventional memory's latency, `ns` (D)")
	asJSON := fs.Bool("json", false, "print JSON")
	done, errs, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return err
	}
	errs.Missing(fs, "fast-ns", "slow-ns", "dram-ns")
	errs.BadIf(len(errs) == 0 && !(*slow > *fast), "slow-ns", model.Num(*slow), fmt.Sprintf("is not above --fast-ns %s: the slow tier must be slower", model.Num(*fast)))
	if err := errors.Join(errs...); err != nil {
		return err
	}
	tiers, err := model.TwoTiers(*fast, *slow, *dram)
	if err != nil {
		return err
	}
	return writeAs(e.stdout, *asJSON, tiers, model.WriteTiers)
}

func cmdModelSize(e *env, args []string) error {
	fs := cliflag.New(e.stderr, "model size", helpText("model-size"))
	workload := modelinput.WorkloadFlags(fs)
	mf := modelinput.AddMachineFlags(fs)
	target := cliflag.Number(fs, "target-tps", 0, cliflag.Above(0), "want tps above 0, e.g. --target-tps 1000", "throughput to reach, in `tps` (transactions per second)")
	license := cliflag.Number(fs, "core-license-cost", 0, cliflag.AtLeast(0), "want 0 or more per core", "software licence `cost` per physical core")
	var cpus []model.CPUOption
	fs.Func("cpu-cost", "a processor option `cores=N,price=P[,ghz=F][,name=TEXT]` (repeat for each)", func(s string) error {
		c, err := model.ParseCPUOption(s)
		if err == nil {
			cpus = append(cpus, c)
		}
		return err
	})
	systemCost := fs.String("system-cost", "", "base system price by socket count, `S:PRICE,...`, e.g. 1:4000,2:9000")
	ghz := cliflag.Number(fs, "ghz", 0, cliflag.Above(0), "want GHz above 0, e.g. --ghz 3", "core `GHz` of processors whose --cpu-cost gives no ghz")
	sockets := fs.String("sockets", "1,2,4", "socket counts to consider")
	smt := cliflag.LeastInt(fs, "smt", 1, 1, "hardware `threads` per core")
	asJSON := fs.Bool("json", false, "print JSON")
	done, errs, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return err
	}
	errs = append(errs, mf.Check())
	errs.Missing(fs, "target-tps")
	errs = append(errs, model.ClockCPUs(cpus, *ghz))
	ss, err := cliflag.ParseInts("sockets", *sockets, 1)
	errs = append(errs, err)
	prices, err := model.ParseSystemPrices(*systemCost)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	spec, err := mf.Spec()
	if err != nil {
		return err
	}
	z, rows, err := spec.Size(model.Sizing{Workload: workload(), TargetTPS: *target, LicensePerCore: *license,
		CPUs: cpus, SystemPrice: prices, Sockets: ss, SMT: *smt}, *sockets)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, rows)
	}
	return model.WriteSize(e.stdout, z, rows)
}

func cmdModelDOP(e *env, args []string) error {
	fs := cliflag.New(e.stderr, "model dop", helpText("model-dop"))
	costs := fs.String("cost", "", "plan costs, comma-separated (default: a ladder of multiples of --threshold)")
	thresholdArg := fs.String("threshold", "", "`T` from which a plan goes parallel: a plan cost (30) or a time (0.5s) that --units-per-second or --run turns into one")
	unitsPerSec := cliflag.Number(fs, "units-per-second", 0, cliflag.Above(0), "want cost units per second above 0, e.g. --units-per-second 57.135", "the optimizer's cost `units` a second of measured time is worth, to turn a --threshold time into a cost")
	runID := fs.Int64("run", 0, "stored tpch run `ID` whose fitted seconds per cost unit turns a --threshold time into a cost")
	storePath := cliflag.Store(fs)
	cores := cliflag.LeastInt(fs, "cores-per-socket", 0, 1, "physical `cores` of one socket")
	span := cliflag.Number(fs, "span-threshold", 0, cliflag.AtLeast(0), "want a cost of 0 or more (0: never span)", "`cost` from which a plan may span sockets (default: never)")
	sockets := cliflag.LeastInt(fs, "sockets", 1, 1, "`sockets` a spanning plan may use")
	asJSON := fs.Bool("json", false, "print JSON")
	done, errs, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return err
	}
	errs.Missing(fs, "threshold", "cores-per-socket")
	in := dop.Input{Threshold: *thresholdArg, Costs: *costs, UnitsPerSecond: *unitsPerSec, RunID: *runID, CoresPerSocket: *cores, Sockets: *sockets, Span: *span}
	th, cs, err := in.Check()
	if err := errors.Join(append(errs, err)...); err != nil {
		return err
	}
	secsPerUnit := 0.0
	if *runID != 0 {
		if secsPerUnit, err = modelinput.SecondsPerUnit(*storePath, *runID); err != nil {
			return err
		}
	}
	l, err := in.Ladder(th, cs, secsPerUnit)
	if err != nil {
		return err
	}
	return writeAs(e.stdout, *asJSON, l, dop.Write)
}

func cmdModelFit(e *env, args []string) error {
	fs := cliflag.New(e.stderr, "model fit", helpText("model-fit"))
	points := fs.String("points", "", "measured points `L_ns:tps_per_core[:GHz],...`")
	ghz := cliflag.Number(fs, "ghz", 0, cliflag.Above(0), "want GHz above 0, e.g. --ghz 3", "core clock of the points, `GHz`")
	mf := modelinput.AddMachineFlags(fs)
	ghzList := fs.String("ghz-list", "", "clocks to predict at, e.g. 3,2 (default --ghz)")
	sockets := fs.String("sockets", "1,2,4", "socket counts to predict")
	smt := fs.String("smt", "1", "hardware threads per core to predict")
	asJSON := fs.Bool("json", false, "print JSON")
	runID := fs.Int64("run", 0, "stored OLTP run `ID` to fit (instead of --points)")
	probeID := fs.Int64("probe-run", 0, "stored memory probe run `ID` for --run (default: the latest before it)")
	fitID := modelinput.FitRunFlag(fs)
	done, errs, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return err
	}
	errs.BadIf(*fitID != 0 && *runID == 0, "fit-run", strconv.FormatInt(*fitID, 10), "needs --run: it gives A and M to the calibration of a stored OLTP run")
	if *runID != 0 {
		if *points != "" {
			errs = append(errs, errors.New("model fit: give --run or --points, not both"))
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		c, err := modelinput.Calibrate(*mf.Store, *runID, *probeID, *fitID)
		if err != nil {
			return err
		}
		return writeAs(e.stdout, *asJSON, c, calib.WriteCalibration)
	}
	pts, err := model.ParsePoints(*points, *ghz)
	errs = append(errs, err, mf.Check())
	ks, err := cliflag.ParseInts("smt", *smt, 1)
	errs = append(errs, err)
	ss, err := cliflag.ParseInts("sockets", *sockets, 1)
	errs = append(errs, err)
	gs, err := model.ParseClocks(*ghz, *ghzList, *mf.Unchecked)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	var machine func() (calib.MachineSpec, error) // none: no predictions
	if cliflag.Given(fs, "local-ns") || *mf.Topology != "" || *mf.FromRun != 0 {
		machine = mf.Spec
	}
	out, err := calib.FitAndPredict(pts, machine, model.Grid{GHz: gs, SMT: ks, Sockets: ss}, *sockets)
	if err != nil {
		return err
	}
	return writeAs(e.stdout, *asJSON, out, calib.WriteFitResult)
}
