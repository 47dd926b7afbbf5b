package published

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/numalab/numalab/internal/model"
)

// Check is the model's prediction of one pair's throughput ratio beside
// the published one.
type Check struct {
	Pair      Pair    `json:"pair"`
	From      Result  `json:"from"`
	To        Result  `json:"to"`
	FromNS    float64 `json:"from_latency_ns"` // the model's average latency, no locality
	ToNS      float64 `json:"to_latency_ns"`
	Published float64 `json:"published_ratio"` // To.Result / From.Result
	Predicted float64 `json:"predicted_ratio"` // at the assumed inputs
	Low       float64 `json:"predicted_low"`   // the band's ends
	High      float64 `json:"predicted_high"`
	// Error is Predicted / Published − 1.
	Error float64 `json:"error"`
	// InBand says the published ratio lies within Low to High.
	InBand bool `json:"in_band"`
	// MatchNS is the To system's average latency at which the memory-
	// latency model alone, at the assumed inputs, would give the published
	// ratio (0: none would).
	MatchNS float64 `json:"match_latency_ns,omitempty"`
	// LatencyRatio is the memory-latency model's ratio alone; Predicted is
	// it times Contention, the database's own scaling at the fitted σ.
	LatencyRatio float64 `json:"latency_ratio"`
	Contention   float64 `json:"contention_factor"`
	// LOO is the pair predicted with σ fitted to every other pair: that σ,
	// the prediction and its error (none with fewer than two pairs).
	LOO *LeaveOneOut `json:"leave_one_out,omitempty"`
}

// LeaveOneOut is a pair's prediction with σ fitted without it, and with σ
// fitted without every pair of its CPU generation (none when only that
// generation's pairs are there): pairs of one CPU share results and
// platforms, so leaving the whole CPU out is the stricter test.
type LeaveOneOut struct {
	Sigma     float64 `json:"sigma"`
	Predicted float64 `json:"predicted_ratio"`
	Error     float64 `json:"error"`
	CPUOut    *Fold   `json:"cpu_out,omitempty"`
}

// Fold is one out-of-sample prediction: the σ fitted without the pair and
// the pair's predicted ratio and error with it.
type Fold struct {
	Sigma     float64 `json:"sigma"`
	Predicted float64 `json:"predicted_ratio"`
	Error     float64 `json:"error"`
}

// Validation is every pair's check and what the band covers.
type Validation struct {
	Checks []Check `json:"checks"`
	// Share is the stall share the predictions are made at (the band
	// stays the published one's ends).
	Share float64 `json:"stall_share"`
	Band  string  `json:"band"`
	How   string  `json:"how"`
	// Sigma is the contention σ fitted to every pair; SigmaLow and
	// SigmaHigh the lowest and highest σ of the out-of-sample fits (each
	// pair out, each CPU out).
	Sigma     float64 `json:"sigma"`
	SigmaLow  float64 `json:"sigma_low"`
	SigmaHigh float64 `json:"sigma_high"`
	// Terms is how each term moves every pair's error (the term table).
	Terms []TermEffect `json:"terms"`
}

// platform is a result's platform (ParseResults guarantees it exists).
func (r *Results) platform(id string) Platform {
	for _, p := range r.Platforms {
		if p.ID == id {
			return p
		}
	}
	return Platform{}
}

func (r *Results) result(id string) Result {
	for _, x := range r.Results {
		if x.ID == id {
			return x
		}
	}
	return Result{}
}

// variant is what a prediction assumes beyond the platforms' figures: the
// stall share, the remote/local ratio (0: each platform's own), the end of
// the two-hop band (−1 low, 0 the platform's value, +1 high) and any
// candidate terms.
type variant struct {
	share, remoteRatio float64
	hop                int
	cands              []Candidate
}

