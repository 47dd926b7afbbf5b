package modelinput

import (
	"errors"
	"flag"
	"strconv"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/topo"
)

// WorkloadFlags are --instructions and --miss: the workload they give,
// read once the flags are parsed.
func WorkloadFlags(fs *flag.FlagSet) func() model.Workload {
	instructions := cliflag.Number(fs, "instructions", model.DefaultInstructions, cliflag.Above(0),
		"want a count of instructions above 0, e.g. 10000000",
		"`instructions` per transaction (I)")
	miss := cliflag.Number(fs, "miss", model.DefaultMiss, cliflag.Between(0, 1), "want a fraction from 0 to 1, e.g. 0.05",
		"`fraction` of instructions that wait for a memory round trip (m), 0 to 1")
	return func() model.Workload { return model.Workload{Instructions: *instructions, Miss: *miss} }
}

// LatencyFlags are --local-ns, --one-socket-ns and --remote-ns, the one
// definition of a machine's given latencies that every model subcommand
// reads (model.Latencies).
type LatencyFlags struct {
	local, oneSocket *float64
	remote, twoHops  *float64
}

// AddLatencyFlags defines the latency flags on fs; remoteUsage is
// --remote-ns's usage: what the command takes and does without it.
func AddLatencyFlags(fs *flag.FlagSet, remoteUsage string) LatencyFlags {
	remote, twoHops := new(float64), new(float64)
	fs.Func("remote-ns", remoteUsage, func(s string) (err error) {
		*remote, *twoHops, err = model.ParseRemoteNS(s)
		return err
	})
	return LatencyFlags{
		remote: remote, twoHops: twoHops,
		local: cliflag.Number(fs, "local-ns", 0, cliflag.Above(0), "want ns above 0, e.g. --local-ns 67",
			"memory latency to the local node of a multi-socket server, `ns`, and of one socket "+
				"unless --one-socket-ns gives it"),
		oneSocket: cliflag.Number(fs, "one-socket-ns", 0, cliflag.Above(0), "want ns above 0, e.g. --one-socket-ns 76",
			"memory latency of a one-socket server, `ns`, when lower than --local-ns on several sockets (Joe Chang: "+
				"76 against 89 to 93); default: --local-ns"),
	}
}

// Read is the latencies given (0: not given).
func (l LatencyFlags) Read() model.Latencies {
	return model.Latencies{LocalNS: *l.local, OneSocketNS: *l.oneSocket, RemoteNS: *l.remote, TwoHopNS: *l.twoHops}
}

// MachineFlags say where latencies and core counts come from.
type MachineFlags struct {
	fs        *flag.FlagSet
	latencies LatencyFlags
	buffer    *float64
	bufferMin *int
	locality  float64
	cores     *int
	Topology  *string
	FromRun   *int64
	Store     *string
	Unchecked *bool
}

// AddMachineFlags defines the machine's flags on fs.
func AddMachineFlags(fs *flag.FlagSet) *MachineFlags {
	m := &MachineFlags{fs: fs, locality: -1}
	m.latencies = AddLatencyFlags(fs, "memory latency to a remote node, `ns`, or one per hop, ONE_HOP,TWO_HOPS: "+
		"beyond 4 sockets three sockets one hop away, the rest two hops (needed for more than one socket)")
	m.buffer = cliflag.Number(fs, "buffer-ns", 0, cliflag.AtLeast(0), "want 0 or more ns, e.g. --buffer-ns 15",
		"extra latency on every access, `ns`, on configurations of at least --buffer-min-sockets sockets")
	m.bufferMin = cliflag.LeastInt(fs, "buffer-min-sockets", 4, 1,
		"smallest `socket count` that has the --buffer-ns memory buffer")
	fs.Func("locality", "`fraction` of accesses to the local node, 0 to 1 (default: none, every node equally likely)", func(s string) error {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0 && v <= 1) {
			return errors.New("want a fraction from 0 to 1, e.g. 0.8")
		}
		m.locality = v
		return nil
	})
	m.cores = cliflag.LeastInt(fs, "cores", 0, 1, "physical `cores` per socket (default: the topology's, else 1)")
	m.Topology = fs.String("topology", "",
		"hwloc XML or numalab topology JSON `file` to take node latencies and cores from")
	m.FromRun = fs.Int64("from-run", 0, "stored run `ID` whose machine and memory probe give latencies, clock and cores")
	m.Store = cliflag.Store(fs)
	m.Unchecked = fs.Bool("unchecked", false,
		"accept model inputs outside the plausible ranges: latency 1 ns to 10 µs, clock 0.1 to 10 GHz, 1 to 64 sockets")
	return m
}

// figures are the machine's figures as given: calib.MachineSpec without
// the topology or probe that --topology or --from-run read.
func (m *MachineFlags) figures() calib.MachineSpec {
	l := m.latencies.Read()
	return calib.MachineSpec{LocalNS: l.LocalNS, RemoteNS: l.RemoteNS, OneSocketNS: l.OneSocketNS, TwoHopNS: l.TwoHopNS,
		BufferNS: *m.buffer, BufferMinSockets: *m.bufferMin,
		Locality: m.locality, CoresPerSocket: *m.cores}
}

// Check refuses figures no machine has (unless --unchecked) and a source
// of the machine given twice; Spec assumes it passed.
func (m *MachineFlags) Check() error {
	errs := cliflag.Errs{m.figures().Check(*m.Unchecked)}
	if *m.Topology != "" && *m.FromRun != 0 {
		errs = append(errs, errors.New("-topology and -from-run: choose one source of the machine"))
	}
	errs.BadIf(cliflag.Given(m.fs, "from-run") && *m.FromRun <= 0, "from-run", strconv.FormatInt(*m.FromRun, 10),
		"is not a run ID: want a positive number (try 'numalab runs')")
	return errors.Join(errs...)
}

// Spec is the machine of the flags (calib.MachineSpec): the figures, and
// the topology file or the stored run they name.
func (m *MachineFlags) Spec() (calib.MachineSpec, error) {
	s := m.figures()
	switch {
	case *m.Topology != "":
		t, err := topo.ReadFile(*m.Topology)
		s.Topology = t
		return s, err
	case *m.FromRun != 0:
		err := readStore(*m.Store, func(st *store.Store) (err error) {
			s.Topology, s.Probe, err = calib.StoredMachine(st, *m.FromRun)
			return err
		})
		return s, err
	}
	return s, nil
}

// FitRunFlag is --fit-run of 'model fit' and 'model buy'.
func FitRunFlag(fs *flag.FlagSet) *int64 {
	return fs.Int64("fit-run", 0, "stored model-fit run `ID` (eval's page-size points) whose A and M --run uses "+
		"(default: the newest in the store; with none, the OLTP run alone)")
}
