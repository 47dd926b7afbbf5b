package published

import (
	"fmt"
	"math"
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
	// MatchNS is the To system's average latency at which the model, at
	// the assumed inputs, would give the published ratio (0: none would).
	MatchNS float64 `json:"match_latency_ns,omitempty"`
}

// Validation is every pair's check and what the band covers.
type Validation struct {
	Checks []Check `json:"checks"`
	// Share is the stall share the predictions are made at (the band
	// stays the published one's ends).
	Share float64 `json:"stall_share"`
	Band  string  `json:"band"`
	How   string  `json:"how"`
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

// latency is a result's average memory latency with no locality: the
// model's S-socket latency of its platform, with the remote latency at
// remoteRatio × local when remoteRatio > 0 (else the platform's own).
func latency(p Platform, sockets int, remoteRatio float64) (float64, error) {
	remote := p.RemoteNS
	if remoteRatio > 0 {
		remote = p.LocalNS * remoteRatio
	}
	m := model.Machine{LocalNS: p.LocalNS, RemoteNS: remote, BufferNS: p.BufferNS, BufferMinSockets: 1, Locality: -1}
	return m.Latency(sockets)
}

// ratio is the model's To/From throughput ratio at a stall share s of the
// From system's cycles (A and M fitted through From's latency and clock;
// the cycles per transaction cancel) and a remote/local ratio rr (0: each
// platform's own). Both sides run the same SMT, whose gain cancels.
func (r *Results) ratio(from, to Result, s, rr float64) (ratio, fromNS, toNS float64, err error) {
	if fromNS, err = latency(r.platform(from.Platform), from.Sockets, rr); err != nil {
		return 0, 0, 0, err
	}
	if toNS, err = latency(r.platform(to.Platform), to.Sockets, rr); err != nil {
		return 0, 0, 0, err
	}
	const c = 1e7 // any cycles per transaction: the ratio does not depend on it
	w := model.FromCycles(model.CyclesAtShare(c, model.LatencyCycles(fromNS, from.GHz), s))
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
// band is still the published stall shares' and remote ratios'.
func ValidateAt(r *Results, s float64) (*Validation, error) {
	if !(s > 0 && s < 1) {
		return nil, fmt.Errorf("stall share %s: want a fraction above 0 and below 1", model.Num(s))
	}
	share, rr := model.PublishedStallShare, model.PublishedRemoteRatio
	v := &Validation{Share: s,
		How: "predicted ratio = (cores_to · tps per core at L_to) / (cores_from · tps per core at L_from); tps per core = f·10⁹/(A + M·L·f) " +
			"with A and M through the from-system's latency and clock at the stall share; L = (local + (S − 1)·remote)/S + buffer, no locality",
		Band: fmt.Sprintf("the stall share from %s to %s (%s); the remote latency from %s× to %s× local (%s)",
			model.Percent(share.Low), model.Percent(share.High), share.Source, model.Sig(rr.Low, 3), model.Sig(rr.High, 3), rr.Source),
	}
	for _, p := range r.Pairs {
		from, to := r.result(p.From), r.result(p.To)
		k := Check{Pair: p, From: from, To: to, Published: to.Result / from.Result, Low: math.Inf(1), High: math.Inf(-1)}
		var err error
		if k.Predicted, k.FromNS, k.ToNS, err = r.ratio(from, to, s, 0); err != nil {
			return nil, fmt.Errorf("pair %s to %s: %w", p.From, p.To, err)
		}
		for _, b := range []float64{share.Low, s, share.High} {
			for _, q := range []float64{rr.Low, 0, rr.High} {
				x, _, _, err := r.ratio(from, to, b, q)
				if err != nil {
					return nil, fmt.Errorf("pair %s to %s: %w", p.From, p.To, err)
				}
				k.Low, k.High = math.Min(k.Low, x), math.Max(k.High, x)
			}
		}
		k.MatchNS = r.matchLatency(from, to, k.FromNS, s, k.Published)
		k.Error = k.Predicted/k.Published - 1
		k.InBand = k.Published >= k.Low && k.Published <= k.High
		v.Checks = append(v.Checks, k)
	}
	return v, nil
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
	return fmt.Sprintf("Against %d pairs of published results of one CPU (%s), the model's ratio at a stall share of %s is off by %s to %s; %d of %d published ratios lie in its band.",
		len(v.Checks), strings.Join(shapes, "; "), model.Percent(v.Share), signed(lo), signed(hi), v.InBand(), len(v.Checks))
}

func signed(x float64) string {
	s := model.Fixed(100*x, 1) + "%"
	if x >= 0 {
		s = "+" + s
	}
	return s
}