// latency is a result's average memory latency: the model's S-socket
// latency of its platform with no locality, the remote latency at
// v.remoteRatio × local when it is set (else the platform's own), both as
// v's candidates set them for this platform and socket count.
func (v variant) latency(p Platform, sockets int) (float64, error) {
	remote, locality := p.RemoteNS, -1.0
	if v.remoteRatio > 0 {
		remote = p.LocalNS * v.remoteRatio
	}
	for _, c := range v.cands {
		if !c.applies(p.ID, sockets) {
			continue
		}
		switch c.Kind {
		case KindRemoteRatio:
			remote = p.LocalNS * c.Value
		case KindLocality:
			locality = c.Value
		}
	}
	if locality >= 0 {
		return model.LocalityLatency(p.LocalNS, remote, p.BufferNS, sockets, locality), nil
	}
	m := model.Machine{LocalNS: p.LocalNS, RemoteNS: remote, TwoHopNS: v.twoHop(p) * remote / p.RemoteNS,
		BufferNS: p.BufferNS, BufferMinSockets: 1, Locality: -1}
	return m.Latency(sockets)
}

// twoHop is the platform's two-hop latency at v's end of its band (its
// value where it has no band); a remote latency varied from the
// platform's scales it alike.
func (v variant) twoHop(p Platform) float64 {
	switch {
	case v.hop < 0 && p.TwoHopLowNS > 0:
		return p.TwoHopLowNS
	case v.hop > 0 && p.TwoHopHighNS > 0:
		return p.TwoHopHighNS
	}
	return p.TwoHopNS
}

// applies says the candidate sets a figure of this platform and socket count.
func (c Candidate) applies(platform string, sockets int) bool {
	if c.Sockets != 0 && c.Sockets != sockets {
		return false
	}
	return len(c.Platforms) == 0 || slices.Contains(c.Platforms, platform)
}

// ratio is the memory-latency model's To/From throughput ratio under v: A
// and M fitted through the From system's latency and clock at v's stall
// share (the cycles per transaction cancel). Both sides run the same SMT,
// whose gain cancels.
func (r *Results) ratio(from, to Result, v variant) (ratio, fromNS, toNS float64, err error) {
	if fromNS, err = v.latency(r.platform(from.Platform), from.Sockets); err != nil {
		return 0, 0, 0, err
	}
	if toNS, err = v.latency(r.platform(to.Platform), to.Sockets); err != nil {
		return 0, 0, 0, err
	}
	const c = 1e7 // any cycles per transaction: the ratio does not depend on it
	w := model.FromCycles(model.CyclesAtShare(c, model.LatencyCycles(fromNS, from.GHz), v.share))
	a := model.TPSPerCore(w, fromNS, from.GHz) * float64(from.Cores)
	b := model.TPSPerCore(w, toNS, to.GHz) * float64(to.Cores)
	return b / a, fromNS, toNS, nil
}

// matchLatency is the latency of to at which the model, with the workload
// fitted through from at the stall share s, gives the ratio want: to's
// cores must each deliver want × from's total over to's cores (0 when no
// latency does).
func (r *Results) matchLatency(from, to Result, fromNS, s, want float64) float64 {
	const c = 1e7
	w := model.FromCycles(model.CyclesAtShare(c, model.LatencyCycles(fromNS, from.GHz), s))
	target := want * model.TPSPerCore(w, fromNS, from.GHz) * float64(from.Cores) / float64(to.Cores)
	l, err := model.LatencyForTPS(w, to.GHz, 1, target)
	if err != nil {
		return 0
	}
	return l
}

// Validate predicts every pair's ratio with the model: the workload at the
// published OLTP stall share (its middle, band at its ends), each system's
// latency its platform's with no locality, the remote latency the
// platform's (band: the published remote/local ratios), the clock each
// result's, cores all of the system's.
func Validate(r *Results) (*Validation, error) {
	return ValidateAt(r, model.PublishedStallShare.Value)
}

