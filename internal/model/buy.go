package model

import (
	"errors"
	"fmt"
	"math"
)

// Server is a candidate to buy: its shape, its memory latency and its
// price. The throughput formulas are the model's (docs/model.md), after Joe
// Chang's sizing articles.
type Server struct {
	Name           string  `json:"name" toml:"name"`
	Sockets        int     `json:"sockets" toml:"sockets"`
	CoresPerSocket int     `json:"cores_per_socket" toml:"cores_per_socket"`
	GHz            float64 `json:"ghz" toml:"ghz"`
	SMT            int     `json:"smt" toml:"smt"` // hardware threads per core in use
	LocalNS        float64 `json:"local_ns" toml:"local_ns"`
	RemoteNS       float64 `json:"remote_ns,omitempty" toml:"remote_ns"`
	// DDR ("3200 22-22-22": MT/s, then CL-tRCD-tRP) with ControllerNS
	// gives LocalNS when it is not given: the random-row access at the
	// DRAM, (tRP + tRCD + CL)·2000/R ns, plus the time outside the DRAM
	// chips (core to memory controller and back).
	DDR            string  `json:"ddr,omitempty" toml:"ddr"`
	ControllerNS   float64 `json:"controller_ns,omitempty" toml:"controller_ns"`
	BufferNS       float64 `json:"buffer_ns,omitempty" toml:"buffer_ns"` // on every access, every socket count
	Price          float64 `json:"price" toml:"price"`                   // the whole server
	LicencePerCore float64 `json:"licence_per_core" toml:"licence_per_core"`
	Note           string  `json:"note,omitempty" toml:"note"` // how it was chosen or derived

	line int // where the candidates file defines it; 0: built in
}

// Cores is every physical core of the server, all licensed.
func (s Server) Cores() int { return s.Sockets * s.CoresPerSocket }

// LatencyNS is the server's average memory latency with a fraction r of
// accesses remote: (1 − r)·Lloc + r·Lrem + B; one socket: Lloc + B.
func (s Server) LatencyNS(r float64) float64 {
	if s.Sockets <= 1 {
		return s.LocalNS + s.BufferNS
	}
	return (1-r)*s.LocalNS + r*s.RemoteNS + s.BufferNS
}

// NoLocality is the remote fraction with no memory locality: every node
// equally likely, (S − 1)/S.
func (s Server) NoLocality() float64 {
	return float64(s.Sockets-1) / float64(s.Sockets)
}

// Purchase is the answer to "which server": every candidate's predicted
// throughput and cost, the winner on each measure and the recommendation.
type Purchase struct {
	Workload Workload `json:"workload"`
	// Band says how BuyRow's TPSLow and TPSHigh were derived; Variants
	// are the workloads at the band's ends (none for a residual band).
	Band        string       `json:"band"`
	BandRel     float64      `json:"band_relative,omitempty"` // residual band: ± this fraction
	Variants    []Workload   `json:"band_workloads,omitempty"`
	Assumptions []Assumption `json:"assumptions,omitempty"`
	Rows        []BuyRow     `json:"candidates"`
	Best        Winners      `json:"best"`
	// BreakEven is the remote fraction at which the best multi-socket
	// candidate and the best one-socket one cost the same per 1,000 tps;
	// nil without one of each.
	BreakEven      *BreakEven `json:"break_even,omitempty"`
	Recommendation string     `json:"recommendation"`
}

// BuyRow is one candidate's prediction and cost.
type BuyRow struct {
	Server      Server  `json:"server"`
	LatencyNS   float64 `json:"latency_ns"` // average, no locality
	TPSPerCore  float64 `json:"tps_per_core"`
	TotalTPS    float64 `json:"total_tps"`
	TPSLow      float64 `json:"total_tps_low"`
	TPSHigh     float64 `json:"total_tps_high"`
	LicenceCost float64 `json:"licence_cost"` // cores × licence per core
	TotalCost   float64 `json:"total_cost"`   // price + licence cost
	CostPerKTPS float64 `json:"cost_per_1000_tps"`

	singleThread float64 // total tps with one thread per core
}

