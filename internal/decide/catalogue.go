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
// list prices alone, every physical core licensed at licence. With this
// machine's per-core figure (ref), a CPU with one of its own runs at the
// ratio of the two (Server.perCore), each figure with its band.
func CatalogueCandidates(cat *published.Catalogue, licence float64, ref *published.PerCore) []Server {
	var out []Server
	for _, c := range cat.CPUs {
		band := cat.Band(c)
		mid := band.MidNS()
		for _, n := range []int{1, 2} {
			if n > c.MaxSockets {
				break
			}
			s := Server{Name: fmt.Sprintf("%s ×%d", c.Name, n), Sockets: n, CoresPerSocket: c.Cores,
				GHz: c.LoadedGHz(), SMT: max(c.Threads/c.Cores, 1), LocalNS: mid, Price: float64(n) * c.PriceUSD,
				LicencePerCore: licence, catLow: band.LowNS, catHigh: band.HighNS, cpu: c.Name}
			if n > 1 {
				s.oneNS, s.remoteDerived = mid, true
				s.LocalNS = mid * model.PublishedMultiSocketLocal.Value
				s.RemoteNS = s.LocalNS * model.PublishedRemoteRatio.Value
			}
			if ref != nil && c.PerCore != nil {
				s.perCore, s.perCoreLow, s.perCoreHigh = c.PerCore.Median, c.PerCore.Low, c.PerCore.High
			}
			s.Note = catalogueNote(c, band, n, ref)
			out = append(out, s)
		}
	}
	return out
}

// catalogueNote says where a catalogue candidate's figures come from.
func catalogueNote(c published.CPU, band published.LatencyBand, n int, ref *published.PerCore) string {
	clock := fmt.Sprintf("all-core %s GHz", model.Num(c.AllCoreGHz))
	if c.AllCoreGHz == 0 {
		clock = fmt.Sprintf("base %s GHz (no all-core clock published: a lower bound)", model.Num(c.BaseGHz))
	}
	note := fmt.Sprintf("%s %s, %d cores / %d threads, %s, %d memory channels; price %d × %s %s of %s (%s); "+
		"one socket's latency %s to %s ns [%s]",
		c.Vendor, c.Generation, c.Cores, c.Threads, clock, c.MemoryChannels, n, c.PriceKind,
		model.Thousands(c.PriceUSD), c.PriceDate,
		c.PriceSource, model.Num(band.LowNS), model.Num(band.HighNS), band.Source)
	switch p := c.PerCore; {
	case p == nil:
		note += "; no per-core figure published: this machine's cycles per transaction (the same IPC)"
	case ref == nil:
		note += fmt.Sprintf(
			"; per core %s SPECrate2017_int_base (%s to %s, %d results) [%s], unused: no figure for this machine",
			model.Sig(p.Median, 4), model.Sig(p.Low, 4), model.Sig(p.High, 4), p.Results, p.Source)
	default:
		note += fmt.Sprintf("; per core %s SPECrate2017_int_base (%s to %s, %d results; nearest the median: %s, %s) "+
			"[%s]: %s× this machine's (%s× to %s×)",
			model.Sig(p.Median, 4), model.Sig(p.Low, 4), model.Sig(p.High, 4), p.Results, p.Example, p.URL, p.Source,
			model.Sig(p.Median/ref.Median, 3), model.Sig(p.Low/ref.High, 3), model.Sig(p.High/ref.Low, 3))
	}
	return note
}

// BuyCatalogueCalibrated answers Buy for the workload calibrated in c
// among the catalogue's CPUs (CatalogueCandidates); thisCPU is this
// machine's model name, whose per-core figure (published.PerCoreOf)
// the candidates' per-core speeds are taken against ("": none).
func BuyCatalogueCalibrated(c *calib.Calibration, cat *published.Catalogue, thisCPU string) (*Purchase, error) {
	p, err := buyCatalogue(c.Workload, calibrated(c), c.Assumptions, cat, thisCPU)
	if p != nil {
		p.FitChoice = c.FitChoice
	}
	return p, err
}

