package calib

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/numalab/numalab/internal/calibrated"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/units"
)

// Calibration is the model calibrated to stored runs (calibrated.Model),
// with what calibrating it keeps for a later WithFit.
type Calibration struct {
	calibrated.Model

	cells []string // per point, the cells it came from
	// pairs are the OLTP run's neighbour and control cells, paired
	// (holdOut); other predicts them.
	pairs    []NeighbourPair
	pairsRun int64
	// fromFit: one socket's latency is the measured fit's chain already
	// (the probe measured none: ProbeLatency.FromFit).
	fromFit bool
}

// ErrNoProbe is returned by Calibrate without a memory probe run.
var ErrNoProbe = errors.New("no memory probe run to calibrate with (try 'numalab probe mem --quick')")

// Calibrate calibrates the model to runs: the memory probe among them (a
// run of kind result.RunProbeMem) gives the clock and the latencies
// (ReadProbe's rule), the OLTP run (result.RunOLTP), if any, the
// workload; without one, a run of the user's scripts (result.RunSQL),
// whose cells are alike.
// Cores per socket are the smallest package's of the machine the runs
// recorded (result.MachineRun), SMT its threads per core.
//
// Latencies: a one-node machine's measured latency is one socket's; a
// multi-socket server's local latency is then PublishedMultiSocketLocal ×
// it and its remote latency PublishedRemoteRatio × that, both assumed. On
// several nodes the matrix gives local and remote, and one socket's
// latency is assumed from the local by the same published ratio.
//
// The fit uses the OLTP run's one-stream cells: one stream keeps exactly
// one core busy, so its tps is the per-core rate. Every repeat of the
// fastest series on local (or unplaced) data is a point at the local
// latency; where remote data was measured too, every repeat of the
// fastest series on remote data is a point at the measured remote
// latency. Two latencies fit A and M (with intervals from three points
// on); one leaves M to the published stall share (PublishedStallShare).
// The SMT gain is measured where the run has smt=on and smt=off cells.
// The OLTP run's cells the fit did not see are predicted and compared with
// what they measured (HeldOut, see holdOut).
//
// What cannot be predicted (no summary, no clock, no DRAM latency) is said
// in Notes with an empty Table; an error is a run that cannot be read.
func Calibrate(runs ...*result.Run) (*Calibration, error) { return CalibrateFor("", runs...) }