// Winners names the best candidate on each measure.
type Winners struct {
	TotalTPS    string `json:"total_tps"`
	TPSPerCore  string `json:"tps_per_core"`
	TotalCost   string `json:"total_cost"`
	CostPerKTPS string `json:"cost_per_1000_tps"`
}

// BreakEven compares the best one-socket candidate with the best
// multi-socket one as the workload's remote fraction varies.
type BreakEven struct {
	OneSocket   string  `json:"one_socket"`
	MultiSocket string  `json:"multi_socket"`
	Sockets     int     `json:"sockets"`
	Assumed     float64 `json:"assumed_remote_fraction"` // (S − 1)/S: no locality
	// RemoteFraction is where both cost the same per 1,000 tps: the
	// multi-socket box is cheaper below it. Below 0: never cheaper; above
	// 1: always.
	RemoteFraction float64 `json:"remote_fraction"`
}

// serverTPS is a server's per-core and total throughput at remote fraction r.
func serverTPS(w Workload, s Server, r float64) (perCore, total float64) {
	perCore = threadTPS(w, s.LatencyNS(r), s.GHz, s.SMT)
	return perCore, TotalTPS(perCore, s.CoresPerSocket, s.Sockets)
}

// costPerKTPS is a server's total cost per 1,000 tps at remote fraction r.
func costPerKTPS(w Workload, s Server, r float64) float64 {
	_, t := serverTPS(w, s, r)
	return (s.Price + float64(s.Cores())*s.LicencePerCore) / (t / 1000)
}

// Band is how uncertain the calibrated workload is. Calibrate fills it: a
// fit of three or more points bands each prediction by its largest
// residual; otherwise the miss fraction m is taken at both ends of its
// plausible range, each with I refitted through the anchor point, so the
// predictions still pass through what was measured.
type Band struct {
	Text     string
	Rel      float64
	Variants []Workload
}

// CalibrationBand is the band a calibration supports (see Band).
func CalibrationBand(c *Calibration) Band {
	if c.Fit != nil && c.Fit.Points >= 3 {
		var e float64
		for _, r := range c.Fit.Residuals {
			e = math.Max(e, math.Abs(r.RelativeErrorTPS))
		}
		return Band{Rel: e, Text: fmt.Sprintf("± %s, the largest residual of the fit's %d points", percent(e), c.Fit.Points)}
	}
	return MissBand(c.Workload, c.LocalNS, c.GHz)
}

// MissBand is the band from m's plausible range with I refitted so that
// cycles per transaction at the anchor (latency ns, clock) are unchanged.
func MissBand(w Workload, anchorNS, ghz float64) Band {
	c := CyclesPerTxn(w, anchorNS, ghz)
	x := LatencyCycles(anchorNS, ghz)
	b := Band{Text: fmt.Sprintf("m from %s to %s (its plausible range), I refitted each time to the same %s cycles per transaction at %s ns and %s GHz: two latency points would narrow it",
		fmtF(PlausibleMissLow, 3), fmtF(PlausibleMissHigh, 2), thousands(c), fmtF(anchorNS, 1), fmtF(ghz, 2))}
	for _, m := range []float64{PlausibleMissLow, PlausibleMissHigh} {
		b.Variants = append(b.Variants, Workload{Instructions: c / ((1 - m) + m*x), Miss: m})
	}
	return b
}

