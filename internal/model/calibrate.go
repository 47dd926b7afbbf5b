package model

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/units"
)

// ProbeLatency is what a stored memory probe ('numalab probe mem') gives
// the model. ReadProbe chooses it by one rule:
//
//   - clock: the summary's measured clock, else the median of the stored
//     clock measurements;
//   - local latency: the DRAM latency (memlat.Summary.DRAM): the NUMA
//     matrix's local latency, else the fully random chain's DRAM latency
//     with 4 KiB pages, else with 2 MiB pages;
//   - remote latency: the mean of the matrix's off-diagonal cells; 0 on a
//     machine with one node, where it cannot be measured, and 0 when the
//     matrix measured no NUMA effect (memlat.Summary.NoNUMAEffect): such a
//     matrix is never a latency ratio, so the probe counts as one node.
type ProbeLatency struct {
	Run       int64
	Summary   *memlat.Summary // nil: the probe stored none
	GHz       float64         // 0: no clock measured
	LocalNS   float64         // 0: no DRAM latency measured
	LocalWhat string          // which measurement LocalNS is, in words
	RemoteNS  float64         // 0: one node, or no NUMA effect
	// NoNUMAEffect is set when the matrix had remote cells but measured
	// remote no slower than local; its remote latency is then dropped.
	NoNUMAEffect bool
}

// ReadProbe chooses the clock and latencies of a stored memory probe.
func ReadProbe(probe *result.Run) (ProbeLatency, error) {
	p := ProbeLatency{Run: probe.ID}
	var err error
	if p.Summary, err = memlat.KindSummary.Last(probe); err != nil {
		return p, err
	}
	if s := p.Summary; s != nil {
		p.GHz, p.RemoteNS = s.GHz, s.RemoteNS
		if s.NoNUMAEffect {
			p.RemoteNS, p.NoNUMAEffect = 0, true
		}
		p.LocalNS, p.LocalWhat = s.DRAM()
	}
	if !(p.GHz > 0) {
		clocks, err := memlat.KindClock.All(probe)
		if err != nil {
			return p, err
		}
		var g []float64
		for _, c := range clocks {
			g = append(g, c.GHz.Median)
		}
		p.GHz = stats.Median(g)
	}
	return p, nil
}

// AssumedRemoteRatio is remote/local latency on a one-node machine: the
// example 2-socket server of the model (67 ns local, 125 ns remote).
const AssumedRemoteRatio = 125.0 / 67.0

// PredictSockets are the socket counts a calibration predicts.
var PredictSockets = []int{1, 2, 4, 8}

// Calibration is the model calibrated to stored runs: the probe's clock
// and latencies, the workload fitted to the OLTP run (or the default
// workload without one), and the prediction for PredictSockets sockets of
// the probed CPU.
type Calibration struct {
	ProbeRun       int64   `json:"probe_run"`
	OLTPRun        int64   `json:"oltp_run,omitempty"`
	GHz            float64 `json:"ghz"`
	LocalNS        float64 `json:"local_ns"`
	RemoteNS       float64 `json:"remote_ns"`
	RemoteAssumed  bool    `json:"remote_assumed"` // true: one node measured, remote latency assumed
	CoresPerSocket int     `json:"cores_per_socket"`
	// Method says in words how the workload's I and m were obtained.
	Method   string   `json:"method"`
	Workload Workload `json:"workload"`
	Points   []Point  `json:"points,omitempty"` // the measurements fitted
	Fit      *Fit     `json:"fit,omitempty"`    // two or more points: the fit and its quality (R², residuals)
	Table    Table    `json:"table"`
	// Assumptions are every input of the prediction with its value and
	// source; Residuals each fitted cell's measured and predicted
	// throughput; Flags fitted parameters outside their plausible range.
	Assumptions []Assumption `json:"assumptions,omitempty"`
	Residuals   []Residual   `json:"residuals,omitempty"`
	Flags       []string     `json:"flags,omitempty"`
	// HeldOut predicts cells the fit did not see (see holdOut); nil
	// without such cells.
	HeldOut *HeldOut `json:"held_out,omitempty"`
	Notes   []string `json:"notes,omitempty"`

	cells []string // per point, the cells it came from
}