// CalibrateFor is Calibrate for engine: only its OLTP and script runs,
// and its measured fit, are taken; "" is Calibrate's choice (the OLTP
// run's engine, else the newest fit's).
func CalibrateFor(engine string, runs ...*result.Run) (*Calibration, error) {
	var probe, oltp, script *result.Run
	var fits []*result.Run
	for _, r := range runs {
		switch r.Kind {
		case result.RunProbeMem:
			probe = r
		case result.RunOLTP:
			if engine == "" || RunEngine(r) == engine {
				oltp = r
			}
		case result.RunSQL:
			if engine == "" || RunEngine(r) == engine {
				script = r
			}
		case RunFit:
			fits = append(fits, r)
		}
	}
	if probe == nil {
		return nil, ErrNoProbe
	}
	if oltp == nil {
		oltp = script // the user's scripts, where numalab's own OLTP run is not among the runs
	}
	p, err := ReadProbe(probe)
	if err != nil {
		return nil, err
	}
	m := &Calibration{Model: calibrated.Model{ProbeRun: probe.ID, GHz: p.GHz, SMT: model.PublishedSMTGain,
		Engine: calibrated.LegacyEngine}}
	switch {
	case engine != "":
		m.Engine = engine
	case oltp != nil:
		m.Engine = RunEngine(oltp)
	case len(fits) > 0:
		// No run to fit: the model rests on the newest measured fit, of
		// whichever engine.
		if f, err := KindMeasuredFit.Last(fits[len(fits)-1]); err == nil && f != nil {
			m.Engine = f.FitEngine()
		}
	}
	workload := "" // the run's the model rests on: tpcc-ro, or the user's scripts
	if oltp != nil {
		workload = RunWorkload(oltp)
	}
	measured, other, err := engineFit(fits, m.Engine, workload)
	if err != nil {
		return nil, err
	}
	if other != "" {
		m.Notes = append(m.Notes, other)
	}
	s := p.Summary
	if s == nil || !(p.GHz > 0) {
		m.Notes = append(m.Notes,
			fmt.Sprintf("run %d stored no memlat.Summary with a clock and DRAM latency: no prediction", probe.ID))
		return m, nil
	}
	if !(p.LocalNS > 0) && len(fits) > 0 {
		// A probe cut before its DRAM point (eval's, at its share of the
		// budget on a busy machine): the page-size step's chain, timed
		// next to its cells, is a DRAM latency measured on this machine
		// (any engine's: a chain's latency is the memory's).
		if err := fromMeasured(&p, cmp.Or(measured, fits[len(fits)-1])); err != nil {
			return nil, err
		}
	}
	if !(p.LocalNS > 0) {
		m.Notes = append(m.Notes, fmt.Sprintf("run %d measured no DRAM latency: no prediction", probe.ID))
		return m, nil
	}
	m.latencies(p)
	m.fromFit = p.FromFit
	m.CoresPerSocket = 1
	smt := []int{1}
	if mr := result.MachineRun(runs); mr != nil {
		m.CoresPerSocket = max(coresPerPackage(mr.Machine), 1)
		if k := mr.Machine.ThreadsPerCore(); k > 1 {
			smt = append(smt, k)
		}
	}
	m.Workload = model.Default()
	m.Method = "no OLTP run to fit: A and M assumed from docs/model.md's default transaction"
	if oltp != nil {
		if err := m.fitOLTP(oltp); err != nil {
			return nil, err
		}
		if err := m.measureSMT(oltp); err != nil {
			return nil, err
		}
	}
	m.StallShare = m.Workload.Waits() * model.LatencyCycles(m.OneSocketNS, m.GHz) /
		model.CyclesPerTxn(m.Workload, m.OneSocketNS, m.GHz)
	m.stateWorkload()
	m.plausibility()
	t, err := model.Evaluate(m.Workload, m.Machine(),
		model.Grid{GHz: []float64{p.GHz}, SMT: smt, Sockets: PredictSockets, SMTGain: m.SMT.Value})
	if err != nil {
		m.Notes = append(m.Notes, "evaluating the model: "+err.Error())
		return m, nil
	}
	m.Table = t
	if measured != nil {
		return m.withMeasured(measured)
	}
	m.Other = m.other()
	return m, nil
}

// withMeasured is m with A and M from the measured fit stored in run (a
// RunFit run), when it fitted; m with a note saying why not otherwise.
func (m *Calibration) withMeasured(run *result.Run) (*Calibration, error) {
	f, err := KindMeasuredFit.Last(run)
	if err != nil {
		return nil, err
	}
	switch {
	case f == nil:
		m.Notes = append(m.Notes, fmt.Sprintf("run %d stored no measured fit: A and M rest on %s", run.ID, m.RestsOn()))
		m.Other = m.other()
		return m, nil
	case f.Fit == nil:
		m.Notes = append(m.Notes, fmt.Sprintf("run %d's cells did not fit (%s): A and M rest on %s",
			run.ID, f.FitError, m.RestsOn()))
		m.Measured = f
		m.Other = m.other()
		return m, nil
	}
	pts, cells := f.Points()
	method := fmt.Sprintf("fitted to run %d: %s; %s", run.ID, f.What, f.Method)
	if off := f.OffCells(); len(off) > 0 {
		method += fmt.Sprintf("; %d cell(s) left out, measured while the speed sentinel's core reference read more "+
			"than %.0f%% off its median (%s)", len(off), 100*f.Verdict.Tolerance, strings.Join(off, ", "))
	}
	if m.RemoteAssumed && !m.fromFit && len(f.Memory) > 0 && f.Memory[0].LatencyNS > 0 {
		mem := f.Memory[0]
		m = m.atOneSocket(mem.LatencyNS, fmt.Sprintf(
			"a random chain in %s timed next to run %d's cells (%s, mapped as the OLTP data is), not the probe's %s ns",
			mem.Name, run.ID, units.Bytes(mem.ChainBytes), model.Fixed(m.OneSocketNS, 1)))
	}
	c := m.WithFit(*f.Fit, pts, cells, method)
	c.Measured, c.FitRun = f, run.ID
	c.Other = c.other()
	return c, nil
}

