package decide

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/published"
)

// CatalogueCandidates are the catalogue's CPUs as candidates: each CPU in
// a one-socket server and, if it takes two sockets, in a two-socket one;
// at its all-core clock where published, else its base clock; every
// hardware thread in use; one socket's latency the middle of its band,
// two sockets' local and remote latencies derived from it by the
// published ratios (Uncertainty varies all three); the price the CPUs'
// list prices alone, every physical core licensed at licence.
func CatalogueCandidates(cat *published.Catalogue, licence float64) []Server {
	var out []Server
	for _, c := range cat.CPUs {
		band := cat.Band(c)
		mid := band.MidNS()
		clock := fmt.Sprintf("all-core %s GHz", model.Num(c.AllCoreGHz))
		if c.AllCoreGHz == 0 {
			clock = fmt.Sprintf("base %s GHz (no all-core clock published: a lower bound)", model.Num(c.BaseGHz))
		}
		for _, n := range []int{1, 2} {
			if n > c.MaxSockets {
				break
			}
			s := Server{Name: fmt.Sprintf("%s ×%d", c.Name, n), Sockets: n, CoresPerSocket: c.Cores, GHz: c.LoadedGHz(), SMT: max(c.Threads/c.Cores, 1),
				LocalNS: mid, Price: float64(n) * c.PriceUSD, LicencePerCore: licence, catLow: band.LowNS, catHigh: band.HighNS}
			if n > 1 {
				s.oneNS, s.remoteDerived = mid, true
				s.LocalNS = mid * model.PublishedMultiSocketLocal.Value
				s.RemoteNS = s.LocalNS * model.PublishedRemoteRatio.Value
			}
			s.Note = fmt.Sprintf("%s %s, %d cores / %d threads, %s, %d memory channels; price %d × %s %s of %s (%s); one socket's latency %s to %s ns [%s]",
				c.Vendor, c.Generation, c.Cores, c.Threads, clock, c.MemoryChannels, n, c.PriceKind, model.Thousands(c.PriceUSD), c.PriceDate,
				c.PriceSource, model.Num(band.LowNS), model.Num(band.HighNS), band.Source)
			out = append(out, s)
		}
	}
	return out
}

// BuyCatalogueCalibrated answers Buy for the workload calibrated in c
// among the catalogue's CPUs (CatalogueCandidates).
func BuyCatalogueCalibrated(c *calib.Calibration, cat *published.Catalogue) (*Purchase, error) {
	p, err := buyCatalogue(c.Workload, calibrated(c), c.Assumptions, cat)
	if p != nil {
		p.FitChoice = c.FitChoice
	}
	return p, err
}

// BuyCatalogueGiven answers Buy for the given workload w among the
// catalogue's CPUs, the stall band anchored at this CPU's one-socket
// latency and clock (cpu, as 'model buy' is given them).
func BuyCatalogueGiven(w model.Workload, cpu *GivenCPUFigures, cat *published.Catalogue) (*Purchase, error) {
	if cpu == nil {
		return nil, errors.New("choosing from the catalogue: no CPU figures to anchor the workload: give this CPU's --ghz and --local-ns, or --run")
	}
	_, given := GivenCPU(cpu.GHz, cpu.Latencies, cpu.Cores, cpu.SMT)
	one := cpu.Latencies.OneSocket()
	u := Uncertainty{SMT: model.PublishedSMTGain, Fit: model.StallBand(w, one, cpu.GHz), AnchorNS: one, AnchorGHz: cpu.GHz}
	return buyCatalogue(w, u, append(GivenWorkload(w), given...), cat)
}

// buyCatalogue is Buy among the catalogue's CPUs with u's bands plus the
// catalogue's: its latency bands, and the published ratios for two
// sockets' latencies (never measured for a catalogue CPU).
func buyCatalogue(w model.Workload, u Uncertainty, assumptions []calib.Assumption, cat *published.Catalogue) (*Purchase, error) {
	if len(cat.CPUs) == 0 {
		return nil, fmt.Errorf("choosing from the catalogue: it has no CPUs: %w", model.ErrInput)
	}
	ml, rr := model.PublishedMultiSocketLocal, model.PublishedRemoteRatio
	u.MultiLocal, u.Remote = &ml, &rr
	var bands []string
	lo, hi := 0.0, 0.0
	for i, b := range cat.LatencyBands {
		bands = append(bands, fmt.Sprintf("%s to %s ns (%s)", model.Num(b.LowNS), model.Num(b.HighNS), b.Note))
		if i == 0 || b.LowNS < lo {
			lo = b.LowNS
		}
		hi = max(hi, b.HighNS)
	}
	u.Catalogue = fmt.Sprintf("catalogue CPUs, ranked by cost per 1,000 tps: one socket's latency %s, every CPU at the same place in its band; the workload's A core cycles and M memory waits per transaction are this machine's (a catalogue CPU is assumed to need as many core cycles per transaction: the same IPC); a server's price is its CPUs' list prices alone, no board, memory or disks (give whole servers with --candidates)", bands[0])
	for _, b := range bands[1:] {
		u.Catalogue += "; or " + b
	}
	p, err := Buy(w, u, CatalogueCandidates(cat, builtinLicence))
	if err != nil {
		return nil, err
	}
	// The ranking: cheapest per 1,000 tps first.
	slices.SortStableFunc(p.Rows, func(a, b BuyRow) int { return cmp.Compare(a.CostPerKTPS, b.CostPerKTPS) })
	p.Assumptions = append(append([]calib.Assumption{}, assumptions...),
		calib.Assumption{Name: AssumeLicence, Value: builtinLicence, Basis: calib.Assumed, Source: "built-in, every physical core licensed (" + Illustrative + ")"},
		calib.Assumption{Name: AssumeCatalogue, Value: (lo + hi) / 2, Low: lo, High: hi, Unit: "ns", Basis: calib.Assumed,
			Source: "a band of published figures, not a measurement of these CPUs (internal/published/data/cpus.json)"})
	return p, nil
}