// ErrNoProbe is returned by Calibrate without a memory probe run.
var ErrNoProbe = errors.New("no memory probe run to calibrate with (try 'numalab probe mem --quick')")

// Calibrate calibrates the model to runs: the memory probe among them (a
// run of kind result.RunProbeMem) gives the clock and the latencies
// (ReadProbe's rule), the OLTP run (result.RunOLTP), if any, the workload.
// Cores per socket are the smallest package's of the machine the runs
// recorded (result.MachineRun), SMT its threads per core.
//
// The fit uses the OLTP run's one-stream cells: one stream keeps exactly
// one core busy, so its tps (the median over repeats) is the per-core
// rate. The fastest series on local (or unplaced) data is a point at the
// local latency; where remote data was measured too, the fastest series on
// remote data is a point at the measured remote latency. Two points fit
// both I and m; one point fits I with m kept at its default. A one-node
// machine's remote latency is assumed (AssumedRemoteRatio × local) and
// never fitted. The OLTP run's cells the fit did not see are predicted
// and compared with what they measured (HeldOut, see holdOut): remote data
// on several nodes, the neighbour cells on one.
//
// What cannot be predicted (no summary, no clock, no DRAM latency) is said
// in Notes with an empty Table; an error is a run that cannot be read.
func Calibrate(runs ...*result.Run) (*Calibration, error) {
	var probe, oltp *result.Run
	for _, r := range runs {
		switch r.Kind {
		case result.RunProbeMem:
			probe = r
		case result.RunOLTP:
			oltp = r
		}
	}
	if probe == nil {
		return nil, ErrNoProbe
	}
	p, err := ReadProbe(probe)
	if err != nil {
		return nil, err
	}
	m := &Calibration{ProbeRun: probe.ID, GHz: p.GHz}
	s := p.Summary
	if s == nil || !(p.GHz > 0) {
		m.Notes = append(m.Notes, fmt.Sprintf("run %d stored no memlat.Summary with a clock and DRAM latency: no prediction", probe.ID))
		return m, nil
	}
	m.LocalNS = p.LocalNS
	if !(m.LocalNS > 0) {
		m.Notes = append(m.Notes, fmt.Sprintf("run %d measured no DRAM latency: no prediction", probe.ID))
		return m, nil
	}
	m.Assumptions = append(m.Assumptions,
		Assumption{Name: AssumeClock, Value: p.GHz, Unit: "GHz", Basis: Measured, Source: fmt.Sprintf("the core clock memory probe run %d measured", probe.ID)},
		Assumption{Name: AssumeLocal, Value: m.LocalNS, Unit: "ns", Basis: Measured, Source: fmt.Sprintf("%s, memory probe run %d, %s working set", p.LocalWhat, probe.ID, units.Bytes(s.WorkingSetBytes))})
	switch {
	case p.RemoteNS > 0:
		m.RemoteNS = p.RemoteNS
		m.Assumptions = append(m.Assumptions, Assumption{Name: AssumeRemote, Value: m.RemoteNS, Unit: "ns", Basis: Measured,
			Source: fmt.Sprintf("the mean of the NUMA matrix's off-diagonal cells, memory probe run %d", probe.ID)})
	default:
		why := "this machine has one NUMA node, so remote latency cannot be measured"
		if p.NoNUMAEffect {
			why = fmt.Sprintf("memory probe run %d's NUMA matrix measured no NUMA effect (remote no slower than local: emulated or interleaved nodes), so it is not used as a latency ratio and only its local latency is taken, as on one node", probe.ID)
		}
		m.RemoteNS, m.RemoteAssumed = m.LocalNS*AssumedRemoteRatio, true
		m.Assumptions = append(m.Assumptions, Assumption{Name: AssumeRemote, Value: m.RemoteNS, Unit: "ns", Basis: Assumed,
			Source: fmt.Sprintf("%s× the local %s ns, the ratio of docs/model.md's 2-socket example (67 ns local, 125 ns remote): %s; 'numalab model --from-run %d --remote-ns N' models another",
				fmtF(AssumedRemoteRatio, 2), fmtF(m.LocalNS, 1), why, probe.ID)})
	}
	m.Assumptions = append(m.Assumptions, Assumption{Name: AssumeBuffer, Value: 0, Unit: "ns", Basis: Assumed,
		Source: "no memory buffer chip in the path of any socket count (the model's literature example adds 15 ns on 4 sockets; 'numalab model --buffer-ns' models one)"})
	m.CoresPerSocket, m.Workload = 1, Default()
	smt := []int{1}
	if mr := result.MachineRun(runs); mr != nil {
		m.CoresPerSocket = max(coresPerPackage(mr.Machine), 1)
		if k := mr.Machine.ThreadsPerCore(); k > 1 {
			smt = append(smt, k)
		}
	}
	m.Method = fmt.Sprintf("docs/model.md's default workload (I = %s instructions, m = %s): no OLTP run to fit", fmtF(DefaultInstructions, 0), fmtF(DefaultMiss, 2))
	if oltp != nil {
		if err := m.fitOLTP(oltp); err != nil {
			return nil, err
		}
	}
	m.stateWorkload(smt)
	m.plausibility()
	mc := Machine{Source: fmt.Sprintf("run %d", probe.ID), LocalNS: m.LocalNS, RemoteNS: m.RemoteNS,
		CoresPerSocket: m.CoresPerSocket, Locality: -1}
	t, err := Evaluate(m.Workload, mc, Grid{GHz: []float64{p.GHz}, SMT: smt, Sockets: PredictSockets})
	if err != nil {
		m.Notes = append(m.Notes, "evaluating the model: "+err.Error())
		return m, nil
	}
	m.Table = t
	return m, nil
}

