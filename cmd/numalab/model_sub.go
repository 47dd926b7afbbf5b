package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

const modelDRAMHelp = `Usage:
  numalab model dram --mts R --timings CL-tRCD-tRP [--ghz F] [--json]

DDR timing arithmetic. A DDR module at R MT/s has a memory clock period of
2000/R ns; its timings (CL, tRCD, tRP) are in those clocks. A random access
that finds another row open must precharge it (tRP), activate the new row
(tRCD) and read (CL): (tRP + tRCD + CL)·2000/R ns at the DRAM. What a core
sees adds the caches, the memory controller and the path (typically another
40–60 ns; --local-ns of 'numalab model' is the whole round trip).

Examples:
  numalab model dram --mts 2666 --timings 19-19-19
  numalab model dram --mts 4800 --timings 40-39-39 --ghz 3   # also in core cycles
`

func cmdModelDRAM(e *env, args []string) error {
	fs := newFlags(e, "model dram", modelDRAMHelp)
	mts := fs.Float64("mts", 0, "transfer rate in `MT/s`, e.g. 2666 for DDR4-2666")
	timings := fs.String("timings", "", "module timings `CL-tRCD-tRP` in memory clocks, e.g. 19-19-19")
	ghz := fs.Float64("ghz", 0, "core clock in `GHz` to express the access time in core cycles too")
	asJSON := fs.Bool("json", false, "print JSON")
	if done, err := parseNoArgs(e, fs, args); done {
		return err
	}
	var errs []error
	if !(*mts > 0) || math.IsInf(*mts, 0) {
		errs = append(errs, badFlag("mts", modelNum(*mts), "is not a transfer rate: want MT/s above 0, e.g. --mts 2666"))
	}
	t, err := model.ParseTimings(*timings)
	if err != nil {
		errs = append(errs, badFlag("timings", *timings, "is not CL-tRCD-tRP in memory clocks: want e.g. --timings 19-19-19"))
	}
	if *ghz < 0 || math.IsNaN(*ghz) {
		errs = append(errs, badFlag("ghz", modelNum(*ghz), "is not a clock: want GHz above 0, e.g. --ghz 3"))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	clock, access := model.DRAMClockNS(*mts), model.DRAMAccessNS(*mts, t)
	if *asJSON {
		out := struct {
			MTs        float64       `json:"mts"`
			Timings    model.Timings `json:"timings"`
			ClockNS    float64       `json:"clock_ns"`
			CASNS      float64       `json:"cas_ns"`
			AccessNS   float64       `json:"random_row_access_ns"`
			CoreGHz    float64       `json:"core_ghz,omitempty"`
			CoreCycles float64       `json:"core_cycles,omitempty"`
		}{*mts, t, clock, float64(t.CL) * clock, access, *ghz, access * *ghz}
		return writeJSON(e.stdout, out)
	}
	fmt.Fprintf(e.stdout, "DDR at %s MT/s, CL-tRCD-tRP %d-%d-%d\n", modelNum(*mts), t.CL, t.RCD, t.RP)
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  memory clock period\t%.3f ns\t2000 / %s MT/s\n", clock, modelNum(*mts))
	fmt.Fprintf(tw, "  CAS latency\t%.3f ns\tCL %d × %.3f ns\n", float64(t.CL)*clock, t.CL, clock)
	fmt.Fprintf(tw, "  random-row access at the DRAM\t%.3f ns\t(tRP %d + tRCD %d + CL %d) × %.3f ns\n", access, t.RP, t.RCD, t.CL, clock)
	if *ghz > 0 {
		fmt.Fprintf(tw, "  the same in core cycles\t%.1f cycles\tat %s GHz\n", access**ghz, modelNum(*ghz))
	}
	return tw.Flush()
}

const modelTierHelp = `Usage:
  numalab model tier --fast-ns S --slow-ns I --dram-ns D [--json]

Two-tier memory: a fast tier of latency S in front of a slow, large tier of
latency I, against conventional memory of latency D. If a fraction x of
accesses miss the fast tier, the average is (1 − x)·S + x·I, which beats D
while x < (D − S)/(I − S). Prints that break-even and the average latency at
a few miss fractions.

Examples:
  numalab model tier --fast-ns 40 --slow-ns 300 --dram-ns 90   # low-latency DRAM + far memory
  numalab model tier --fast-ns 10 --slow-ns 90 --dram-ns 67 --json
`

func cmdModelTier(e *env, args []string) error {
	fs := newFlags(e, "model tier", modelTierHelp)
	fast := fs.Float64("fast-ns", 0, "fast tier's latency, `ns` (S)")
	slow := fs.Float64("slow-ns", 0, "slow tier's latency, `ns` (I)")
	dram := fs.Float64("dram-ns", 0, "conventional memory's latency, `ns` (D)")
	asJSON := fs.Bool("json", false, "print JSON")
	if done, err := parseNoArgs(e, fs, args); done {
		return err
	}
	var errs []error
	for _, f := range []struct {
		name string
		v    float64
	}{{"fast-ns", *fast}, {"slow-ns", *slow}, {"dram-ns", *dram}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			errs = append(errs, badFlag(f.name, modelNum(f.v), "is not a latency: want ns above 0"))
		}
	}
	if len(errs) == 0 && !(*slow > *fast) {
		errs = append(errs, badFlag("slow-ns", modelNum(*slow), fmt.Sprintf("is not above --fast-ns %s: the slow tier must be slower", modelNum(*fast))))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	x, err := model.TierBreakEven(*fast, *slow, *dram)
	if err != nil {
		return err
	}
	type level struct {
		Miss      float64 `json:"miss_fraction"`
		LatencyNS float64 `json:"latency_ns"`
		VsDRAM    float64 `json:"vs_dram"`
	}
	var levels []level
	for _, m := range []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5} {
		l := model.TierLatency(*fast, *slow, m)
		levels = append(levels, level{m, l, l / *dram})
	}
	if *asJSON {
		return writeJSON(e.stdout, struct {
			FastNS    float64 `json:"fast_ns"`
			SlowNS    float64 `json:"slow_ns"`
			DRAMNS    float64 `json:"dram_ns"`
			BreakEven float64 `json:"break_even_miss_fraction"`
			Levels    []level `json:"levels"`
		}{*fast, *slow, *dram, x, levels})
	}
	w := e.stdout
	fmt.Fprintf(w, "Fast tier %s ns, slow tier %s ns, conventional DRAM %s ns.\n", modelNum(*fast), modelNum(*slow), modelNum(*dram))
	fmt.Fprintf(w, "Break-even: x < (D − S)/(I − S) = (%s − %s)/(%s − %s) = %.4f\n", modelNum(*dram), modelNum(*fast), modelNum(*slow), modelNum(*fast), x)
	switch {
	case x <= 0:
		fmt.Fprintln(w, "The fast tier is no faster than DRAM: two tiers never win.")
	case x >= 1:
		fmt.Fprintln(w, "The slow tier is no slower than DRAM: two tiers always win.")
	default:
		fmt.Fprintf(w, "Two tiers beat DRAM while fewer than %s of accesses miss the fast tier.\n", modelPercent(x))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "miss fast tier\taverage ns\tvs DRAM\t")
	for _, l := range levels {
		fmt.Fprintf(tw, "%s\t%.1f\t%.3f\t\n", modelPercent(l.Miss), l.LatencyNS, l.VsDRAM)
	}
	return tw.Flush()
}