// Buy predicts every candidate's throughput and cost for workload w,
// names the winners and the recommendation. Candidates must be valid
// (ValidateServer).
func Buy(w Workload, band Band, servers []Server) (*Purchase, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if len(servers) == 0 {
		return nil, fmt.Errorf("choosing a server: no candidates: %w", ErrInput)
	}
	p := &Purchase{Workload: w, Band: band.Text, BandRel: band.Rel, Variants: band.Variants}
	for _, s := range servers {
		if s.SMT > 1 {
			p.Band += "; with SMT the band runs down to no SMT gain, since the SMT factor is the model's formula, not measured"
			break
		}
	}
	var best [4]int
	for i, s := range servers {
		r := s.NoLocality()
		perCore, total := serverTPS(w, s, r)
		row := BuyRow{Server: s, LatencyNS: s.LatencyNS(r), TPSPerCore: perCore, TotalTPS: total,
			TPSLow: total * (1 - band.Rel), TPSHigh: total * (1 + band.Rel)}
		for _, v := range band.Variants {
			_, t := serverTPS(v, s, r)
			row.TPSLow, row.TPSHigh = math.Min(row.TPSLow, t), math.Max(row.TPSHigh, t)
		}
		one := s
		one.SMT = 1
		_, row.singleThread = serverTPS(w, one, r)
		if s.SMT > 1 {
			// The SMT factor is the formula's, never measured: the
			// band runs down to no gain at all.
			row.TPSLow = math.Min(row.TPSLow, row.singleThread*(1-band.Rel))
			for _, v := range band.Variants {
				_, t := serverTPS(v, one, r)
				row.TPSLow = math.Min(row.TPSLow, t)
			}
		}
		row.LicenceCost = float64(s.Cores()) * s.LicencePerCore
		row.TotalCost = s.Price + row.LicenceCost
		row.CostPerKTPS = row.TotalCost / (total / 1000)
		p.Rows = append(p.Rows, row)
		b := p.Rows
		if row.TotalTPS > b[best[0]].TotalTPS {
			best[0] = i
		}
		if row.TPSPerCore > b[best[1]].TPSPerCore {
			best[1] = i
		}
		if row.TotalCost < b[best[2]].TotalCost {
			best[2] = i
		}
		if row.CostPerKTPS < b[best[3]].CostPerKTPS {
			best[3] = i
		}
	}
	n := func(i int) string { return p.Rows[i].Server.Name }
	p.Best = Winners{TotalTPS: n(best[0]), TPSPerCore: n(best[1]), TotalCost: n(best[2]), CostPerKTPS: n(best[3])}
	p.BreakEven = breakEven(w, servers)
	p.Recommendation = p.recommend(best[3])
	return p, nil
}

// breakEven finds the remote fraction at which the cheapest (per 1,000
// tps, no locality) multi-socket candidate costs what the cheapest
// one-socket one with as many threads per core does. Cost per tps rises with latency, which rises with
// the remote fraction, so bisection finds it.
func breakEven(w Workload, servers []Server) *BreakEven {
	multi := -1
	for i, s := range servers {
		if s.Sockets > 1 && (multi < 0 || costPerKTPS(w, s, s.NoLocality()) < costPerKTPS(w, servers[multi], servers[multi].NoLocality())) {
			multi = i
		}
	}
	if multi < 0 {
		return nil
	}
	one := -1
	for i, s := range servers {
		if s.Sockets == 1 && s.SMT == servers[multi].SMT && (one < 0 || costPerKTPS(w, s, 0) < costPerKTPS(w, servers[one], 0)) {
			one = i
		}
	}
	if one < 0 {
		return nil
	}
	a, b := servers[one], servers[multi]
	target := costPerKTPS(w, a, 0)
	diff := func(r float64) float64 { return costPerKTPS(w, b, r) - target }
	be := &BreakEven{OneSocket: a.Name, MultiSocket: b.Name, Sockets: b.Sockets, Assumed: b.NoLocality()}
	switch {
	case diff(0) >= 0:
		be.RemoteFraction = -1
	case diff(1) <= 0:
		be.RemoteFraction = 2
	default:
		lo, hi := 0.0, 1.0
		for range 60 {
			mid := (lo + hi) / 2
			if diff(mid) < 0 {
				lo = mid
			} else {
				hi = mid
			}
		}
		be.RemoteFraction = (lo + hi) / 2
	}
	return be
}

