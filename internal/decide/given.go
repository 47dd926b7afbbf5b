package decide

import (
	"errors"
	"fmt"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/model"
)

// GivenWorkload is the assumptions of a workload given by --instructions
// and --miss rather than fitted to a run.
func GivenWorkload(w model.Workload) []calib.Assumption {
	src := "--instructions and --miss (default: docs/model.md's, the literature's example transaction); not fitted: give --run to fit them"
	return []calib.Assumption{
		{Name: calib.AssumeInstructions, Value: w.Instructions, Basis: calib.Assumed, Source: src},
		{Name: calib.AssumeMiss, Value: w.Miss, Basis: calib.Assumed, Source: src},
	}
}

// GivenCPU is a CPU given by --ghz, --local-ns (one socket's latency),
// --remote-ns, --cores and --smt rather than measured, and the assumptions
// it rests on: a multi-socket server's local latency is
// PublishedMultiSocketLocal × localNS, its remote latency remoteNS or,
// when that is 0, PublishedRemoteRatio × that local latency.
func GivenCPU(ghz, localNS, remoteNS float64, cores, smt int) (CPU, []calib.Assumption) {
	ml, rr := model.PublishedMultiSocketLocal, model.PublishedRemoteRatio
	multi := localNS * ml.Value
	remote := calib.Assumption{Name: calib.AssumeRemote, Value: remoteNS, Unit: "ns", Basis: calib.Assumed, Source: "--remote-ns"}
	if remoteNS == 0 {
		remote.Value, remote.Low, remote.High = multi*rr.Value, multi*rr.Low, multi*rr.High
		remote.Source = fmt.Sprintf("no --remote-ns: %s× the multi-socket local latency: %s", model.Sig(rr.Value, 4), rr.Source)
	}
	return CPU{GHz: ghz, CoresPerSocket: cores, SMT: smt, OneSocketNS: localNS, LocalNS: multi, RemoteNS: remote.Value, RemoteAssumed: remoteNS == 0},
		[]calib.Assumption{
			{Name: calib.AssumeClock, Value: ghz, Unit: "GHz", Basis: calib.Assumed, Source: "--ghz"},
			{Name: calib.AssumeOneSocket, Value: localNS, Unit: "ns", Basis: calib.Assumed, Source: "--local-ns"},
			{Name: calib.AssumeLocal, Value: multi, Unit: "ns", Basis: calib.Assumed, Low: localNS * ml.Low, High: localNS * ml.High,
				Source: fmt.Sprintf("%s× --local-ns: %s", model.Sig(ml.Value, 4), ml.Source)},
			remote,
		}
}

// BuyCalibrated answers Buy for the workload calibrated in c, with its
// uncertainty and assumptions, among servers or, with none, the built-in
// candidates of the CPU c ran on (calibratedCPU).
func BuyCalibrated(c *calib.Calibration, smt int, servers []Server) (*Purchase, error) {
	p, err := buyAmong(c.Workload, calibrated(c), c.Assumptions, calibratedCPU(c, smt), servers)
	if p != nil {
		p.FitChoice = c.FitChoice
	}
	return p, err
}

// GivenCPUFigures are this CPU's figures as 'model buy' is given them
// (GivenCPU's).
type GivenCPUFigures struct {
	GHz, LocalNS, RemoteNS float64
	Cores, SMT             int
}

// BuyGiven answers Buy for the given workload w (GivenWorkload's
// assumptions) on this CPU (cpu, GivenCPU) among servers or, with none,
// its built-in candidates. Without cpu the stall band is anchored at
// servers[0].
func BuyGiven(w model.Workload, cpu *GivenCPUFigures, servers []Server) (*Purchase, error) {
	assumptions := GivenWorkload(w)
	u := Uncertainty{SMT: model.PublishedSMTGain}
	if cpu == nil {
		if len(servers) == 0 {
			return nil, errors.New("no CPU given and no candidate servers: give this CPU's figures or a candidates file")
		}
		u.Fit, u.AnchorNS, u.AnchorGHz = model.StallBand(w, servers[0].LocalNS, servers[0].GHz), servers[0].LocalNS, servers[0].GHz
		return buyAmong(w, u, assumptions, CPU{}, servers)
	}
	this, given := GivenCPU(cpu.GHz, cpu.LocalNS, cpu.RemoteNS, cpu.Cores, cpu.SMT)
	ml := model.PublishedMultiSocketLocal
	u.Fit, u.AnchorNS, u.AnchorGHz, u.MultiLocal = model.StallBand(w, cpu.LocalNS, cpu.GHz), cpu.LocalNS, cpu.GHz, &ml
	if cpu.RemoteNS == 0 {
		rr := model.PublishedRemoteRatio
		u.Remote = &rr
	}
	return buyAmong(w, u, append(assumptions, given...), this, servers)
}

// buyAmong is Buy among servers, or with none the built-in candidates of
// this, with the assumptions it rests on.
func buyAmong(w model.Workload, u Uncertainty, assumptions []calib.Assumption, this CPU, servers []Server) (*Purchase, error) {
	if len(servers) == 0 {
		servers = BuiltinCandidates(this)
	}
	p, err := Buy(w, u, servers)
	if err != nil {
		return nil, err
	}
	p.Assumptions = assumptions
	return p, nil
}

// calibratedCPU is the processor c was calibrated on, with smt threads per
// core, or when smt is 0 the threads per core its run measured.
func calibratedCPU(c *calib.Calibration, smt int) CPU {
	if smt == 0 {
		smt = c.ThreadsPerCore()
	}
	return CPU{GHz: c.GHz, CoresPerSocket: c.CoresPerSocket, SMT: smt, OneSocketNS: c.OneSocketNS, LocalNS: c.LocalNS, RemoteNS: c.RemoteNS, RemoteAssumed: c.RemoteAssumed}
}