const modelSizeHelp = `Usage:
  numalab model size --target-tps X --core-license-cost C --cpu-cost SPEC [--cpu-cost SPEC ...]
                     --local-ns L --remote-ns R [--system-cost S:PRICE,...] [flags]

Which server reaches a throughput at the lowest cost when software is
licensed per physical core? Each --cpu-cost is one processor you could buy:

  --cpu-cost 'cores=N,price=P[,ghz=F][,name=TEXT]'

(cores per socket, price per processor, clock, default --ghz). Every
processor is tried in every --sockets count, using the model for that
socket count's memory latency. Licences are counted for all physical cores
in the system (cores × --core-license-cost); hardware is sockets × price
plus --system-cost for that socket count (chassis, board, memory), e.g.
'1:4000,2:9000,4:40000'. Configurations that reach --target-tps come first,
cheapest first; "cores needed" is target ÷ tps per core, rounded up.

Examples:
  numalab model size --target-tps 1000 --core-license-cost 7000 \
    --local-ns 67 --remote-ns 125 --buffer-ns 15 --sockets 1,2,4 \
    --cpu-cost 'cores=16,ghz=3.0,price=3000' --cpu-cost 'cores=28,ghz=2.2,price=9000' \
    --system-cost 1:4000,2:9000,4:40000
`

