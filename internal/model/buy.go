package model

import (
	"errors"
	"fmt"
	"math"
	"strings"
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
	// oneNS is, for a built-in candidate derived from one socket's
	// latency, that latency: its multi-socket latencies follow the
	// published ratios (Uncertainty); remoteDerived says its remote
	// latency does too.
	oneNS         float64
	remoteDerived bool
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
// throughput and cost with their bands, the winner on each measure, the
// decision (a candidate, or "cannot tell" and the measurement that would
// tell), and every assumed input it rests on with the value at which it
// would flip.
type Purchase struct {
	Workload Workload `json:"workload"`
	// Band says what the bands of BuyRow's TPSLow and TPSHigh cover.
	Band        string       `json:"band"`
	Assumptions []Assumption `json:"assumptions,omitempty"`
	Rows        []BuyRow     `json:"candidates"`
	Best        Winners      `json:"best"`
	// BreakEven is the remote fraction at which the best multi-socket
	// candidate and the best one-socket one cost the same per 1,000 tps;
	// nil without one of each.
	BreakEven *BreakEven `json:"break_even,omitempty"`
	// Decision is the cheapest per 1,000 tps, or "" when its cost band
	// overlaps another's (Rivals): then Decider says what to measure.
	Decision string   `json:"decision"`
	Rivals   []string `json:"rivals,omitempty"`
	Decider  string   `json:"decider,omitempty"`
	// Flips are the assumed inputs the decision rests on, each with the
	// value at which the cheapest and the next cheapest swap.
	Flips          []Flip `json:"flips,omitempty"`
	Recommendation string `json:"recommendation"`
	// FitChoice is the calibration's (BuyCalibrated): which stored
	// model-fit run A and M came from, or that there was none.
	FitChoice string `json:"fit_choice,omitempty"`
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
}

// CostBand is the cost per 1,000 tps at the ends of the throughput band.
func (r BuyRow) CostBand() (low, high float64) {
	return r.TotalCost / (r.TPSHigh / 1000), r.TotalCost / (r.TPSLow / 1000)
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

// Flip is an assumed input of the decision and the value at which it
// would change: the cheapest candidate and the next cheapest cost the same
// per 1,000 tps there. None when they do not swap within Range.
type Flip struct {
	Input   string  `json:"input"`
	Assumed float64 `json:"assumed"`
	At      float64 `json:"flips_at"`
	None    bool    `json:"no_flip"`
	Range   string  `json:"searched"`
}

// String is the flip in words.
func (f Flip) String() string {
	if f.None {
		return fmt.Sprintf("%s %s (the choice holds from %s)", f.Input, fmtValue(f.Assumed), f.Range)
	}
	return fmt.Sprintf("%s %s (flips at %s)", f.Input, fmtValue(f.Assumed), fmtValue(f.At))
}

// Uncertainty is what a prediction's band covers: the workloads at the
// ends of the fit's interval (or of the published stall share), the SMT
// gain's range, and, for candidates derived from one socket's latency, the
// published ratios of a multi-socket server's local and remote latency
// (nil: measured).
type Uncertainty struct {
	Fit        Band
	SMT        Range
	MultiLocal *Range
	Remote     *Range
	// Anchor is where the fit varies through: one socket's latency and the
	// clock it was measured at.
	AnchorNS, AnchorGHz float64
}

// Band is the fit's uncertainty as workloads at its ends.
type Band struct {
	Text     string
	Variants []Workload
}

// scenario is one combination of the uncertain inputs.
type scenario struct {
	w          Workload
	smt        float64
	ml, rr     float64
	remoteFrac float64 // < 0: no locality
}

// center is the scenario at every input's assumed value.
func (u Uncertainty) center(w Workload) scenario {
	sc := scenario{w: w, smt: u.SMT.Value, ml: 1, rr: 1, remoteFrac: -1}
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
func (u Uncertainty) corners(w Workload, input string) []scenario {
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
	vary(AssumeA, func(sc scenario) []scenario {
		var v []scenario
		for _, w := range u.Fit.Variants {
			sc.w = w
			v = append(v, sc)
		}
		return v
	})
	vary(AssumeSMT, func(sc scenario) []scenario {
		a, b := sc, sc
		a.smt, b.smt = u.SMT.Low, u.SMT.High
		return []scenario{a, b}
	})
	if u.MultiLocal != nil {
		vary(AssumeLocal, func(sc scenario) []scenario {
			a, b := sc, sc
			a.ml, b.ml = u.MultiLocal.Low, u.MultiLocal.High
			return []scenario{a, b}
		})
	}
	if u.Remote != nil {
		vary(AssumeRemote, func(sc scenario) []scenario {
			a, b := sc, sc
			a.rr, b.rr = u.Remote.Low, u.Remote.High
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
		c := u.center(Workload{})
		s.LocalNS *= sc.ml / c.ml
		s.RemoteNS *= sc.ml / c.ml
		if s.remoteDerived {
			s.RemoteNS *= sc.rr / c.rr
		}
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
	perCore = threadTPS(sc.w, s.LatencyNS(r), s.GHz, g)
	return perCore, TotalTPS(perCore, s.CoresPerSocket, s.Sockets)
}

// costAt is a server's total cost per 1,000 tps under a scenario.
func (u Uncertainty) costAt(s Server, sc scenario) float64 {
	_, t := u.tpsAt(s, sc)
	return (s.Price + float64(s.Cores())*s.LicencePerCore) / (t / 1000)
}

// band is a server's lowest and highest total tps over the corners that
// input varies ("" all).
func (u Uncertainty) band(w Workload, s Server, input string) (lo, hi float64) {
	lo, hi = math.Inf(1), 0
	for _, sc := range u.corners(w, input) {
		_, t := u.tpsAt(s, sc)
		lo, hi = math.Min(lo, t), math.Max(hi, t)
	}
	return lo, hi
}

// CalibrationBand is the band of a calibration's fit: with an interval on
// M, the workloads at its ends, A refitted through the centre of the
// points; otherwise the published stall share's ends through the measured
// point (StallBand).
func CalibrationBand(c *Calibration) Band {
	if f := c.Fit; f != nil && f.MInterval != nil {
		var x, y float64
		for _, r := range f.Residuals {
			x += LatencyCycles(r.LatencyNS, r.GHz)
			y += r.CyclesPerTxn
		}
		x /= float64(len(f.Residuals))
		y /= float64(len(f.Residuals))
		b := Band{Text: fmt.Sprintf("M from %s to %s (the fit's 95%% interval over %d points), A refitted each time through the points' centre", thousands(f.MInterval.Low), thousands(f.MInterval.High), f.Points)}
		for _, m := range []float64{f.MInterval.Low, f.MInterval.High} {
			if m > 0 && y-m*x >= 0 {
				b.Variants = append(b.Variants, FromCycles(y-m*x, m))
			}
		}
		return b
	}
	if len(c.Points) == 0 {
		return StallBand(c.Workload, c.OneSocketNS, c.GHz)
	}
	return StallBand(c.Workload, c.Points[0].LatencyNS, c.GHz)
}

// StallBand is the band of the published stall share: A and M at its ends,
// through the same cycles per transaction at the anchor (latency ns,
// clock) as w.
func StallBand(w Workload, anchorNS, ghz float64) Band {
	c := CyclesPerTxn(w, anchorNS, ghz)
	x := LatencyCycles(anchorNS, ghz)
	b := PublishedStallShare
	out := Band{Text: fmt.Sprintf("a stall share from %s to %s at %s ns and %s GHz (%s), A and M refitted each time to the same %s cycles per transaction there: two latency points would narrow it",
		percent(b.Low), percent(b.High), fmtF(anchorNS, 1), fmtF(ghz, 2), b.Source, thousands(c))}
	for _, s := range []float64{b.Low, b.High} {
		out.Variants = append(out.Variants, FromCycles(CyclesAtShare(c, x, s)))
	}
	return out
}

// Buy predicts every candidate's throughput and cost for workload w with
// the band u leaves, names the winners and makes the decision. Candidates
// must be valid (ValidateServer).
func Buy(w Workload, u Uncertainty, servers []Server) (*Purchase, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if len(servers) == 0 {
		return nil, fmt.Errorf("choosing a server: no candidates: %w", ErrInput)
	}
	p := &Purchase{Workload: w, Band: u.text(servers)}
	var best [4]int
	c := u.center(w)
	for i, s := range servers {
		perCore, total := u.tpsAt(s, c)
		row := BuyRow{Server: s, LatencyNS: s.at(c, u).LatencyNS(s.NoLocality()), TPSPerCore: perCore, TotalTPS: total}
		row.TPSLow, row.TPSHigh = u.band(w, s, "")
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
	p.BreakEven = u.breakEven(w, servers)
	p.decide(w, u, best[3])
	return p, nil
}

// text says what the band covers.
func (u Uncertainty) text(servers []Server) string {
	parts := []string{"the fit: " + u.Fit.Text}
	smt, derived := false, false
	for _, s := range servers {
		smt = smt || s.SMT > 1
		derived = derived || (s.oneNS > 0 && s.Sockets > 1)
	}
	if smt && u.SMT.Low != u.SMT.High {
		parts = append(parts, "with SMT, its gain from "+sig(u.SMT.Low, 4)+"× to "+sig(u.SMT.High, 4)+"× ("+u.SMT.Source+")")
	}
	if derived && u.MultiLocal != nil {
		parts = append(parts, fmt.Sprintf("on several sockets, local latency %s× to %s× one socket's (%s)", sig(u.MultiLocal.Low, 4), sig(u.MultiLocal.High, 4), u.MultiLocal.Source))
	}
	if derived && u.Remote != nil {
		parts = append(parts, fmt.Sprintf("remote latency %s× to %s× local (%s)", sig(u.Remote.Low, 4), sig(u.Remote.High, 4), u.Remote.Source))
	}
	return strings.Join(parts, "; ")
}

// measurements are what would pin each uncertain input down.
var measurements = map[string]string{
	AssumeA:      "more latency points (a longer 'numalab eval', or 'numalab model measure' again) to narrow A and M",
	AssumeSMT:    "SMT on against off on a machine with SMT ('numalab run oltp --placements smt=on,smt=off')",
	AssumeLocal:  "one socket's local latency against a two-socket server's ('numalab probe mem' on each)",
	AssumeRemote: "a multi-socket server's remote latency ('numalab probe mem' on it measures the node matrix)",
}

// decide makes the decision: the cheapest per 1,000 tps (win), unless its
// cost band overlaps another candidate's; then "cannot tell", with the
// input whose band alone overlaps them most and the measurement that would
// pin it. Either way, every assumed input with the value at which the
// cheapest and the next cheapest would swap.
func (p *Purchase) decide(w Workload, u Uncertainty, win int) {
	r := p.Rows[win]
	wlo, whi := r.CostBand()
	next := -1
	for i, o := range p.Rows {
		if i == win {
			continue
		}
		if next < 0 || o.CostPerKTPS < p.Rows[next].CostPerKTPS {
			next = i
		}
		if lo, _ := o.CostBand(); lo <= whi {
			p.Rivals = append(p.Rivals, o.Server.Name)
		}
	}
	band := fmt.Sprintf("%s per 1,000 tps, band %s to %s; %s tps predicted, band %s to %s", thousands(r.CostPerKTPS), thousands(wlo), thousands(whi),
		thousands(r.TotalTPS), thousands(r.TPSLow), thousands(r.TPSHigh))
	if next >= 0 {
		p.Flips = p.flips(w, u, r.Server, p.Rows[next].Server)
	}
	var s string
	if len(p.Rivals) == 0 {
		p.Decision = r.Server.Name
		s = fmt.Sprintf("Buy %s: %s.", r.Server.Name, band)
	} else {
		p.Decider = p.decider(w, u, r.Server)
		s = fmt.Sprintf("Cannot tell: %s is cheapest (%s), but its cost band overlaps %s's. The measurement that would decide: %s.",
			r.Server.Name, band, strings.Join(p.Rivals, "'s, "), p.Decider)
	}
	if be := p.BreakEven; be != nil {
		s += " " + be.String(r.Server.Sockets > 1)
	}
	if len(p.Flips) > 0 {
		var fs []string
		for _, f := range p.Flips {
			fs = append(fs, f.String())
		}
		s += fmt.Sprintf(" Against %s, the next cheapest, it rests on: %s.", p.Rows[next].Server.Name, strings.Join(fs, "; "))
	}
	p.Recommendation = s
}

// decider is the input whose band alone makes the cheapest candidate's
// cost band overlap a rival's most, and the measurement that pins it.
func (p *Purchase) decider(w Workload, u Uncertainty, win Server) string {
	best, most := "", math.Inf(-1)
	for _, in := range []string{AssumeA, AssumeSMT, AssumeLocal, AssumeRemote} {
		lo, _ := u.band(w, win, in)
		whi := (win.Price + float64(win.Cores())*win.LicencePerCore) / (lo / 1000)
		for _, row := range p.Rows {
			if row.Server.Name == win.Name {
				continue
			}
			_, hi := u.band(w, row.Server, in)
			olo := row.TotalCost / (hi / 1000)
			if d := whi - olo; d > most {
				best, most = in, d
			}
		}
	}
	return measurements[best]
}

// flips finds, for every input the decision rests on, the value at which
// a (the cheapest) and b (the next cheapest) cost the same per 1,000 tps.
func (p *Purchase) flips(w Workload, u Uncertainty, a, b Server) []Flip {
	c := u.center(w)
	diff := func(sc scenario) float64 { return u.costAt(a, sc) - u.costAt(b, sc) }
	var out []Flip
	search := func(name string, assumed, lo, hi float64, set func(sc *scenario, v float64)) {
		f := Flip{Input: name, Assumed: assumed, Range: fmtValue(lo) + " to " + fmtValue(hi)}
		at := func(v float64) float64 { sc := c; set(&sc, v); return diff(sc) }
		v, ok := crossing(at, assumed, lo, hi)
		f.At, f.None = v, !ok
		out = append(out, f)
	}
	smt := a.SMT > 1 || b.SMT > 1
	if smt && !(u.SMT.Low == u.SMT.High) {
		search(AssumeSMT, u.SMT.Value, 1, 2, func(sc *scenario, v float64) { sc.smt = v })
	}
	derived := (a.oneNS > 0 && a.Sockets > 1) || (b.oneNS > 0 && b.Sockets > 1)
	if derived && u.MultiLocal != nil {
		search("multi-socket local latency ratio", u.MultiLocal.Value, 1, 1.6, func(sc *scenario, v float64) { sc.ml = v })
	}
	if derived && u.Remote != nil {
		search("remote/local latency ratio", u.Remote.Value, 1, 3, func(sc *scenario, v float64) { sc.rr = v })
	}
	if u.AnchorNS > 0 {
		cy := CyclesPerTxn(w, u.AnchorNS, u.AnchorGHz)
		x := LatencyCycles(u.AnchorNS, u.AnchorGHz)
		share := w.Waits() * x / cy
		search("stall share at one socket", share, 0.05, 0.95, func(sc *scenario, v float64) { sc.w = FromCycles(CyclesAtShare(cy, x, v)) })
	}
	if a.Sockets > 1 || b.Sockets > 1 {
		multi := a
		if b.Sockets > a.Sockets {
			multi = b
		}
		search("remote fraction", multi.NoLocality(), 0, 1, func(sc *scenario, v float64) { sc.remoteFrac = v })
	}
	// a's price: a costs b's per 1,000 tps at a price of b's cost per tps
	// × a's tps, less a's licences.
	_, ta := u.tpsAt(a, c)
	at := u.costAt(b, c)*ta/1000 - float64(a.Cores())*a.LicencePerCore
	out = append(out, Flip{Input: "the price of " + a.Name, Assumed: a.Price, At: at, None: !(at > 0), Range: "0 up"})
	return out
}

// crossing finds where f changes sign between from (where it is f(from))
// and lo or hi, the nearer crossing first; false when it does not.
func crossing(f func(float64) float64, from, lo, hi float64) (float64, bool) {
	f0 := f(from)
	const steps = 200
	best, found := 0.0, false
	for _, end := range []float64{lo, hi} {
		prev := from
		for i := 1; i <= steps; i++ {
			v := from + (end-from)*float64(i)/steps
			if (f(v) > 0) != (f0 > 0) {
				a, b := prev, v
				for range 50 {
					m := (a + b) / 2
					if (f(m) > 0) != (f0 > 0) {
						b = m
					} else {
						a = m
					}
				}
				if !found || math.Abs(b-from) < math.Abs(best-from) {
					best, found = b, true
				}
				break
			}
			prev = v
		}
	}
	return best, found
}

// breakEven finds the remote fraction at which the cheapest (per 1,000
// tps, no locality) multi-socket candidate costs what the cheapest
// one-socket one with as many threads per core does. Cost per tps rises
// with latency, which rises with the remote fraction, so bisection finds
// it.
func (u Uncertainty) breakEven(w Workload, servers []Server) *BreakEven {
	c := u.center(w)
	cost := func(s Server, r float64) float64 { sc := c; sc.remoteFrac = r; return u.costAt(s, sc) }
	multi := -1
	for i, s := range servers {
		if s.Sockets > 1 && (multi < 0 || cost(s, s.NoLocality()) < cost(servers[multi], servers[multi].NoLocality())) {
			multi = i
		}
	}
	if multi < 0 {
		return nil
	}
	one := -1
	for i, s := range servers {
		if s.Sockets == 1 && s.SMT == servers[multi].SMT && (one < 0 || cost(s, 0) < cost(servers[one], 0)) {
			one = i
		}
	}
	if one < 0 {
		return nil
	}
	a, b := servers[one], servers[multi]
	target := cost(a, 0)
	diff := func(r float64) float64 { return cost(b, r) - target }
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

// String is the break-even in one sentence; multiWins says the cheapest
// candidate has several sockets.
func (be BreakEven) String(multiWins bool) string {
	box := fmt.Sprintf("A %d-socket box (%s)", be.Sockets, be.MultiSocket)
	assumed := fmt.Sprintf("the model assumes %s with no locality", percent(be.Assumed))
	switch {
	case be.RemoteFraction < 0:
		return fmt.Sprintf("%s would not win over %s at any remote fraction, even with all memory local.", box, be.OneSocket)
	case be.RemoteFraction > 1:
		return fmt.Sprintf("%s beats %s at any remote fraction.", box, be.OneSocket)
	case multiWins:
		return fmt.Sprintf("%s wins over %s only while the workload's remote fraction stays below %s (%s).", box, be.OneSocket, percent(be.RemoteFraction), assumed)
	}
	return fmt.Sprintf("%s would win only if the workload's remote fraction were below %s (%s).", box, percent(be.RemoteFraction), assumed)
}

// Uncertainty is what a calibration leaves uncertain: its fit's band, its
// SMT gain and, where they were not measured, the published ratios of a
// multi-socket server's latencies.
func (c *Calibration) Uncertainty() Uncertainty {
	u := Uncertainty{Fit: CalibrationBand(c), SMT: c.SMT, AnchorNS: c.OneSocketNS, AnchorGHz: c.GHz}
	if c.RemoteAssumed {
		ml, rr := PublishedMultiSocketLocal, PublishedRemoteRatio
		u.MultiLocal, u.Remote = &ml, &rr
	} else {
		ml := PublishedMultiSocketLocal
		u.MultiLocal = &ml
	}
	return u
}

// BuyCalibrated answers Buy for the workload calibrated in c, with its
// uncertainty and assumptions, among servers or, with none, the built-in
// candidates of the CPU c ran on (Calibration.CPU(smt)).
func BuyCalibrated(c *Calibration, smt int, servers []Server) (*Purchase, error) {
	p, err := buyAmong(c.Workload, c.Uncertainty(), c.Assumptions, c.CPU(smt), servers)
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
func BuyGiven(w Workload, cpu *GivenCPUFigures, servers []Server) (*Purchase, error) {
	assumptions := GivenWorkload(w)
	u := Uncertainty{SMT: PublishedSMTGain}
	if cpu == nil {
		if len(servers) == 0 {
			return nil, errors.New("no CPU given and no candidate servers: give this CPU's figures or a candidates file")
		}
		u.Fit, u.AnchorNS, u.AnchorGHz = StallBand(w, servers[0].LocalNS, servers[0].GHz), servers[0].LocalNS, servers[0].GHz
		return buyAmong(w, u, assumptions, CPU{}, servers)
	}
	this, given := GivenCPU(cpu.GHz, cpu.LocalNS, cpu.RemoteNS, cpu.Cores, cpu.SMT)
	ml := PublishedMultiSocketLocal
	u.Fit, u.AnchorNS, u.AnchorGHz, u.MultiLocal = StallBand(w, cpu.LocalNS, cpu.GHz), cpu.LocalNS, cpu.GHz, &ml
	if cpu.RemoteNS == 0 {
		rr := PublishedRemoteRatio
		u.Remote = &rr
	}
	return buyAmong(w, u, append(assumptions, given...), this, servers)
}

// buyAmong is Buy among servers, or with none the built-in candidates of
// this, with the assumptions it rests on.
func buyAmong(w Workload, u Uncertainty, assumptions []Assumption, this CPU, servers []Server) (*Purchase, error) {
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