// ValidateAt is Validate with the prediction at stall share s (a
// workload's fitted one, as the report's model section checks it); the
// band is still the published stall shares' and remote ratios', with σ
// over its leave-one-out fits.
func ValidateAt(r *Results, s float64) (*Validation, error) {
	if !(s > 0 && s < 1) {
		return nil, fmt.Errorf("stall share %s: want a fraction above 0 and below 1", model.Num(s))
	}
	share, rr := model.PublishedStallShare, model.PublishedRemoteRatio
	v := &Validation{Share: s,
		How: "predicted ratio = (cores_to · tps per core at L_to) / (cores_from · tps per core at L_from) " +
			"× (1 + σ·(cores_from − 1)) / (1 + σ·(cores_to − 1)); " +
			"tps per core = f·10⁹/(A + M·L·f) with A and M through the from-system's latency and clock at the stall share; " +
			"L = (local + (S − 1)·remote)/S + buffer, no locality (above 4 sockets, three sockets one hop away and " +
			"the rest two: L = (local + 3·remote + (S − 4)·two hops)/S + buffer); " +
			"σ, the database's own contention per core, fitted to the pairs (each pair's leave-one-out σ to the others)",
		Band: fmt.Sprintf("the stall share from %s to %s (%s); the remote latency from %s× to %s× local (%s); "+
			"two hops' latency over its band where no measurement gives it; "+
			"σ over its out-of-sample fits (each pair out, each CPU out)",
			model.Percent(share.Low), model.Percent(share.High), share.Source, model.Sig(rr.Low, 3),
			model.Sig(rr.High, 3), rr.Source),
	}
	fits := make([]sigmaPoint, len(r.Pairs))
	for i, p := range r.Pairs {
		from, to := r.result(p.From), r.result(p.To)
		k := Check{Pair: p, From: from, To: to, Published: to.Result / from.Result, Low: math.Inf(1), High: math.Inf(-1)}
		var err error
		if k.LatencyRatio, k.FromNS, k.ToNS, err = r.ratio(from, to, variant{share: s}); err != nil {
			return nil, fmt.Errorf("pair %s to %s: %w", p.From, p.To, err)
		}
		k.MatchNS = r.matchLatency(from, to, k.FromNS, s, k.Published)
		fits[i] = sigmaPoint{latency: k.LatencyRatio, published: k.Published, from: from.Cores, to: to.Cores,
			generation: from.Generation}
		v.Checks = append(v.Checks, k)
	}
	v.Sigma = fitSigma(fits, nil)
	v.SigmaLow, v.SigmaHigh = v.Sigma, v.Sigma
	for i := range v.Checks {
		k := &v.Checks[i]
		k.Contention = fits[i].contention(v.Sigma)
		k.Predicted = k.LatencyRatio * k.Contention
		k.Error = k.Predicted/k.Published - 1
		if len(fits) < 2 {
			continue
		}
		one := fold(fits, i, func(j int) bool { return j == i })
		k.LOO = &LeaveOneOut{Sigma: one.Sigma, Predicted: one.Predicted, Error: one.Error}
		v.SigmaLow, v.SigmaHigh = math.Min(v.SigmaLow, one.Sigma), math.Max(v.SigmaHigh, one.Sigma)
		sameCPU := func(j int) bool { return fits[j].generation == fits[i].generation }
		if slices.ContainsFunc(fits, func(p sigmaPoint) bool { return p.generation != fits[i].generation }) {
			cpu := fold(fits, i, sameCPU)
			k.LOO.CPUOut = &cpu
			v.SigmaLow, v.SigmaHigh = math.Min(v.SigmaLow, cpu.Sigma), math.Max(v.SigmaHigh, cpu.Sigma)
		}
	}
	for i := range v.Checks {
		if err := r.band(&v.Checks[i], fits[i], v); err != nil {
			return nil, err
		}
	}
	terms, err := r.termEffects(v)
	if err != nil {
		return nil, err
	}
	v.Terms = terms
	return v, nil
}

