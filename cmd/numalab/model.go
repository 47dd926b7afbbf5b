package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/topo"
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
	workload := workloadFlags(fs)
	mf := addMachineFlags(fs)
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
	errs = append(errs, mf.check())
	ks, err := cliflag.ParseInts("smt", *smt, 1)
	errs = append(errs, err)
	if *smtGain > 0 {
		errs = append(errs, model.CheckSMTGain(*smtGain, ks))
	}
	errs.BadIf(*smtRun != 0 && *smtGain > 0, "smt-run", strconv.FormatInt(*smtRun, 10), "measures the gain --smt-gain gives: give one or the other")
	var ss []int
	if *sockets != "" {
		ss, err = cliflag.ParseInts("sockets", *sockets, 1)
		errs = append(errs, err, model.Plausible("sockets", nil, nil, ss, *mf.unchecked))
	}
	gs, err := model.ParseClocks(*ghz, *ghzList, *mf.unchecked)
	errs = append(errs, err)
	if *asJSON && *asCSV {
		errs = append(errs, errors.New("-json and -csv: choose one output format"))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	spec, err := mf.spec()
	if err != nil {
		return err
	}
	g := model.Grid{GHz: gs, SMT: ks, Sockets: ss, SMTGain: *smtGain}
	if *smtRun != 0 {
		err := readStore(*mf.store, func(st *store.Store) error {
			r, err := calib.StoredSMTGain(st, *smtRun)
			g.SMTGain, g.SMTSource = r.Value, r.Source
			return err
		})
		if err != nil {
			return err
		}
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

// workloadFlags are --instructions and --miss: the workload they give,
// read once the flags are parsed.
func workloadFlags(fs *flag.FlagSet) func() model.Workload {
	instructions := cliflag.Number(fs, "instructions", model.DefaultInstructions, cliflag.Above(0), "want a count of instructions above 0, e.g. 10000000",
		"`instructions` per transaction (I)")
	miss := cliflag.Number(fs, "miss", model.DefaultMiss, cliflag.Between(0, 1), "want a fraction from 0 to 1, e.g. 0.05",
		"`fraction` of instructions that wait for a memory round trip (m), 0 to 1")
	return func() model.Workload { return model.Workload{Instructions: *instructions, Miss: *miss} }
}

// latencyFlags are --local-ns, --one-socket-ns and --remote-ns, the one
// definition of a machine's given latencies that every model subcommand
// reads (model.Latencies).
type latencyFlags struct {
	local, oneSocket *float64
	remote, twoHops  *float64
}

// addLatencyFlags defines the latency flags on fs; remoteUsage is
// --remote-ns's usage: what the command takes and does without it.
func addLatencyFlags(fs *flag.FlagSet, remoteUsage string) latencyFlags {
	remote, twoHops := new(float64), new(float64)
	fs.Func("remote-ns", remoteUsage, func(s string) (err error) {
		*remote, *twoHops, err = model.ParseRemoteNS(s)
		return err
	})
	return latencyFlags{
		remote: remote, twoHops: twoHops,
		local: cliflag.Number(fs, "local-ns", 0, cliflag.Above(0), "want ns above 0, e.g. --local-ns 67",
			"memory latency to the local node of a multi-socket server, `ns`, and of one socket unless --one-socket-ns gives it"),
		oneSocket: cliflag.Number(fs, "one-socket-ns", 0, cliflag.Above(0), "want ns above 0, e.g. --one-socket-ns 76",
			"memory latency of a one-socket server, `ns`, when lower than --local-ns on several sockets (Joe Chang: 76 against 89 to 93); default: --local-ns"),
	}
}

// read is the latencies given (0: not given).
func (l latencyFlags) read() model.Latencies {
	return model.Latencies{LocalNS: *l.local, OneSocketNS: *l.oneSocket, RemoteNS: *l.remote, TwoHopNS: *l.twoHops}
}

// machineFlags say where latencies and core counts come from.
type machineFlags struct {
	fs        *flag.FlagSet
	latencies latencyFlags
	buffer    *float64
	bufferMin *int
	locality  float64
	cores     *int
	topology  *string
	fromRun   *int64
	store     *string
	unchecked *bool
}

func addMachineFlags(fs *flag.FlagSet) *machineFlags {
	m := &machineFlags{fs: fs, locality: -1}
	m.latencies = addLatencyFlags(fs, "memory latency to a remote node, `ns`, or one per hop, ONE_HOP,TWO_HOPS: beyond 4 sockets three sockets one hop away, the rest two hops (needed for more than one socket)")
	m.buffer = cliflag.Number(fs, "buffer-ns", 0, cliflag.AtLeast(0), "want 0 or more ns, e.g. --buffer-ns 15",
		"extra latency on every access, `ns`, on configurations of at least --buffer-min-sockets sockets")
	m.bufferMin = cliflag.LeastInt(fs, "buffer-min-sockets", 4, 1, "smallest `socket count` that has the --buffer-ns memory buffer")
	fs.Func("locality", "`fraction` of accesses to the local node, 0 to 1 (default: none, every node equally likely)", func(s string) error {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0 && v <= 1) {
			return errors.New("want a fraction from 0 to 1, e.g. 0.8")
		}
		m.locality = v
		return nil
	})
	m.cores = cliflag.LeastInt(fs, "cores", 0, 1, "physical `cores` per socket (default: the topology's, else 1)")
	m.topology = fs.String("topology", "", "hwloc XML or numalab topology JSON `file` to take node latencies and cores from")
	m.fromRun = fs.Int64("from-run", 0, "stored run `ID` whose machine and memory probe give latencies, clock and cores")
	m.store = cliflag.Store(fs)
	m.unchecked = fs.Bool("unchecked", false, "accept model inputs outside the plausible ranges: latency 1 ns to 10 µs, clock 0.1 to 10 GHz, 1 to 64 sockets")
	return m
}

// figures are the machine's figures as given: calib.MachineSpec without
// the topology or probe that --topology or --from-run read.
func (m *machineFlags) figures() calib.MachineSpec {
	l := m.latencies.read()
	return calib.MachineSpec{LocalNS: l.LocalNS, RemoteNS: l.RemoteNS, OneSocketNS: l.OneSocketNS, TwoHopNS: l.TwoHopNS, BufferNS: *m.buffer, BufferMinSockets: *m.bufferMin,
		Locality: m.locality, CoresPerSocket: *m.cores}
}

// check refuses figures no machine has (unless --unchecked) and a source
// of the machine given twice; spec assumes it passed.
func (m *machineFlags) check() error {
	errs := cliflag.Errs{m.figures().Check(*m.unchecked)}
	if *m.topology != "" && *m.fromRun != 0 {
		errs = append(errs, errors.New("-topology and -from-run: choose one source of the machine"))
	}
	errs.BadIf(cliflag.Given(m.fs, "from-run") && *m.fromRun <= 0, "from-run", strconv.FormatInt(*m.fromRun, 10), "is not a run ID: want a positive number (try 'numalab runs')")
	return errors.Join(errs...)
}

// spec is the machine of the flags (calib.MachineSpec): the figures, and
// the topology file or the stored run they name.
func (m *machineFlags) spec() (calib.MachineSpec, error) {
	s := m.figures()
	switch {
	case *m.topology != "":
		t, err := topo.ReadFile(*m.topology)
		s.Topology = t
		return s, err
	case *m.fromRun != 0:
		err := readStore(*m.store, func(st *store.Store) (err error) {
			s.Topology, s.Probe, err = calib.StoredMachine(st, *m.fromRun)
			return err
		})
		return s, err
	}
	return s, nil
}

// readStore calls f with the results store at path, opened to read.
func readStore(path string, f func(*store.Store) error) error {
	st, err := store.OpenToRead(path)
	if err != nil {
		return err
	}
	defer st.Close()
	return f(st)
}
