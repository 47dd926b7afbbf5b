package decide

import (
	"math"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/model"
)

// Uncertainty is what a prediction's band covers: the workloads at the
// ends of the fit's interval (or of the published stall share), the SMT
// gain's range, and, for candidates derived from one socket's latency, the
// published ratios of a multi-socket server's local and remote latency
// (nil: measured).
type Uncertainty struct {
	Fit        model.Band
	SMT        model.Range
	MultiLocal *model.Range
	Remote     *model.Range
	// Anchor is where the fit varies through: one socket's latency and the
	// clock it was measured at.
	AnchorNS, AnchorGHz float64
	// Catalogue, when not "", says what the latency bands of catalogue
	// candidates (catalogue.go) cover: they vary together, every CPU at
	// the same place in its band.
	Catalogue string
	// ThisSpeed is this machine's published per-core figure, the one
	// catalogue candidates' figures are taken against (Server.perCore);
	// nil: none, every candidate needs this machine's A.
	ThisSpeed *model.Range
	// Paired compares candidates for one workload (pairedRivals): the
	// inputs every candidate shares (the fit's A and M, the SMT gain)
	// take the same value on both sides of a comparison.
	Paired bool
}

// AssumeCatalogue names the memory latency of catalogue CPUs among the
// uncertain inputs: a band where no measurement of the CPU was read.
const AssumeCatalogue = "catalogue CPUs' one-socket memory latency"

// AssumeCoreSpeed names the per-core speed of catalogue CPUs against this
// machine's among the uncertain inputs: the band of published results.
const AssumeCoreSpeed = "catalogue CPUs' per-core speed against this machine's"

// AssumeThisSpeed names this machine's per-core figure, the one the
// catalogue CPUs' are taken against (Uncertainty.ThisSpeed).
const AssumeThisSpeed = "this machine's per-core speed (SPECrate2017_int_base per core)"

// scenario is one combination of the uncertain inputs.
type scenario struct {
	w          model.Workload
	smt        float64
	ml, rr     float64
	remoteFrac float64 // < 0: no locality
	catPos     float64 // where in its latency band a catalogue CPU is, 0 to 1
	speedEnd   int     // a catalogue CPU's per-core figure: -1 its band's low end, 0 its median, 1 its high end
	thisEnd    int     // this machine's per-core figure, likewise
}

// center is the scenario at every input's assumed value.
func (u Uncertainty) center(w model.Workload) scenario {
	sc := scenario{w: w, smt: u.SMT.Value, ml: 1, rr: 1, remoteFrac: -1, catPos: 0.5}
	if u.MultiLocal != nil {
		sc.ml = u.MultiLocal.Value
	}
	if u.Remote != nil {
		sc.rr = u.Remote.Value
	}
	return sc
}

// corners are every combination of the uncertain inputs' ends (and
// centres) that input (one of the uncertain inputs' names, "" for all)
// varies.
func (u Uncertainty) corners(w model.Workload, input string) []scenario {
	out := []scenario{u.center(w)}
	vary := func(name string, f func(sc scenario) []scenario) {
		if input != "" && input != name {
			return
		}
		var next []scenario
		for _, sc := range out {
			next = append(next, f(sc)...)
		}
		out = append(out, next...)
	}
	vary(calib.AssumeA, func(sc scenario) []scenario {
		var v []scenario
		for _, w := range u.Fit.Variants {
			sc.w = w
			v = append(v, sc)
		}
		return v
	})
	vary(calib.AssumeSMT, func(sc scenario) []scenario {
		a, b := sc, sc
		a.smt, b.smt = u.SMT.Low, u.SMT.High
		return []scenario{a, b}
	})
	if u.MultiLocal != nil {
		vary(calib.AssumeLocal, func(sc scenario) []scenario {
			a, b := sc, sc
			a.ml, b.ml = u.MultiLocal.Low, u.MultiLocal.High
			return []scenario{a, b}
		})
	}
	if u.Remote != nil {
		vary(calib.AssumeRemote, func(sc scenario) []scenario {
			a, b := sc, sc
			a.rr, b.rr = u.Remote.Low, u.Remote.High
			return []scenario{a, b}
		})
	}
	if u.Catalogue != "" {
		vary(AssumeCatalogue, func(sc scenario) []scenario {
			a, b := sc, sc
			a.catPos, b.catPos = 0, 1
			return []scenario{a, b}
		})
	}
	if u.ThisSpeed != nil {
		vary(AssumeCoreSpeed, func(sc scenario) []scenario {
			a, b := sc, sc
			a.speedEnd, b.speedEnd = -1, 1
			return []scenario{a, b}
		})
		vary(AssumeThisSpeed, func(sc scenario) []scenario {
			a, b := sc, sc
			a.thisEnd, b.thisEnd = -1, 1
			return []scenario{a, b}
		})
	}
	return out
}

