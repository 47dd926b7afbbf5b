package published

import (
	"fmt"
	"math"
	"slices"

	"github.com/numalab/numalab/internal/model"
)

// The database's own scaling. Amdahl's law with a serial (contended) share
// σ of each transaction's work, the contention term of Gunther's Universal
// Scalability Law: N cores deliver N / (1 + σ·(N − 1)) cores' worth of
// work. No published figure gives σ for TPC-E on SQL Server, so it is the
// one free parameter, fitted to the pairs; each pair's own prediction is
// also made with σ fitted to the other pairs alone (leave-one-out), so the
// table shows how well the term predicts a pair it has not seen.

// sigmaPoint is one pair as the σ fit sees it: the memory-latency model's
// ratio, the published one, and the cores on each side.
type sigmaPoint struct {
	latency, published float64
	from, to           int
	generation         string // the CPU generation, for leaving a whole CPU out
}

// contention is the pair's scaling factor at σ: the To system's share of
// useful work over the From system's.
func (p sigmaPoint) contention(sigma float64) float64 {
	return (1 + sigma*float64(p.from-1)) / (1 + sigma*float64(p.to-1))
}

// sigmaMax bounds the fit: at σ = 0.05 a 100-core system does less than
// 17 cores' work, far beyond any published OLTP scaling.
const sigmaMax = 0.05

// fitSigma is the σ in [0, sigmaMax] that minimises the squared log errors
// of every point skip does not name (nil: every point), by golden-section
// search (the sum is unimodal in σ for ratios that fall with σ). σ is not
// negative: a published ratio above the latency model's is left to the
// other terms rather than read as the database scaling better than
// linearly.
func fitSigma(pts []sigmaPoint, skip func(i int) bool) float64 {
	cost := func(sigma float64) float64 {
		sum := 0.0
		for i, p := range pts {
			if skip == nil || !skip(i) {
				d := math.Log(p.latency * p.contention(sigma) / p.published)
				sum += d * d
			}
		}
		return sum
	}
	g := (math.Sqrt(5) - 1) / 2
	lo, hi := 0.0, sigmaMax
	for range 200 {
		a, b := hi-g*(hi-lo), lo+g*(hi-lo)
		if cost(a) <= cost(b) {
			hi = b
		} else {
			lo = a
		}
	}
	return (lo + hi) / 2
}

// TermEffect is one term's column of the term table: every pair's error
// (predicted / published − 1) with that term alone added to the memory-
// latency model, in the order of the checks.
type TermEffect struct {
	Term    string    `json:"term"`
	Source  string    `json:"source"`
	Adopted bool      `json:"adopted"`
	Errors  []float64 `json:"errors"`
	// NotApplicable marks the pairs the term has no figure for: a
	// locality given for one side's socket count and not the other's.
	// Their error is the memory-latency model's alone.
	NotApplicable []bool `json:"not_applicable,omitempty"`
}

// termEffects is the term table: the latency model alone, each candidate
// term of the file (its figures together), the contention term at the
// fitted σ, and the contention term leave-one-out.
func (r *Results) termEffects(v *Validation) ([]TermEffect, error) {
	base := TermEffect{Term: "memory latency alone (no locality)", Source: "the platforms' latencies", Adopted: true}
	fitted := TermEffect{Term: fmt.Sprintf("+ contention, σ = %s fitted to all pairs", model.Sig(v.Sigma, 3)),
		Source: "Amdahl / Gunther's contention term; σ fitted", Adopted: true}
	loo := TermEffect{Term: "+ contention, σ fitted leave-one-out",
		Source: "each pair's σ from the other pairs", Adopted: true}
	cpu := TermEffect{Term: "+ contention, σ fitted leaving the pair's CPU out",
		Source: "each pair's σ from other CPUs' pairs", Adopted: true}
	for _, k := range v.Checks {
		base.Errors = append(base.Errors, k.LatencyRatio/k.Published-1)
		fitted.Errors = append(fitted.Errors, k.Error)
		if k.LOO != nil {
			loo.Errors = append(loo.Errors, k.LOO.Error)
			if k.LOO.CPUOut != nil {
				cpu.Errors = append(cpu.Errors, k.LOO.CPUOut.Error)
			}
		}
	}
	out := []TermEffect{base}
	var terms []string
	for _, c := range r.Candidates {
		if !slices.Contains(terms, c.Term) {
			terms = append(terms, c.Term)
		}
	}
	for _, t := range terms {
		var cands []Candidate
		var sources []string
		for _, c := range r.Candidates {
			if c.Term == t {
				cands = append(cands, c)
				if !slices.Contains(sources, c.Source) {
					sources = append(sources, c.Source)
				}
			}
		}
		e := TermEffect{Term: "+ " + t, Source: fmt.Sprint(sources)}
		for i, k := range v.Checks {
			if oneSided(cands, k) {
				e.Errors = append(e.Errors, base.Errors[i])
				e.NotApplicable = append(e.NotApplicable, true)
				continue
			}
			x, _, _, err := r.ratio(k.From, k.To, variant{share: v.Share, cands: cands})
			if err != nil {
				return nil, fmt.Errorf("term %q, pair %s to %s: %w", t, k.Pair.From, k.Pair.To, err)
			}
			e.Errors = append(e.Errors, x/k.Published-1)
			e.NotApplicable = append(e.NotApplicable, false)
		}
		if !slices.Contains(e.NotApplicable, true) {
			e.NotApplicable = nil
		}
		out = append(out, e)
	}
	out = append(out, fitted)
	for _, t := range []TermEffect{loo, cpu} {
		if len(t.Errors) == len(v.Checks) {
			out = append(out, t)
		}
	}
	return out, nil
}

// oneSided says the candidates give a locality for one side of the pair
// and not the other: comparing a system with its locality to one without
// would credit the term with the difference of having a figure.
func oneSided(cands []Candidate, k Check) bool {
	has := func(x Result) bool {
		return slices.ContainsFunc(cands,
			func(c Candidate) bool { return c.Kind == KindLocality && c.applies(x.Platform, x.Sockets) })
	}
	return has(k.From) != has(k.To)
}

// MedianLOO is the median of the absolute leave-one-out errors, and
// whether there are any (a file of one pair has none).
func (v *Validation) MedianLOO() (float64, bool) {
	return v.medianAbs(func(l *LeaveOneOut) *Fold { return &Fold{Error: l.Error} })
}

// MedianCPUOut is the median of the absolute errors with each pair's CPU
// generation left out of the fit, and whether there are any.
func (v *Validation) MedianCPUOut() (float64, bool) {
	return v.medianAbs(func(l *LeaveOneOut) *Fold { return l.CPUOut })
}

func (v *Validation) medianAbs(pick func(*LeaveOneOut) *Fold) (float64, bool) {
	var e []float64
	for _, k := range v.Checks {
		if k.LOO == nil {
			continue
		}
		if f := pick(k.LOO); f != nil {
			e = append(e, math.Abs(f.Error))
		}
	}
	if len(e) == 0 {
		return 0, false
	}
	slices.Sort(e)
	n := len(e)
	return (e[(n-1)/2] + e[n/2]) / 2, true
}