// fold predicts point i with σ fitted to the points skip leaves.
func fold(fits []sigmaPoint, i int, skip func(j int) bool) Fold {
	sigma := fitSigma(fits, skip)
	pred := fits[i].latency * fits[i].contention(sigma)
	return Fold{Sigma: sigma, Predicted: pred, Error: pred/fits[i].published - 1}
}

// band sets a check's band: every combination of the published stall
// shares, remote ratios, the ends of a platform's two-hop band and σ over
// its leave-one-out fits.
func (r *Results) band(k *Check, f sigmaPoint, v *Validation) error {
	share, rr := model.PublishedStallShare, model.PublishedRemoteRatio
	for _, b := range []float64{share.Low, v.Share, share.High} {
		for _, q := range []float64{rr.Low, 0, rr.High} {
			for _, hop := range []int{-1, 0, 1} {
				x, _, _, err := r.ratio(k.From, k.To, variant{share: b, remoteRatio: q, hop: hop})
				if err != nil {
					return fmt.Errorf("pair %s to %s: %w", k.Pair.From, k.Pair.To, err)
				}
				for _, sg := range []float64{v.SigmaLow, v.SigmaHigh} {
					y := x * f.contention(sg)
					k.Low, k.High = math.Min(k.Low, y), math.Max(k.High, y)
				}
			}
		}
	}
	k.InBand = k.Published >= k.Low && k.Published <= k.High
	return nil
}

// ErrorRange is the lowest and highest error over the checks.
func (v *Validation) ErrorRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, k := range v.Checks {
		lo, hi = math.Min(lo, k.Error), math.Max(hi, k.Error)
	}
	return lo, hi
}

// InBand is how many published ratios lie within their predicted band.
func (v *Validation) InBand() int {
	n := 0
	for _, k := range v.Checks {
		if k.InBand {
			n++
		}
	}
	return n
}

// Summary is one sentence on how the model did, for the report.
func (v *Validation) Summary() string {
	lo, hi := v.ErrorRange()
	var shapes []string
	seen := map[string]bool{}
	for _, k := range v.Checks {
		s := fmt.Sprintf("%s %d to %d sockets", k.From.Benchmark, k.From.Sockets, k.To.Sockets)
		if !seen[s] {
			seen[s] = true
			shapes = append(shapes, s)
		}
	}
	loo := ""
	if m, ok := v.MedianLOO(); ok {
		llo, lhi := v.LOORange()
		loo = fmt.Sprintf(", leave-one-out by %s to %s (median |error| %s)",
			signed(llo), signed(lhi), model.Fixed(100*m, 1)+"%")
	}
	if m, ok := v.MedianCPUOut(); ok {
		loo += fmt.Sprintf(", leaving the pair's CPU out median |error| %s", model.Fixed(100*m, 1)+"%")
	}
	return fmt.Sprintf("Against %d pairs of published results of one CPU (%s), the model's ratio at a stall share of %s "+
		"(memory latency and the database's contention, σ = %s fitted to the pairs) is off by %s to %s%s; "+
		"%d of %d published ratios lie in its band.",
		len(v.Checks), strings.Join(shapes, "; "), model.Percent(v.Share), model.Sig(v.Sigma, 3), signed(lo), signed(hi),
		loo, v.InBand(), len(v.Checks))
}

// LOORange is the lowest and highest leave-one-out error (0, 0 without).
func (v *Validation) LOORange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, k := range v.Checks {
		if k.LOO != nil {
			lo, hi = math.Min(lo, k.LOO.Error), math.Max(hi, k.LOO.Error)
		}
	}
	if math.IsInf(lo, 1) {
		return 0, 0
	}
	return lo, hi
}

func signed(x float64) string {
	s := model.Fixed(100*x, 1) + "%"
	if x >= 0 {
		s = "+" + s
	}
	return s
}