func cmdModelSize(e *env, args []string) error {
	fs := newFlags(e, "model size", modelSizeHelp)
	wf := addWorkloadFlags(fs)
	mf := addMachineFlags(fs)
	target := fs.Float64("target-tps", 0, "throughput to reach, in `tps` (transactions per second)")
	license := fs.Float64("core-license-cost", 0, "software licence `cost` per physical core")
	var cpus []model.CPUOption
	fs.Func("cpu-cost", "a processor option `cores=N,price=P[,ghz=F][,name=TEXT]` (repeat for each)", func(s string) error {
		c, err := parseModelCPU(s)
		if err == nil {
			cpus = append(cpus, c)
		}
		return err
	})
	systemCost := fs.String("system-cost", "", "base system price by socket count, `S:PRICE,...`, e.g. 1:4000,2:9000")
	ghz := fs.Float64("ghz", 0, "core `GHz` of processors whose --cpu-cost gives no ghz")
	sockets := fs.String("sockets", "1,2,4", "socket counts to consider")
	smt := fs.Int("smt", 1, "hardware threads per core")
	asJSON := fs.Bool("json", false, "print JSON")
	if done, err := parseNoArgs(e, fs, args); done {
		return err
	}
	var errs []error
	w, err := wf.workload()
	errs = append(errs, err, mf.check())
	if !(*target > 0) || math.IsInf(*target, 0) {
		errs = append(errs, badFlag("target-tps", modelNum(*target), "is not a throughput: want tps above 0, e.g. --target-tps 1000"))
	}
	if *license < 0 || math.IsNaN(*license) {
		errs = append(errs, badFlag("core-license-cost", modelNum(*license), "is negative: want 0 or more per core"))
	}
	if len(cpus) == 0 {
		errs = append(errs, errors.New("-cpu-cost: missing: give at least one processor, e.g. --cpu-cost 'cores=16,ghz=3,price=3000'"))
	}
	for i := range cpus {
		if cpus[i].GHz == 0 {
			if !(*ghz > 0) {
				errs = append(errs, fmt.Errorf("-cpu-cost: %q has no ghz: add ghz=F to it or give --ghz", cpus[i].Name))
				continue
			}
			cpus[i].GHz = *ghz
			cpus[i].Name = modelCPUName(cpus[i])
		}
	}
	ss, err := intList("sockets", *sockets, 1)
	errs = append(errs, err)
	if *smt < 1 {
		errs = append(errs, badFlag("smt", strconv.Itoa(*smt), "is not a thread count: want 1 or more"))
	}
	prices, err := parseModelSystemCost(*systemCost)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	mc, t, _, err := mf.machine(modelMaxOr(ss, 1))
	if err != nil {
		return err
	}
	if err := modelSocketsFit(*sockets, ss, mc, t); err != nil {
		return err
	}
	rows, err := model.Size(model.Sizing{Workload: w, Machine: mc, TargetTPS: *target, LicensePerCore: *license,
		CPUs: cpus, SystemPrice: prices, Sockets: ss, SMT: *smt})
	if err != nil {
		return fmt.Errorf("sizing: %w", err)
	}
	if *asJSON {
		return writeJSON(e.stdout, rows)
	}
	out := e.stdout
	describeModel(out, w, mc)
	fmt.Fprintf(out, "Target: %s tps; licence %s per physical core, all cores licensed; SMT %d\n\n", modelNum(*target), modelNum(*license), *smt)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "sockets\tprocessor\tcores\tlatency ns\ttps/core\ttotal tps\tcores needed\tmeets target\tlicences\thardware\ttotal cost\tcost per 1000 tps\t")
	for _, r := range rows {
		meets := "no"
		if r.Meets {
			meets = "yes"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%.1f\t%.2f\t%.1f\t%d\t%s\t%.0f\t%.0f\t%.0f\t%.0f\t\n", r.Sockets, r.CPU.Name, r.Cores,
			r.LatencyNS, r.TPSPerCore, r.TotalTPS, r.CoresNeeded, meets, r.LicenseCost, r.HardwareCost, r.TotalCost, r.CostPerKTPS)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !rows[0].Meets {
		fmt.Fprintf(out, "\nNo configuration reaches %s tps: add sockets, cores or a faster clock.\n", modelNum(*target))
	}
	return nil
}