// atOneSocket is m (one node measured) with one socket's latency ns,
// measured as source says, and the multi-socket latencies assumed from it
// by the same published ratios.
func (m *Calibration) atOneSocket(ns float64, source string) *Calibration {
	c := *m
	ml, rr := model.PublishedMultiSocketLocal, model.PublishedRemoteRatio
	c.OneSocketNS, c.LocalNS = ns, ns*ml.Value
	c.RemoteNS = c.LocalNS * rr.Value
	c.Assumptions = slices.Clone(m.Assumptions)
	for i, a := range c.Assumptions {
		switch a.Name {
		case AssumeOneSocket:
			a.Value, a.Source = ns, source
		case AssumeLocal:
			a.Value, a.Low, a.High = c.LocalNS, ns*ml.Low, ns*ml.High
		case AssumeRemote:
			a.Value, a.Low, a.High = c.RemoteNS, c.LocalNS*rr.Low, c.LocalNS*rr.High
		}
		c.Assumptions[i] = a
	}
	return &c
}

// latencies sets one socket's, the multi-socket local and the remote
// latency from the probe, each measured or from the published ratios, and
// states them.
func (m *Calibration) latencies(p ProbeLatency) {
	s := p.Summary
	ml, rr := model.PublishedMultiSocketLocal, model.PublishedRemoteRatio
	m.Assumptions = append(m.Assumptions,
		Assumption{Name: AssumeClock, Value: p.GHz, Unit: "GHz", Basis: Measured,
			Source: fmt.Sprintf("the core clock memory probe run %d measured", p.Run)})
	measured := p.LocalWhat
	if !p.FromFit {
		measured = fmt.Sprintf("%s, memory probe run %d, %s working set", p.LocalWhat, p.Run, units.Bytes(s.WorkingSetBytes))
	}
	if p.RemoteNS > 0 {
		m.LocalNS, m.RemoteNS = p.LocalNS, p.RemoteNS
		m.OneSocketNS = m.LocalNS / ml.Value
		m.Assumptions = append(m.Assumptions,
			Assumption{Name: AssumeOneSocket, Value: m.OneSocketNS, Unit: "ns", Basis: Assumed,
				Low: m.LocalNS / ml.High, High: m.LocalNS / ml.Low,
				Source: fmt.Sprintf("the measured local latency / %s: %s", model.Sig(ml.Value, 4), ml.Source)},
			Assumption{Name: AssumeLocal, Value: m.LocalNS, Unit: "ns", Basis: Measured, Source: measured},
			Assumption{Name: AssumeRemote, Value: m.RemoteNS, Unit: "ns", Basis: Measured,
				Source: fmt.Sprintf("the mean of the NUMA matrix's off-diagonal cells, memory probe run %d", p.Run)})
	} else {
		why := "this machine has one NUMA node, so its latency is one socket's and a multi-socket server's cannot be measured"
		if p.NoNUMAEffect {
			why = fmt.Sprintf("memory probe run %d's NUMA matrix measured no NUMA effect (remote no slower than local: "+
				"emulated or interleaved nodes), so only its local latency is taken, as one socket's", p.Run)
		}
		m.OneSocketNS = p.LocalNS
		m.LocalNS = m.OneSocketNS * ml.Value
		m.RemoteNS, m.RemoteAssumed = m.LocalNS*rr.Value, true
		m.Assumptions = append(m.Assumptions,
			Assumption{Name: AssumeOneSocket, Value: m.OneSocketNS, Unit: "ns", Basis: Measured, Source: measured},
			Assumption{Name: AssumeLocal, Value: m.LocalNS, Unit: "ns", Basis: Assumed,
				Low: m.OneSocketNS * ml.Low, High: m.OneSocketNS * ml.High,
				Source: fmt.Sprintf("%s× one socket's: %s; %s", model.Sig(ml.Value, 4), ml.Source, why)},
			Assumption{Name: AssumeRemote, Value: m.RemoteNS, Unit: "ns", Basis: Assumed,
				Low: m.LocalNS * rr.Low, High: m.LocalNS * rr.High,
				Source: fmt.Sprintf(
					"%s× the multi-socket local latency: %s; 'numalab model --from-run %d --remote-ns N' models another",
					model.Sig(rr.Value, 4), rr.Source, p.Run)})
	}
	m.Assumptions = append(m.Assumptions, Assumption{Name: AssumeBuffer, Value: 0, Unit: "ns", Basis: Assumed,
		Source: "no memory buffer chip in the path of any socket count (the model's literature example adds 15 ns " +
			"on 4 sockets; 'numalab model --buffer-ns' models one)"})
}

// seriesTPS is one series' one-stream throughput: the median over
// repeats, and every repeat.
type seriesTPS struct {
	label string
	tps   float64
	all   []float64
}