// BuyCatalogueGiven answers Buy for the given workload w among the
// catalogue's CPUs, the stall band anchored at this CPU's one-socket
// latency and clock (cpu, as 'model buy' is given them); thisCPU as for
// BuyCatalogueCalibrated.
func BuyCatalogueGiven(w model.Workload, cpu *GivenCPUFigures, cat *published.Catalogue,
	thisCPU string) (*Purchase, error) {
	if cpu == nil {
		return nil, errors.New(
			"choosing from the catalogue: no CPU figures to anchor the workload: give this CPU's --ghz and --local-ns, or --run")
	}
	_, given := GivenCPU(cpu.GHz, cpu.Latencies, cpu.Cores, cpu.SMT)
	one := cpu.Latencies.OneSocket()
	u := Uncertainty{SMT: model.PublishedSMTGain, Fit: model.StallBand(w, one, cpu.GHz), AnchorNS: one, AnchorGHz: cpu.GHz}
	return buyCatalogue(w, u, append(GivenWorkload(w), given...), cat, thisCPU)
}

// buyCatalogue is Buy among the catalogue's CPUs with u's bands plus the
// catalogue's: its latency bands, its per-core figures against this
// machine's (thisCPU's) where both are published, and the published
// ratios for two sockets' latencies (never measured for a catalogue CPU);
// the candidates compared for one workload (Uncertainty.Paired).
func buyCatalogue(w model.Workload, u Uncertainty, assumptions []calib.Assumption, cat *published.Catalogue,
	thisCPU string) (*Purchase, error) {
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
	u.Catalogue = fmt.Sprintf(
		"catalogue CPUs, ranked by cost per 1,000 tps: one socket's latency %s, every CPU at the same place in its band; "+
			"a server's price is its CPUs' list prices alone, no board, memory or disks (give whole servers with --candidates)",
		bands[0])
	for _, b := range bands[1:] {
		u.Catalogue += "; or " + b
	}
	refName, refFig, found := cat.PerCoreOf(thisCPU)
	var ref *published.PerCore
	speed := thisSpeedAssumption(thisCPU, refName, refFig, found)
	if found {
		ref, u.Paired = &refFig, true
		u.ThisSpeed = &model.Range{Value: refFig.Median, Low: refFig.Low, High: refFig.High, Source: speed.Source}
		u.Catalogue += "; per-core speed: a catalogue CPU's core time per transaction is this machine's over the " +
			"ratio of their published per-core figures (SPECrate2017_int_base per core, each from its lowest to its " +
			"highest result; this machine's shared by every comparison), its M waits as many; candidates compared for " +
			"one workload (every input but a CPU's own per-core figure the same on both sides of a comparison)"
	} else {
		u.Catalogue += "; every catalogue CPU needs this machine's A core cycles per transaction (the same IPC): " +
			speed.Source
	}
	p, err := Buy(w, u, CatalogueCandidates(cat, builtinLicence, ref))
	if err != nil {
		return nil, err
	}
	// The ranking: cheapest per 1,000 tps first.
	slices.SortStableFunc(p.Rows, func(a, b BuyRow) int { return cmp.Compare(a.CostPerKTPS, b.CostPerKTPS) })
	p.Assumptions = append(append([]calib.Assumption{}, assumptions...),
		calib.Assumption{Name: AssumeLicence, Value: builtinLicence, Basis: calib.Assumed,
			Source: "built-in, every physical core licensed (" + Illustrative + ")"},
		calib.Assumption{Name: AssumeCatalogue, Value: (lo + hi) / 2, Low: lo, High: hi, Unit: "ns", Basis: calib.Assumed,
			Source: "a band of published figures, not a measurement of these CPUs (internal/published/data/cpus.json)"})
	if found {
		p.Assumptions = append(p.Assumptions, speed)
	}
	return p, nil
}

// thisSpeedAssumption is this machine's per-core figure as an assumption:
// the published results of the CPU its model name names, or none.
func thisSpeedAssumption(thisCPU, name string, p published.PerCore, found bool) calib.Assumption {
	a := calib.Assumption{Name: AssumeThisSpeed, Basis: calib.Assumed}
	if !found {
		a.Source = fmt.Sprintf("none: this machine's CPU (%q) is no catalogue or reference CPU with a published per-core "+
			"figure; give --this-cpu NAME (one of internal/published/data/cpus.json) to compare per-core speeds", thisCPU)
		return a
	}
	a.Value, a.Low, a.High = p.Median, p.Low, p.High
	a.Source = fmt.Sprintf(
		"the published results of %s taken for this machine's CPU (%q): median of %d, nearest it %s, %s [%s]",
		name, thisCPU, p.Results, p.Example, p.URL, p.Source)
	return a
}
