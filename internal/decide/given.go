package decide

import (
	"errors"
	"fmt"
	"slices"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/model"
)

// GivenWorkload is the assumptions of a workload given by --instructions
// and --miss rather than fitted to a run.
func GivenWorkload(w model.Workload) []calib.Assumption {
	src := "--instructions and --miss (default: docs/model.md's, the literature's example transaction); not fitted: " +
		"give --run to fit them"
	return []calib.Assumption{
		{Name: calib.AssumeInstructions, Value: w.Instructions, Basis: calib.Assumed, Source: src},
		{Name: calib.AssumeMiss, Value: w.Miss, Basis: calib.Assumed, Source: src},
	}
}

// GivenCPU is this CPU as 'model buy' is given it, its latencies read as
// every command reads them (model.Latencies): one socket at OneSocket(), a
// multi-socket server at --local-ns and --remote-ns, or without
// --remote-ns the published ratio of --local-ns, banded. It returns the
// CPU and the assumptions it rests on.
func GivenCPU(ghz float64, lat model.Latencies, cores, smt int) (CPU, []calib.Assumption) {
	rr := model.PublishedRemoteRatio
	one := calib.Assumption{Name: calib.AssumeOneSocket, Value: lat.OneSocket(), Unit: "ns", Basis: calib.Assumed,
		Source: "--one-socket-ns"}
	if lat.OneSocketNS == 0 {
		one.Source = "--local-ns (no --one-socket-ns: one socket's latency taken as the local one)"
	}
	remote := calib.Assumption{Name: calib.AssumeRemote, Value: lat.RemoteNS, Unit: "ns", Basis: calib.Assumed,
		Source: "--remote-ns"}
	if lat.RemoteNS == 0 {
		remote.Value, remote.Low, remote.High = lat.LocalNS*rr.Value, lat.LocalNS*rr.Low, lat.LocalNS*rr.High
		remote.Source = fmt.Sprintf("no --remote-ns: %s× --local-ns: %s", model.Sig(rr.Value, 4), rr.Source)
	}
	return CPU{GHz: ghz, CoresPerSocket: cores, SMT: smt, OneSocketNS: one.Value, LocalNS: lat.LocalNS,
			RemoteNS: remote.Value, RemoteAssumed: lat.RemoteNS == 0},
		[]calib.Assumption{
			{Name: calib.AssumeClock, Value: ghz, Unit: "GHz", Basis: calib.Assumed, Source: "--ghz"},
			one,
			{Name: calib.AssumeLocal, Value: lat.LocalNS, Unit: "ns", Basis: calib.Assumed, Source: "--local-ns"},
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
	GHz        float64
	Latencies  model.Latencies
	Cores, SMT int
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
		u.Fit, u.AnchorNS, u.AnchorGHz = model.StallBand(w, servers[0].LocalNS, servers[0].GHz),
			servers[0].LocalNS, servers[0].GHz
		return buyAmong(w, u, assumptions, CPU{}, servers)
	}
	this, given := GivenCPU(cpu.GHz, cpu.Latencies, cpu.Cores, cpu.SMT)
	one := cpu.Latencies.OneSocket()
	u.Fit, u.AnchorNS, u.AnchorGHz = model.StallBand(w, one, cpu.GHz), one, cpu.GHz
	if cpu.Latencies.RemoteNS == 0 {
		rr := model.PublishedRemoteRatio
		u.Remote = &rr
	}
	return buyAmong(w, u, append(assumptions, given...), this, servers)
}

// buyAmong is Buy among servers, or with none the built-in candidates of
// this, with the assumptions it rests on.
func buyAmong(w model.Workload, u Uncertainty, assumptions []calib.Assumption, this CPU,
	servers []Server) (*Purchase, error) {
	if len(servers) == 0 {
		servers = BuiltinCandidates(this)
		// The built-in prices are assumed: the licence price first, the
		// one the cost per core turns on.
		assumptions = append(slices.Clip(assumptions),
			calib.Assumption{Name: AssumeLicence, Value: builtinLicence, Basis: calib.Assumed,
				Source: "built-in, every physical core licensed (" + Illustrative + ")"})
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
	return CPU{GHz: c.GHz, CoresPerSocket: c.CoresPerSocket, SMT: smt, OneSocketNS: c.OneSocketNS, LocalNS: c.LocalNS,
		RemoteNS: c.RemoteNS, RemoteAssumed: c.RemoteAssumed}
}