// parseModelCPU reads 'cores=N,price=P[,ghz=F][,name=TEXT]'.
func parseModelCPU(s string) (model.CPUOption, error) {
	var c model.CPUOption
	seen := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		var err error
		switch k = strings.TrimSpace(k); {
		case !ok:
			err = fmt.Errorf("%q is not key=value", kv)
		case k == "cores":
			c.Cores, err = strconv.Atoi(v)
			if err == nil && c.Cores < 1 {
				err = fmt.Errorf("cores=%s: want 1 or more", v)
			}
		case k == "price":
			c.Price, err = strconv.ParseFloat(v, 64)
			if err == nil && (c.Price < 0 || math.IsInf(c.Price, 0)) {
				err = fmt.Errorf("price=%s: want 0 or more", v)
			}
		case k == "ghz":
			c.GHz, err = strconv.ParseFloat(v, 64)
			if err == nil && !(c.GHz > 0) {
				err = fmt.Errorf("ghz=%s: want a clock above 0", v)
			}
		case k == "name":
			c.Name = v
		default:
			err = fmt.Errorf("unknown key %q", k)
		}
		if err != nil {
			return c, fmt.Errorf("%v (want cores=N,price=P[,ghz=F][,name=TEXT], e.g. 'cores=16,ghz=3,price=3000')", err)
		}
		seen[k] = true
	}
	if !seen["cores"] || !seen["price"] {
		return c, errors.New("needs cores= and price= (want cores=N,price=P[,ghz=F][,name=TEXT], e.g. 'cores=16,ghz=3,price=3000')")
	}
	if c.Name == "" && c.GHz > 0 {
		c.Name = modelCPUName(c)
	}
	return c, nil
}

func modelCPUName(c model.CPUOption) string {
	return fmt.Sprintf("%dc %sGHz", c.Cores, modelNum(c.GHz))
}

// parseModelSystemCost reads 'S:PRICE,...'.
func parseModelSystemCost(s string) (map[int]float64, error) {
	m := map[int]float64{}
	if strings.TrimSpace(s) == "" {
		return m, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), ":")
		n, err1 := strconv.Atoi(k)
		p, err2 := strconv.ParseFloat(v, 64)
		if !ok || err1 != nil || err2 != nil || n < 1 || p < 0 || math.IsInf(p, 0) {
			return nil, badFlag("system-cost", s, "is not a list of SOCKETS:PRICE: want e.g. 1:4000,2:9000,4:40000")
		}
		m[n] = p
	}
	return m, nil
}

const modelDOPHelp = `Usage:
  numalab model dop --threshold T --cores-per-socket N [--cost X,...]
                    [--span-threshold T2 --sockets S] [--json]

The rule of thumb for a query's degree of parallelism, to hold measured
speedups against: no parallelism below the cost threshold T; DOP 2 at T;
double the DOP for every 4× of cost above T (4T → 4, 16T → 8, ...), capped at
the physical cores of one socket. A plan spans sockets only from the higher
--span-threshold on; below it, rather a lower DOP than a split across sockets.
Without --cost, prints the ladder from T/2 to 1024T.

Examples:
  numalab model dop --threshold 5 --cores-per-socket 16
  numalab model dop --threshold 5 --cores-per-socket 16 --cost 30,300,3000 --span-threshold 1000 --sockets 2
`