// seriesTPS is one series' one-stream throughput: the median over repeats.
type seriesTPS struct {
	label string
	tps   float64
	cells int
}

// oneStream returns the OLTP run's one-stream series on local (or
// unplaced) data and on remote data, each the fastest; nil when there is
// none.
func oneStream(run *result.Run) (local, remote *seriesTPS, err error) {
	cells, err := result.KindCell.All(run)
	if err != nil {
		return nil, nil, err
	}
	var order []string
	tps := map[string][]float64{}
	data := map[string]string{}
	for _, c := range cells {
		label, d := c.Series(run.Machine)
		if _, ok := data[label]; !ok {
			order = append(order, label)
			data[label] = d
		}
		if c.Streams == 1 {
			tps[label] = append(tps[label], c.TPS)
		}
	}
	for _, label := range order {
		v := stats.Median(tps[label])
		if !(v > 0) {
			continue
		}
		best := &local
		if data[label] == "remote" {
			best = &remote
		}
		if *best == nil || v > (*best).tps {
			*best = &seriesTPS{label, v, len(tps[label])}
		}
	}
	return local, remote, nil
}

// fitOLTP fits the workload to an OLTP run's one-stream cells, as
// Calibrate says.
func (m *Calibration) fitOLTP(run *result.Run) error {
	local, remote, err := oneStream(run)
	if err != nil {
		return err
	}
	if local == nil {
		m.Notes = append(m.Notes, fmt.Sprintf("OLTP run %d has no one-stream cell on local data: the workload is not fitted", run.ID))
		return nil
	}
	m.OLTPRun = run.ID
	m.fitSeries(run, local, remote)
	return m.holdOut(run, local, remote)
}

