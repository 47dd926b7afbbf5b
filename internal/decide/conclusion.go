package decide

import "github.com/numalab/numalab/internal/conclusion"

// Conclusion is p as a report shows it; nil for nil.
func (p *Purchase) Conclusion() *conclusion.Decision {
	if p == nil {
		return nil
	}
	d := &conclusion.Decision{Recommendation: p.Recommendation, Band: p.Band, Cheapest: p.Best.CostPerKTPS,
		Decision: p.Decision, Rivals: p.Rivals, Decider: p.Decider, Assumptions: p.Assumptions, Flips: p.Flips}
	for _, r := range p.Rows {
		s := r.Server
		lo, hi := r.CostBand()
		d.Rows = append(d.Rows, conclusion.Candidate{Name: s.Name, Sockets: s.Sockets, Cores: s.Cores(), SMT: s.SMT,
			GHz: s.GHz, Note: s.Note, LatencyNS: r.LatencyNS, TPSPerCore: r.TPSPerCore, TotalTPS: r.TotalTPS,
			TPSLow: r.TPSLow, TPSHigh: r.TPSHigh, TotalCost: r.TotalCost, CostPerKTPS: r.CostPerKTPS, CostLow: lo,
			CostHigh: hi, BestOn: p.BestOn(s.Name)})
	}
	return d
}
