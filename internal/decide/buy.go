package decide

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/conclusion"
	"github.com/numalab/numalab/internal/model"
)

// Purchase is the answer to "which server": every candidate's predicted
// throughput and cost with their bands, the winner on each measure, the
// decision (a candidate, or "cannot tell" and the measurement that would
// tell), and every assumed input it rests on with the value at which it
// would flip.
type Purchase struct {
	Workload model.Workload `json:"workload"`
	// Band says what the bands of BuyRow's TPSLow and TPSHigh cover.
	Band        string             `json:"band"`
	Assumptions []calib.Assumption `json:"assumptions,omitempty"`
	Rows        []BuyRow           `json:"candidates"`
	Best        Winners            `json:"best"`
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
// would change (conclusion.Flip).
type Flip = conclusion.Flip

// Buy predicts every candidate's throughput and cost for workload w with
// the band u leaves, names the winners and makes the decision. Candidates
// must be valid (ValidateServer).
func Buy(w model.Workload, u Uncertainty, servers []Server) (*Purchase, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if len(servers) == 0 {
		return nil, fmt.Errorf("choosing a server: no candidates: %w", model.ErrInput)
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
		parts = append(parts, "with SMT, its gain from "+model.Sig(u.SMT.Low, 4)+"× to "+model.Sig(u.SMT.High, 4)+
			"× ("+u.SMT.Source+")")
	}
	if derived && u.MultiLocal != nil {
		parts = append(parts, fmt.Sprintf("on several sockets, local latency %s× to %s× one socket's (%s)",
			model.Sig(u.MultiLocal.Low, 4), model.Sig(u.MultiLocal.High, 4), u.MultiLocal.Source))
	}
	if derived && u.Remote != nil {
		parts = append(parts, fmt.Sprintf("remote latency %s× to %s× local (%s)",
			model.Sig(u.Remote.Low, 4), model.Sig(u.Remote.High, 4), u.Remote.Source))
	}
	if u.Catalogue != "" {
		parts = append(parts, u.Catalogue)
	}
	return strings.Join(parts, "; ")
}

// measurements are what would pin each uncertain input down.
var measurements = map[string]string{
	calib.AssumeA:      "more latency points (a longer 'numalab eval', or 'numalab run pages' again) to narrow A and M",
	calib.AssumeSMT:    `SMT on against off on a machine with SMT ('numalab run oltp --placement "smt=on;smt=off"')`,
	calib.AssumeLocal:  "one socket's local latency against a two-socket server's ('numalab probe mem' on each)",
	calib.AssumeRemote: "a multi-socket server's remote latency ('numalab probe mem' on it measures the node matrix)",
	AssumeCatalogue: "the candidate CPUs' memory latency ('numalab probe mem' on each, " +
		"or a published measurement for the catalogue)",
	AssumeCoreSpeed: "this workload on the leading candidate CPUs ('numalab eval' on each, " +
		"a cloud instance of the part will do): " +
		"the published per-core figures (SPECrate2017_int_base per core) leave them inside each other's band",
	AssumeThisSpeed: "this machine's exact CPU model (--this-cpu, when the hypervisor hides it) " +
		"or its own SPEC CPU2017 rate result",
}

// decide makes the decision: the cheapest per 1,000 tps (win), unless its
// cost band overlaps another candidate's; then "cannot tell", with the
// input whose band alone overlaps them most and the measurement that would
// pin it. Either way, every assumed input with the value at which the
// cheapest and the next cheapest would swap.
func (p *Purchase) decide(w model.Workload, u Uncertainty, win int) {
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
		if lo, _ := o.CostBand(); !u.Paired && lo <= whi {
			p.Rivals = append(p.Rivals, o.Server.Name)
		}
	}
	if u.Paired {
		p.Rivals = u.pairedRivals(w, p.Rows, win, "")
	}
	band := fmt.Sprintf("%s per 1,000 tps, band %s to %s; %s tps predicted, band %s to %s",
		model.Thousands(r.CostPerKTPS), model.Thousands(wlo), model.Thousands(whi),
		model.Thousands(r.TotalTPS), model.Thousands(r.TPSLow), model.Thousands(r.TPSHigh))
	if next >= 0 {
		p.Flips = p.flips(w, u, r.Server, p.Rows[next].Server)
	}
	var s string
	if len(p.Rivals) == 0 {
		p.Decision = r.Server.Name
		s = fmt.Sprintf("Buy %s: %s.", r.Server.Name, band)
	} else {
		p.Decider = p.decider(w, u, r.Server)
		s = fmt.Sprintf(
			"Cannot tell: %s is cheapest (%s), but its cost band overlaps %s's. The measurement that would decide: %s.",
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

// deciders are the uncertain inputs, in the order a tie goes.
var deciders = []string{calib.AssumeA, calib.AssumeSMT, calib.AssumeLocal, calib.AssumeRemote,
	AssumeCatalogue, AssumeCoreSpeed, AssumeThisSpeed}

// decider is the input whose band alone makes the cheapest candidate's
// cost band overlap a rival's most (compared for one workload: the one
// that alone leaves the most rivals), and the measurement that pins it.
func (p *Purchase) decider(w model.Workload, u Uncertainty, win Server) string {
	best, most := "", math.Inf(-1)
	if u.Paired {
		i := slices.IndexFunc(p.Rows, func(r BuyRow) bool { return r.Server.Name == win.Name })
		for _, in := range deciders {
			if n := float64(len(u.pairedRivals(w, p.Rows, i, in))); n > most {
				best, most = in, n
			}
		}
		return measurements[best]
	}
	for _, in := range deciders {
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

// pairedRivals are the candidates that may cost as little as the
// cheapest (win) for one workload: for some value of the inputs every
// candidate shares (the fit's A and M, the SMT gain, the latency band's
// place, the multi-socket ratios, this machine's per-core figure), their
// lowest cost per 1,000 tps over their own CPU's per-core band is at or
// below the cheapest's highest over its own (one CPU in two servers has
// one figure). Only input varies, "" every one.
func (u Uncertainty) pairedRivals(w model.Workload, rows []BuyRow, win int, input string) []string {
	// The cheapest's highest cost by the shared inputs, and by every input.
	worstShared, worstAt := map[scenario]float64{}, map[scenario]float64{}
	best := make([]map[scenario]float64, len(rows))
	for i := range rows {
		best[i] = map[scenario]float64{}
	}
	sameCPU := func(i int) bool { return rows[i].Server.cpu != "" && rows[i].Server.cpu == rows[win].Server.cpu }
	for _, sc := range u.corners(w, input) {
		shared := sc
		shared.speedEnd = 0
		for i, r := range rows {
			c := u.costAt(r.Server, sc)
			k := shared
			if sameCPU(i) {
				k = sc
			}
			switch b, ok := best[i][k]; {
			case i == win:
				worstShared[shared] = max(worstShared[shared], c)
				worstAt[sc] = max(worstAt[sc], c)
			case !ok || c < b:
				best[i][k] = c
			}
		}
	}
	var out []string
	for i, r := range rows {
		worst := worstShared
		if sameCPU(i) {
			worst = worstAt
		}
		for k, b := range best[i] {
			if b <= worst[k] {
				out = append(out, r.Server.Name)
				break
			}
		}
	}
	return out
}

// flips finds, for every input the decision rests on, the value at which
// a (the cheapest) and b (the next cheapest) cost the same per 1,000 tps.
func (p *Purchase) flips(w model.Workload, u Uncertainty, a, b Server) []Flip {
	c := u.center(w)
	diff := func(sc scenario) float64 { return u.costAt(a, sc) - u.costAt(b, sc) }
	var out []Flip
	search := func(name string, assumed, lo, hi float64, set func(sc *scenario, v float64)) {
		f := Flip{Input: name, Assumed: assumed, Range: model.Figure(lo) + " to " + model.Figure(hi)}
		at := func(v float64) float64 { sc := c; set(&sc, v); return diff(sc) }
		v, ok := crossing(at, assumed, lo, hi)
		f.At, f.None = v, !ok
		out = append(out, f)
	}
	smt := a.SMT > 1 || b.SMT > 1
	if smt && !(u.SMT.Low == u.SMT.High) {
		search(calib.AssumeSMT, u.SMT.Value, 1, 2, func(sc *scenario, v float64) { sc.smt = v })
	}
	derived := (a.oneNS > 0 && a.Sockets > 1) || (b.oneNS > 0 && b.Sockets > 1)
	if derived && u.MultiLocal != nil {
		search("multi-socket local latency ratio", u.MultiLocal.Value, 1, 1.6, func(sc *scenario, v float64) { sc.ml = v })
	}
	if derived && u.Remote != nil {
		search("remote/local latency ratio", u.Remote.Value, 1, 3, func(sc *scenario, v float64) { sc.rr = v })
	}
	if u.AnchorNS > 0 {
		cy := model.CyclesPerTxn(w, u.AnchorNS, u.AnchorGHz)
		x := model.LatencyCycles(u.AnchorNS, u.AnchorGHz)
		share := w.Waits() * x / cy
		search("stall share at one socket", share, 0.05, 0.95,
			func(sc *scenario, v float64) { sc.w = model.FromCycles(model.CyclesAtShare(cy, x, v)) })
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
func (u Uncertainty) breakEven(w model.Workload, servers []Server) *BreakEven {
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
	assumed := fmt.Sprintf("the model assumes %s with no locality", model.Percent(be.Assumed))
	switch {
	case be.RemoteFraction < 0:
		return fmt.Sprintf("%s would not win over %s at any remote fraction, even with all memory local.", box, be.OneSocket)
	case be.RemoteFraction > 1:
		return fmt.Sprintf("%s beats %s at any remote fraction.", box, be.OneSocket)
	case multiWins:
		return fmt.Sprintf("%s wins over %s only while the workload's remote fraction stays below %s (%s).",
			box, be.OneSocket, model.Percent(be.RemoteFraction), assumed)
	}
	return fmt.Sprintf("%s would win only if the workload's remote fraction were below %s (%s).",
		box, model.Percent(be.RemoteFraction), assumed)
}