// recommend is the one plain sentence: the cheapest per 1,000 tps, and
// when a one-socket or a multi-socket box would win instead.
func (p *Purchase) recommend(win int) string {
	r := p.Rows[win]
	s := fmt.Sprintf("Buy %s: %s per 1,000 tps (%s tps predicted, band %s to %s", r.Server.Name, thousands(r.CostPerKTPS),
		thousands(r.TotalTPS), thousands(r.TPSLow), thousands(r.TPSHigh))
	if r.Server.SMT > 1 {
		s += fmt.Sprintf("; its lead rests on the assumed %s× SMT gain: measure SMT on and off", fmtF(r.TotalTPS/r.singleThread, 2))
	}
	s += ")"
	be := p.BreakEven
	if be == nil {
		return s + "."
	}
	box := fmt.Sprintf("a %d-socket box (%s)", be.Sockets, be.MultiSocket)
	assumed := fmt.Sprintf("the model assumes %s with no locality", percent(be.Assumed))
	switch {
	case be.RemoteFraction < 0:
		return s + fmt.Sprintf("; %s would not win over %s at any remote fraction, even with all memory local.", box, be.OneSocket)
	case be.RemoteFraction > 1:
		return s + fmt.Sprintf("; %s beats %s at any remote fraction.", box, be.OneSocket)
	case r.Server.Sockets > 1:
		return s + fmt.Sprintf("; it wins over %s only while the workload's remote fraction stays below %s (%s).", be.OneSocket, percent(be.RemoteFraction), assumed)
	}
	return s + fmt.Sprintf("; %s would win only if the workload's remote fraction were below %s (%s).", box, percent(be.RemoteFraction), assumed)
}

// BuyCalibrated answers Buy for the workload calibrated in c, with its
// band (CalibrationBand) and assumptions, among servers or, with none,
// the built-in candidates of the CPU c ran on (Calibration.CPU(smt)).
func BuyCalibrated(c *Calibration, smt int, servers []Server) (*Purchase, error) {
	return buyAmong(c.Workload, CalibrationBand(c), c.Assumptions, c.CPU(smt), servers)
}

// GivenCPUFigures are this CPU's figures as 'model buy' is given them
// (GivenCPU's).
type GivenCPUFigures struct {
	GHz, LocalNS, RemoteNS float64
	Cores, SMT             int
}

// BuyGiven answers Buy for the given workload w (GivenWorkload's
// assumptions) on this CPU (cpu, GivenCPU) among servers or, with none,
// its built-in candidates. Without cpu the miss band is anchored at
// servers[0].
func BuyGiven(w Workload, cpu *GivenCPUFigures, servers []Server) (*Purchase, error) {
	assumptions := GivenWorkload(w)
	if cpu == nil {
		if len(servers) == 0 {
			return nil, errors.New("no CPU given and no candidate servers: give this CPU's figures or a candidates file")
		}
		return buyAmong(w, MissBand(w, servers[0].LocalNS, servers[0].GHz), assumptions, CPU{}, servers)
	}
	this, given := GivenCPU(cpu.GHz, cpu.LocalNS, cpu.RemoteNS, cpu.Cores, cpu.SMT)
	return buyAmong(w, MissBand(w, cpu.LocalNS, cpu.GHz), append(assumptions, given...), this, servers)
}

// buyAmong is Buy among servers, or with none the built-in candidates of
// this, with the assumptions it rests on.
func buyAmong(w Workload, band Band, assumptions []Assumption, this CPU, servers []Server) (*Purchase, error) {
	if len(servers) == 0 {
		servers = BuiltinCandidates(this)
	}
	p, err := Buy(w, band, servers)
	if err != nil {
		return nil, err
	}
	p.Assumptions = assumptions
	return p, nil
}