// at is the server under a scenario: a candidate derived from one socket's
// latency (OneSocketNS > 0) takes its multi-socket local and remote
// latencies from the scenario's ratios, relative to their assumed values.
func (s Server) at(sc scenario, u Uncertainty) Server {
	if s.oneNS > 0 && s.Sockets > 1 {
		c := u.center(model.Workload{})
		s.LocalNS *= sc.ml / c.ml
		s.RemoteNS *= sc.ml / c.ml
		if s.remoteDerived {
			s.RemoteNS *= sc.rr / c.rr
		}
	}
	if s.catHigh > 0 {
		f := (s.catLow + sc.catPos*(s.catHigh-s.catLow)) / ((s.catLow + s.catHigh) / 2)
		s.LocalNS, s.RemoteNS = s.LocalNS*f, s.RemoteNS*f
	}
	return s
}

// tpsAt is a server's per-core and total throughput under a scenario.
func (u Uncertainty) tpsAt(s Server, sc scenario) (perCore, total float64) {
	s = s.at(sc, u)
	r := sc.remoteFrac
	if r < 0 {
		r = s.NoLocality()
	}
	g := 1.0
	if s.SMT > 1 {
		g = sc.smt
	}
	perCore = model.ThreadTPS(s.workload(sc, u), s.LatencyNS(r), s.GHz, g)
	return perCore, model.TotalTPS(perCore, s.CoresPerSocket, s.Sockets)
}

// workload is the scenario's workload on s: for a catalogue CPU with a
// per-core figure, when this machine has one too (and its clock is
// known), A scaled so that its core time is this machine's over the
// ratio of the two figures; else as it is.
func (s Server) workload(sc scenario, u Uncertainty) model.Workload {
	if s.perCore <= 0 || u.ThisSpeed == nil || u.AnchorGHz <= 0 {
		return sc.w
	}
	this := u.ThisSpeed
	k := end(sc.speedEnd, s.perCoreLow, s.perCore, s.perCoreHigh) / end(sc.thisEnd, this.Low, this.Value, this.High)
	return model.FromCycles(sc.w.Core()*s.GHz/(u.AnchorGHz*k), sc.w.Waits())
}

// end is low, mid or high as e is -1, 0 or 1.
func end(e int, low, mid, high float64) float64 {
	switch e {
	case -1:
		return low
	case 1:
		return high
	}
	return mid
}

// costAt is a server's total cost per 1,000 tps under a scenario.
func (u Uncertainty) costAt(s Server, sc scenario) float64 {
	_, t := u.tpsAt(s, sc)
	return (s.Price + float64(s.Cores())*s.LicencePerCore) / (t / 1000)
}

// band is a server's lowest and highest total tps over the corners that
// input varies ("" all).
func (u Uncertainty) band(w model.Workload, s Server, input string) (lo, hi float64) {
	lo, hi = math.Inf(1), 0
	for _, sc := range u.corners(w, input) {
		_, t := u.tpsAt(s, sc)
		lo, hi = math.Min(lo, t), math.Max(hi, t)
	}
	return lo, hi
}

// calibrated is what a calibration leaves uncertain: its fit's band, its
// SMT gain and, where they were not measured, the published ratios of a
// multi-socket server's latencies.
func calibrated(c *calib.Calibration) Uncertainty {
	u := Uncertainty{Fit: calib.CalibrationBand(c), SMT: c.SMT, AnchorNS: c.OneSocketNS, AnchorGHz: c.GHz}
	if c.RemoteAssumed {
		ml, rr := model.PublishedMultiSocketLocal, model.PublishedRemoteRatio
		u.MultiLocal, u.Remote = &ml, &rr
	} else {
		ml := model.PublishedMultiSocketLocal
		u.MultiLocal = &ml
	}
	return u
}