// cells is how many repeats the series has.
func (s *seriesTPS) cells() int { return len(s.all) }

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
		if c.Streams == 1 && c.TPS > 0 {
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
			*best = &seriesTPS{label, v, tps[label]}
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
		m.Notes = append(m.Notes, fmt.Sprintf("%s %d has no one-stream cell on local data: the workload is not fitted",
			RunLabel(run.Kind), run.ID))
		return nil
	}
	m.OLTPRun, m.OLTPLabel = run.ID, RunLabel(run.Kind)
	m.fitSeries(run, local, remote)
	return m.holdOut(run, local, remote)
}

// fitSeries fits A and M to the one-stream series on local and, if
// measured, remote data.
func (m *Calibration) fitSeries(run *result.Run, local, remote *seriesTPS) {
	localNS := m.LocalNS
	if m.RemoteAssumed {
		localNS = m.OneSocketNS
	}
	var pts []model.Point
	for _, v := range local.all {
		pts = append(pts, model.Point{LatencyNS: localNS, GHz: m.GHz, TPSPerCore: v})
		m.cells = append(m.cells, fmt.Sprintf("a one-stream cell of run %d's %s", run.ID, local.label))
	}
	if remote != nil && !m.RemoteAssumed {
		two := slices.Clone(pts)
		var cells []string
		for _, v := range remote.all {
			two = append(two, model.Point{LatencyNS: m.RemoteNS, GHz: m.GHz, TPSPerCore: v})
			cells = append(cells, fmt.Sprintf("a one-stream cell of run %d's %s", run.ID, remote.label))
		}
		f, err := model.FitPoints(two)
		if err == nil {
			m.Points, m.Fit, m.Workload = two, &f, f.Workload
			m.cells = append(m.cells, cells...)
			m.Method = fmt.Sprintf("fitted to %s %d: one stream on local data (%s, median %s tps) at %s ns and on remote "+
				"data (%s, median %s tps) at %s ns, %d cells; A and M both fitted",
				RunLabel(run.Kind), run.ID, local.label, model.Fixed(local.tps, 0), model.Fixed(m.LocalNS, 1), remote.label,
				model.Fixed(remote.tps, 0), model.Fixed(m.RemoteNS, 1), len(two))
			return
		}
		m.Notes = append(m.Notes,
			"fitting A and M to local and remote data failed, so M follows from the published stall share: "+err.Error())
	}
	m.Points = pts
	m.fitOne(fmt.Sprintf("%s %d: one stream on %s, median of %d cells",
		RunLabel(run.Kind), run.ID, local.label, local.cells()), local.tps, localNS)
}

// fitOne fits one latency point: C = f·10⁹/tps, and with M unknown the
// published stall share s at that latency gives A = (1 − s)·C and
// M = s·C/(L·f).
func (m *Calibration) fitOne(what string, tps, latencyNS float64) {
	c := m.GHz * 1e9 / tps
	a, mm := model.CyclesAtShare(c, model.LatencyCycles(latencyNS, m.GHz), model.PublishedStallShare.Value)
	m.Workload = model.FromCycles(a, mm)
	m.Method = fmt.Sprintf(
		"fitted to %s: %s tps at %s ns and %s GHz, i.e. %s cycles per transaction; with a single latency point "+
			"A and M cannot both be fitted, so the published stall share %s of those cycles is taken as waiting (%s)",
		what, model.Fixed(tps, 0), model.Fixed(latencyNS, 1), model.Fixed(m.GHz, 2), model.Thousands(c),
		model.Percent(model.PublishedStallShare.Value), model.PublishedStallShare.Source)
}