func cmdModelDOP(e *env, args []string) error {
	fs := newFlags(e, "model dop", modelDOPHelp)
	costs := fs.String("cost", "", "plan costs, comma-separated (default: a ladder of multiples of --threshold)")
	threshold := fs.Float64("threshold", 0, "`cost` from which a plan goes parallel (T)")
	cores := fs.Int("cores-per-socket", 0, "physical `cores` of one socket")
	span := fs.Float64("span-threshold", 0, "`cost` from which a plan may span sockets (default: never)")
	sockets := fs.Int("sockets", 1, "sockets a spanning plan may use")
	asJSON := fs.Bool("json", false, "print JSON")
	if done, err := parseNoArgs(e, fs, args); done {
		return err
	}
	var errs []error
	if !(*threshold > 0) || math.IsInf(*threshold, 0) {
		errs = append(errs, badFlag("threshold", modelNum(*threshold), "is not a cost threshold: want a cost above 0, e.g. --threshold 5"))
	}
	if *cores < 1 {
		errs = append(errs, badFlag("cores-per-socket", strconv.Itoa(*cores), "is not a core count: want 1 or more, e.g. --cores-per-socket 16"))
	}
	if *sockets < 1 {
		errs = append(errs, badFlag("sockets", strconv.Itoa(*sockets), "is not a socket count: want 1 or more"))
	}
	if *span < 0 || (*span > 0 && *span < *threshold) {
		errs = append(errs, badFlag("span-threshold", modelNum(*span), "is below --threshold: want a higher cost (or 0: never span)"))
	}
	if *span > 0 && *sockets < 2 {
		errs = append(errs, badFlag("sockets", strconv.Itoa(*sockets), "leaves nothing to span: with --span-threshold give --sockets 2 or more"))
	}
	var cs []float64
	if *costs != "" {
		var err error
		cs, err = modelFloats("cost", *costs)
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	rule := model.DOPRule{Threshold: *threshold, CoresPerSocket: *cores, SpanThreshold: *span, Sockets: *sockets}
	if err := rule.Validate(); err != nil {
		return err
	}
	if len(cs) == 0 {
		for f := 0.5; f <= 1024; f *= 2 {
			cs = append(cs, f**threshold)
		}
	}
	var advice []model.DOPAdvice
	for _, c := range cs {
		advice = append(advice, rule.DOP(c))
	}
	if *asJSON {
		return writeJSON(e.stdout, struct {
			Rule   model.DOPRule     `json:"rule"`
			Advice []model.DOPAdvice `json:"advice"`
		}{rule, advice})
	}
	fmt.Fprintf(e.stdout, "Rule: serial below cost %s; DOP 2 at %s; doubled for every 4× above; at most %d (one socket)", modelNum(*threshold), modelNum(*threshold), *cores)
	if *span > 0 {
		fmt.Fprintf(e.stdout, "; from cost %s up to %d over %d sockets", modelNum(*span), *cores**sockets, *sockets)
	}
	fmt.Fprint(e.stdout, "\n\n")
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cost\tcost/T\tDOP\tspans sockets\twhy")
	for _, a := range advice {
		spans := "no"
		if a.Spans {
			spans = "yes"
		}
		why := a.Reason
		if a.Raw != a.DOP {
			why += fmt.Sprintf(" (rule says %d)", a.Raw)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", modelNum(a.Cost), modelNum(a.Cost / *threshold), a.DOP, spans, why)
	}
	return tw.Flush()
}

const modelFitHelp = `Usage:
  numalab model fit --points 'L:TPS,...' --ghz F [prediction flags of 'numalab model']
  numalab model fit --run ID [--probe-run ID] [--store FILE]

Calibration: fits the workload's instructions per transaction I and miss
fraction m to measured per-core throughput at two or more effective memory
latencies (another NUMA node, SMT, a memory-hogging neighbour, another
clock). With x = L·f cycles the model is linear in x,

  C = f·10⁹ / tps = (1 − m)·I + m·I·x

so a least-squares line through the points gives m·I (slope) and (1 − m)·I
(intercept). Prints the fit, its R² (exactly 1 with two points: check with a
third), each point's residual, and, given --local-ns (and --remote-ns), the
'numalab model' table for the fitted workload: configurations this machine
does not have.

Each point is L_ns:tps_per_core, or L_ns:tps_per_core:GHz for a point at
another clock than --ghz.

With --run, the points come from a stored OLTP run ('numalab run oltp') and
a memory probe ('numalab probe mem'; the latest one stored before the OLTP
run unless --probe-run says which): one stream keeps one core busy, so a
one-stream cell's tps is the per-core rate, at the probe's local latency;
a one-stream cell on remote data gives a second point at the remote
latency. With both, I and m are fitted; with one point (a one-node
machine), m is kept at its default and I is fitted. The model then
predicts 1, 2, 4 and 8 sockets of this CPU, as 'numalab report' shows it.
Hardware counters (misses per transaction) would give a second equation,
but these guests expose none; the fit says which points it used.

Examples:
  numalab model fit --ghz 3 --points 67:27.27,96:19.54,125.5:15.17
  numalab model fit --ghz 2.5 --points 90:31.2,140:21.8,140:21.5 \
    --local-ns 90 --remote-ns 140 --sockets 1,2,4 --cores 16
`

func cmdModelFit(e *env, args []string) error {
	fs := newFlags(e, "model fit", modelFitHelp)
	points := fs.String("points", "", "measured points `L_ns:tps_per_core[:GHz],...`")
	ghz := fs.Float64("ghz", 0, "core clock of the points, `GHz`")
	mf := addMachineFlags(fs)
	ghzList := fs.String("ghz-list", "", "clocks to predict at, e.g. 3,2 (default --ghz)")
	sockets := fs.String("sockets", "1,2,4", "socket counts to predict")
	smt := fs.String("smt", "1", "hardware threads per core to predict")
	asJSON := fs.Bool("json", false, "print JSON")
	runID := fs.Int64("run", 0, "stored OLTP run `ID` to fit (instead of --points)")
	probeID := fs.Int64("probe-run", 0, "stored memory probe run `ID` for --run (default: the latest before it)")
	if done, err := parseNoArgs(e, fs, args); done {
		return err
	}
	if *runID != 0 {
		if *points != "" {
			return errors.New("model fit: give --run or --points, not both")
		}
		return modelFitRun(e, *mf.store, *runID, *probeID, *asJSON)
	}
	var errs []error
	if modelFlagGiven(fs, "ghz") && !(*ghz > 0) {
		errs = append(errs, badFlag("ghz", modelNum(*ghz), "is not a clock: want GHz above 0, e.g. --ghz 3"))
	}
	pts, err := parseModelPoints(*points, *ghz)
	errs = append(errs, err, mf.check())
	ks, err := intList("smt", *smt, 1)
	errs = append(errs, err)
	ss, err := intList("sockets", *sockets, 1)
	errs = append(errs, err)
	gs := []float64{*ghz}
	if *ghzList != "" {
		gs, err = modelFloats("ghz-list", *ghzList)
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fit, err := model.FitPoints(pts)
	if err != nil {
		return fmt.Errorf("fitting --points: %w", err)
	}
	var pred *model.Table
	if modelFlagGiven(fs, "local-ns") || *mf.topology != "" || *mf.fromRun != 0 {
		mc, t, machineGHz, err := mf.machine(modelMaxOr(ss, 1))
		if err != nil {
			return err
		}
		if err := modelSocketsFit(*sockets, ss, mc, t); err != nil {
			return err
		}
		if !(gs[0] > 0) {
			gs[0] = machineGHz
		}
		if !(gs[0] > 0) {
			return errors.New("-ghz: missing: predictions need a clock, e.g. --ghz 3 or --ghz-list 3,2")
		}
		tab, err := model.Evaluate(fit.Workload, mc, model.Grid{GHz: gs, SMT: ks, Sockets: ss})
		if err != nil {
			return fmt.Errorf("predicting from the fit: %w", err)
		}
		pred = &tab
	}
	if *asJSON {
		return writeJSON(e.stdout, struct {
			Fit         model.Fit    `json:"fit"`
			Predictions *model.Table `json:"predictions,omitempty"`
		}{fit, pred})
	}
	w := e.stdout
	fmt.Fprintf(w, "Fit of %d points (least squares on cycles per transaction against latency in cycles):\n", fit.Points)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  instructions per transaction (I)\t%.0f\n", fit.Workload.Instructions)
	fmt.Fprintf(tw, "  fraction waiting for memory (m)\t%.5f\n", fit.Workload.Miss)
	fmt.Fprintf(tw, "  memory waits per transaction (m·I)\t%.0f\n", fit.MissesPerTxn)
	fmt.Fprintf(tw, "  cycles not waiting ((1 − m)·I)\t%.0f\n", fit.NonMemCycles)
	r2 := fmt.Sprintf("%.6f", fit.R2)
	if fit.Points == 2 {
		r2 += " (two points always fit exactly: add a third to test the model)"
	}
	fmt.Fprintf(tw, "  R² of cycles per transaction\t%s\n", r2)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "latency ns\tGHz\tMcycles/txn\ttps/core\tfit tps/core\terror\t")
	for _, r := range fit.Residuals {
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%s\t%.2f\t%+.2f%%\t\n", modelNum(r.LatencyNS), modelNum(r.GHz), r.CyclesPerTxn/1e6, modelNum(r.TPSPerCore), r.FitTPSPerCore, 100*r.RelativeErrorTPS)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if pred != nil {
		fmt.Fprintln(w, "\nPredictions for the fitted workload:")
		return writeModelTable(w, *pred)
	}
	return nil
}

// parseModelPoints reads 'L_ns:tps_per_core[:GHz],...'.
func parseModelPoints(s string, ghz float64) ([]model.Point, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("-points: missing: give two or more measured points, e.g. --points 67:27.27,96:19.54")
	}
	var pts []model.Point
	for _, p := range strings.Split(s, ",") {
		f := strings.Split(strings.TrimSpace(p), ":")
		var v [3]float64
		ok := len(f) == 2 || len(f) == 3
		for i := 0; ok && i < len(f); i++ {
			var err error
			v[i], err = strconv.ParseFloat(f[i], 64)
			ok = err == nil && v[i] > 0 && !math.IsInf(v[i], 0)
		}
		if !ok {
			return nil, badFlag("points", p, "is not a point: want L_ns:tps_per_core or L_ns:tps_per_core:GHz with positive numbers, e.g. 67:27.27")
		}
		if len(f) == 2 {
			if !(ghz > 0) {
				return nil, fmt.Errorf("-ghz: missing: point %q gives no clock; give --ghz F or write it as L_ns:tps_per_core:GHz", p)
			}
			v[2] = ghz
		}
		pts = append(pts, model.Point{LatencyNS: v[0], TPSPerCore: v[1], GHz: v[2]})
	}
	return pts, nil
}

// modelFitRun fits the workload to a stored OLTP run and its memory probe,
// as the report does, and prints the fit and the predictions.
func modelFitRun(e *env, storePath string, runID, probeID int64, asJSON bool) error {
	st, err := store.Open(storePath)
	if err != nil {
		return err
	}
	defer st.Close()
	oltp, err := st.Get(runID)
	if err != nil {
		return err
	}
	if oltp.Kind != "oltp" {
		return fmt.Errorf("-run: run %d is a %s run, not an OLTP run (try 'numalab runs')", runID, oltp.Kind)
	}
	if probeID == 0 {
		runs, err := st.List()
		if err != nil {
			return err
		}
		for _, r := range runs {
			if r.Kind == "probe-mem" && r.ID < runID && r.Status != result.StatusFailed {
				probeID = r.ID
			}
		}
		if probeID == 0 {
			return fmt.Errorf("-run: no memory probe stored before run %d to give its latency (run 'numalab probe mem', or give --probe-run)", runID)
		}
	}
	probe, err := st.Get(probeID)
	if err != nil {
		return err
	}
	if probe.Kind != "probe-mem" {
		return fmt.Errorf("-probe-run: run %d is a %s run, not a memory probe", probeID, probe.Kind)
	}
	rep, err := report.Build([]*result.Run{probe, oltp})
	if err != nil {
		return err
	}
	md := rep.Model
	if md == nil || len(md.Points) == 0 {
		notes := ""
		if md != nil {
			notes = ": " + strings.Join(md.Notes, "; ")
		}
		return fmt.Errorf("fitting run %d with probe %d: nothing to fit%s", runID, probeID, notes)
	}
	if asJSON {
		return writeJSON(e.stdout, md)
	}
	w := e.stdout
	fmt.Fprintf(w, "Fit of OLTP run %d with memory probe run %d:\n  %s\n", runID, probeID, md.Method)
	fmt.Fprintf(w, "  I = %.0f instructions per transaction, m = %.5f\n", md.Workload.Instructions, md.Workload.Miss)
	if md.Fit != nil {
		fmt.Fprintf(w, "  R² of cycles per transaction: %.6f over %d points\n", md.Fit.R2, md.Fit.Points)
	}
	for _, n := range md.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	fmt.Fprintln(w, "\nPredictions for the fitted workload:")
	return writeModelTable(w, md.Table)
}