// fitSeries fits the workload to the one-stream series on local and, if
// measured, remote data.
func (m *Calibration) fitSeries(run *result.Run, local, remote *seriesTPS) {
	m.cells = []string{fmt.Sprintf("run %d's one-stream cells of %s (median)", run.ID, local.label)}
	lp := Point{LatencyNS: m.LocalNS, GHz: m.GHz, TPSPerCore: local.tps}
	m.Points = []Point{lp}
	if remote != nil && !m.RemoteAssumed {
		m.cells = append(m.cells, fmt.Sprintf("run %d's one-stream cells of %s (median)", run.ID, remote.label))
		rp := Point{LatencyNS: m.RemoteNS, GHz: m.GHz, TPSPerCore: remote.tps}
		f, err := FitPoints([]Point{lp, rp})
		if err == nil {
			m.Points = append(m.Points, rp)
			m.Fit, m.Workload = &f, f.Workload
			m.Method = fmt.Sprintf("fitted to OLTP run %d: one stream on local data (%s, %s tps) at %s ns and on remote data (%s, %s tps) at %s ns; both I and m fitted",
				run.ID, local.label, fmtF(local.tps, 0), fmtF(m.LocalNS, 1), remote.label, fmtF(remote.tps, 0), fmtF(m.RemoteNS, 1))
			return
		}
		m.Notes = append(m.Notes, "fitting I and m to local and remote data failed, so m is kept at its default: "+err.Error())
	}
	// One point: C = f·10⁹/tps = I·((1 − m)·1 + m·L·f), m fixed.
	c := m.GHz * 1e9 / local.tps
	w := fitOne(local.tps, m.LocalNS, m.GHz)
	m.Workload = w
	m.Method = fmt.Sprintf("fitted to OLTP run %d: one stream on %s gave %s tps at %s ns and %s GHz, i.e. %s cycles per transaction; with a single latency point I and m cannot both be fitted, so m is kept at the default %s and I = %s instructions is fitted",
		run.ID, local.label, fmtF(local.tps, 0), fmtF(m.LocalNS, 1), fmtF(m.GHz, 2), fmtF(c, 0), fmtF(w.Miss, 2), fmtF(w.Instructions, 0))
}

// stateWorkload states the workload's and SMT's assumptions and the
// residual of every fitted point.
func (m *Calibration) stateWorkload(smt []int) {
	iSrc, mSrc, iBasis, mBasis := m.Method, m.Method, Fitted, Fitted
	if m.OLTPRun == 0 {
		iBasis, mBasis = Assumed, Assumed
		iSrc = "docs/model.md's default (the literature's example transaction): no OLTP run to fit"
		mSrc = iSrc
	} else if m.Fit == nil {
		mBasis = Assumed
		iSrc = fmt.Sprintf("fitted to OLTP run %d's one-stream cells at the local latency, with m assumed", m.OLTPRun)
		mSrc = fmt.Sprintf("docs/model.md's default: one latency point (run %d) cannot fit both I and m", m.OLTPRun)
	} else {
		iSrc = fmt.Sprintf("fitted to OLTP run %d's one-stream cells on local and remote data", m.OLTPRun)
		mSrc = iSrc
	}
	m.Assumptions = append(m.Assumptions,
		Assumption{Name: AssumeInstructions, Value: math.Round(m.Workload.Instructions), Basis: iBasis, Source: iSrc},
		Assumption{Name: AssumeMiss, Value: m.Workload.Miss, Basis: mBasis, Source: mSrc})
	k := smt[len(smt)-1]
	gain := SMTTPSPerCore(m.Workload, m.LocalNS, m.GHz, max(k, 2)) / TPSPerCore(m.Workload, m.LocalNS, m.GHz)
	m.Assumptions = append(m.Assumptions, Assumption{Name: AssumeSMT, Value: gain, Unit: "×", Basis: Assumed,
		Source: fmt.Sprintf("%d threads per core overlap each other's memory waits up to one instruction per cycle, min(k/C, 1/I)·f·10⁹, at the local latency; not measured", max(k, 2))})
	for i, p := range m.Points {
		fc := CyclesPerTxn(m.Workload, p.LatencyNS, p.GHz)
		ft := p.GHz * 1e9 / fc
		m.Residuals = append(m.Residuals, Residual{Point: p, CyclesPerTxn: p.GHz * 1e9 / p.TPSPerCore, FitCyclesPerTxn: fc,
			FitTPSPerCore: ft, RelativeErrorTPS: (ft - p.TPSPerCore) / p.TPSPerCore, Cell: m.cells[i]})
	}
}

// fmtF prints v with d decimals.
func fmtF(v float64, d int) string { return strconv.FormatFloat(v, 'f', d, 64) }

// ThreadsPerCore is the most hardware threads per core the prediction
// covers: the machine's threads per core (1 without one).
func (m *Calibration) ThreadsPerCore() int {
	k := 1
	for _, r := range m.Table.Rows {
		k = max(k, r.SMT)
	}
	return k
}