// stateWorkload states A, M and the SMT gain with their bases, and the
// residual of every fitted point.
func (m *Calibration) stateWorkload() {
	w := m.Workload
	switch {
	case m.OLTPRun == 0 && m.Fit == nil:
		src := "docs/model.md's default transaction (the literature's example, I = 10,000,000, m = 0.05): no OLTP run to fit"
		m.Assumptions = append(m.Assumptions,
			Assumption{Name: AssumeA, Value: math.Round(w.Core()), Unit: "cycles", Basis: Assumed, Source: src},
			Assumption{Name: AssumeM, Value: math.Round(w.Waits()), Unit: "waits", Basis: Assumed, Source: src})
	case m.Fit == nil:
		v := model.StallBand(w, m.Points[0].LatencyNS, m.GHz).Variants
		m.Assumptions = append(m.Assumptions,
			Assumption{Name: AssumeA, Value: math.Round(w.Core()), Unit: "cycles", Basis: Assumed, Low: v[1].Core(),
				High: v[0].Core(), Source: m.Method},
			Assumption{Name: AssumeM, Value: math.Round(w.Waits()), Unit: "waits", Basis: Assumed,
				Low: v[0].Waits(), High: v[1].Waits(),
				Source: "from the published stall share at the measured point; two latency points would fit it"})
	default:
		a := Assumption{Name: AssumeA, Value: math.Round(m.Fit.A), Unit: "cycles", Basis: Fitted, Source: m.Method}
		mm := Assumption{Name: AssumeM, Value: math.Round(m.Fit.M), Unit: "waits", Basis: Fitted, Source: m.Method}
		if iv := m.Fit.AInterval; iv != nil {
			a.Low, a.High = iv.Low, iv.High
		}
		if iv := m.Fit.MInterval; iv != nil {
			mm.Low, mm.High = iv.Low, iv.High
		}
		m.Assumptions = append(m.Assumptions, a, mm)
	}
	smt := Assumption{Name: AssumeSMT, Value: m.SMT.Value, Unit: "×", Basis: Assumed, Low: m.SMT.Low, High: m.SMT.High,
		Source: m.SMT.Source}
	if m.SMTMeasured {
		smt.Basis, smt.Low, smt.High = Measured, 0, 0
	}
	m.Assumptions = append(m.Assumptions, smt)
	for i, p := range m.Points {
		fc := model.CyclesPerTxn(m.Workload, p.LatencyNS, p.GHz)
		ft := p.GHz * 1e9 / fc
		m.Residuals = append(m.Residuals,
			model.Residual{Point: p, CyclesPerTxn: p.GHz * 1e9 / p.TPSPerCore, FitCyclesPerTxn: fc,
				FitTPSPerCore: ft, RelativeErrorTPS: (ft - p.TPSPerCore) / p.TPSPerCore, Cell: m.cells[i]})
	}
}

// WithFit is the calibration with A and M from another fit: points at two
// latencies measured apart from the OLTP run (eval's page-size points),
// described by method. The prediction, the assumptions and the residuals
// follow the new fit; the held-out prediction, of the OLTP run's cells,
// is dropped, since it tested the old one.
func (m *Calibration) WithFit(f model.Fit, points []model.Point, cells []string, method string) *Calibration {
	c := *m
	c.Fit, c.Workload, c.Points, c.cells, c.Method, c.HeldOut = &f, f.Workload, points, cells, method, nil
	c.Residuals, c.Flags = nil, nil
	c.Assumptions = nil
	for _, a := range m.Assumptions {
		if a.Name != AssumeA && a.Name != AssumeM && a.Name != AssumeSMT {
			c.Assumptions = append(c.Assumptions, a)
		}
	}
	c.StallShare = c.Workload.Waits() * model.LatencyCycles(c.OneSocketNS, c.GHz) /
		model.CyclesPerTxn(c.Workload, c.OneSocketNS, c.GHz)
	c.stateWorkload()
	c.plausibility()
	t, err := model.Evaluate(c.Workload, c.Machine(),
		model.Grid{GHz: []float64{c.GHz}, SMT: smtOf(m.Table), Sockets: PredictSockets, SMTGain: c.SMT.Value})
	if err == nil {
		c.Table = t
	}
	return &c
}

// smtOf are the threads per core a table covers.
func smtOf(t model.Table) []int {
	var ks []int
	for _, r := range t.Rows {
		if !slices.Contains(ks, r.SMT) {
			ks = append(ks, r.SMT)
		}
	}
	return ks
}

// plausibility flags a stall share outside the published band: the fit
// then says the transaction waits for memory more or less than OLTP was
// measured to on real cores.
func (m *Calibration) plausibility() {
	if len(m.Points) == 0 || m.Fit == nil {
		return
	}
	b := model.PublishedStallShare
	if m.StallShare < b.Low || m.StallShare > b.High {
		m.Flags = append(m.Flags,
			fmt.Sprintf("the fit's stall share at one socket's %s ns, M·L·f/C = %s, is outside the published %s to %s (%s)",
				model.Fixed(m.OneSocketNS, 1), model.Percent(m.StallShare), model.Percent(b.Low), model.Percent(b.High), b.Source))
	}
}

// plural is n and the noun, plural unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
