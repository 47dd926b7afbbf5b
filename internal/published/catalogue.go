package published

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"
)

// The basis of a source's figures, as a catalogue's sources must say.
const (
	BasisMeasured  = "measured"  // a measurement of the part (a benchmark result, a pointer chase)
	BasisVendor    = "vendor"    // the vendor's specification or list price
	BasisEstimated = "estimated" // a band or a figure carried over from other parts
)

// LatencyBand is one socket's memory latency where no measurement of the
// CPU itself was read: a band from published figures of other parts.
type LatencyBand struct {
	ID     string  `json:"id"`
	LowNS  float64 `json:"low_ns"`
	HighNS float64 `json:"high_ns"`
	Source string  `json:"source"`
	Note   string  `json:"note,omitempty"`
}

// MidNS is the band's middle, the value a prediction takes.
func (b LatencyBand) MidNS() float64 { return (b.LowNS + b.HighNS) / 2 }

// CPU is a server processor in the catalogue.
type CPU struct {
	Name           string  `json:"name"`
	Vendor         string  `json:"vendor"`
	Generation     string  `json:"generation"`
	Cores          int     `json:"cores"`
	Threads        int     `json:"threads"`
	BaseGHz        float64 `json:"base_ghz"`
	AllCoreGHz     float64 `json:"all_core_ghz"` // 0: not published
	MemoryChannels int     `json:"memory_channels"`
	MaxSockets     int     `json:"max_sockets"` // 1: a one-socket part
	Latency        string  `json:"latency"`     // a latency band's id
	PriceUSD       float64 `json:"price_usd"`
	PriceKind      string  `json:"price_kind"`
	PriceDate      string  `json:"price_date"`
	SpecSource     string  `json:"spec_source"`
	PriceSource    string  `json:"price_source"`
	SpecURL        string  `json:"spec_url,omitempty"`
	PriceURL       string  `json:"price_url,omitempty"`
	// PerCore is the CPU's published per-core speed; nil where none was
	// found (the model then gives it this machine's cycles per
	// transaction: the same IPC).
	PerCore *PerCore `json:"per_core,omitempty"`
}

// PerCore is a CPU's per-core speed from published benchmark results:
// SPECrate2017_int_base over the physical cores, the median of the
// published results with two threads per core, and the lowest and the
// highest of them (the band).
type PerCore struct {
	Median  float64 `json:"median"`
	Low     float64 `json:"low"`
	High    float64 `json:"high"`
	Results int     `json:"results"` // how many results the figures come from
	Example string  `json:"example"` // the result nearest the median, as published
	URL     string  `json:"url"`     // that result's disclosure
	Source  string  `json:"source"`
	Note    string  `json:"note,omitempty"`
}

// Reference is a CPU the catalogue does not sell whose per-core figure
// stands for this machine's when the machine's model name contains one
// of Match (or Name).
type Reference struct {
	Name    string   `json:"name"`
	Match   []string `json:"match,omitempty"`
	PerCore PerCore  `json:"per_core"`
	Note    string   `json:"note,omitempty"`
}

// LoadedGHz is the clock the model runs the CPU at under load: the
// all-core clock where published, else the base clock (a lower bound).
func (c CPU) LoadedGHz() float64 {
	if c.AllCoreGHz > 0 {
		return c.AllCoreGHz
	}
	return c.BaseGHz
}

// Catalogue is the CPU catalogue file (data/cpus.json).
type Catalogue struct {
	About        string        `json:"about"`
	Sources      []Source      `json:"sources"`
	LatencyBands []LatencyBand `json:"latency_bands"`
	CPUs         []CPU         `json:"cpus"`
	References   []Reference   `json:"references,omitempty"`
}

// PerCoreOf is the per-core figure of the CPU whose model name is model
// (as /proc/cpuinfo or 'numalab topo' gives it, or a catalogue name):
// the catalogue CPU or reference whose name the model name contains,
// the longest such name when several do; false when none does or it
// has no per-core figure.
func (c *Catalogue) PerCoreOf(model string) (name string, pc PerCore, ok bool) {
	m := plainModel(model)
	best := ""
	try := func(n string, p *PerCore, keys ...string) {
		for _, k := range keys {
			if k = plainModel(k); k != "" && p != nil && strings.Contains(m, k) && len(k) > len(best) {
				best, name, pc, ok = k, n, *p, true
			}
		}
	}
	for _, x := range c.CPUs {
		try(x.Name, x.PerCore, x.Name)
	}
	for _, r := range c.References {
		try(r.Name, &r.PerCore, append([]string{r.Name}, r.Match...)...)
	}
	return name, pc, ok
}

// plainModel is a model name lower-cased, without trademark marks and
// with single spaces: "Intel(R) Xeon(R) Gold 6444Y" reads as "intel xeon
// gold 6444y".
func plainModel(s string) string {
	s = strings.ToLower(s)
	for _, mark := range []string{"(r)", "(tm)", "®", "™"} {
		s = strings.ReplaceAll(s, mark, " ")
	}
	return strings.Join(strings.Fields(s), " ")
}

// Band is the latency band a CPU names (Check guarantees it exists).
func (c *Catalogue) Band(cpu CPU) LatencyBand {
	for _, b := range c.LatencyBands {
		if b.ID == cpu.Latency {
			return b
		}
	}
	return LatencyBand{}
}

//go:embed data/cpus.json
var cpusJSON []byte

// BuiltinCatalogue is the embedded CPU catalogue, checked.
func BuiltinCatalogue() (*Catalogue, error) { return ParseCatalogue("data/cpus.json", cpusJSON) }

// ParseCatalogue reads and checks a CPU catalogue: every source says
// the basis of its figures (measured, vendor or estimated), every CPU
// cites listed sources for its specification, its price and its per-core
// figure, names a latency band, and has every figure in range; every
// reference has a per-core figure. All problems are reported together.
func ParseCatalogue(name string, data []byte) (*Catalogue, error) {
	var cat Catalogue
	c, ids, err := begin(name, data, &cat, &cat.Sources)
	if err != nil {
		return nil, err
	}
	for i, s := range cat.Sources {
		if s.Basis != BasisMeasured && s.Basis != BasisVendor && s.Basis != BasisEstimated {
			c.bad(fmt.Sprintf("source %d (%q)", i+1, s.ID), "basis", "= %q: want %q, %q or %q",
				s.Basis, BasisMeasured, BasisVendor, BasisEstimated)
		}
	}
	bands := map[string]bool{}
	for i, b := range cat.LatencyBands {
		row := fmt.Sprintf("latency band %d (%q)", i+1, b.ID)
		c.text(row, "id", b.ID)
		c.number(row, "low_ns", b.LowNS, 20, 1000)
		c.number(row, "high_ns", b.HighNS, b.LowNS, 1000)
		c.cites(ids, row, "source", b.Source)
		bands[b.ID] = true
	}
	names := map[string]bool{}
	for i, x := range cat.CPUs {
		row := fmt.Sprintf("cpu %d (%q)", i+1, x.Name)
		c.cpu(row, x, ids)
		if !bands[x.Latency] {
			c.bad(row, "latency",
				"= %q names no latency band of the file: want one socket's memory latency, measured or a band", x.Latency)
		}
		if names[x.Name] {
			c.bad(row, "name", "is given twice: want one row per CPU")
		}
		names[x.Name] = true
	}
	for i, r := range cat.References {
		row := fmt.Sprintf("reference %d (%q)", i+1, r.Name)
		c.text(row, "name", r.Name)
		c.perCore(row, &r.PerCore, ids)
	}
	if len(cat.CPUs) == 0 {
		c.bad("cpus", "list", "is empty: want the CPUs to choose between")
	}
	if err := errors.Join(c.errs...); err != nil {
		return nil, err
	}
	return &cat, nil
}

// cpu checks one catalogue CPU's figures and the sources they cite.
func (c *checker) cpu(row string, x CPU, ids map[string]bool) {
	for _, f := range []struct{ name, v string }{{"name", x.Name}, {"vendor", x.Vendor}, {"generation", x.Generation},
		{"price_kind", x.PriceKind}} {
		c.text(row, f.name, f.v)
	}
	c.count(row, "cores", x.Cores, 1, 1024)
	c.count(row, "threads", x.Threads, x.Cores, 8*max(x.Cores, 1))
	c.number(row, "base_ghz", x.BaseGHz, 0.1, 10)
	if x.AllCoreGHz != 0 {
		c.number(row, "all_core_ghz", x.AllCoreGHz, x.BaseGHz, 10)
	}
	c.count(row, "memory_channels", x.MemoryChannels, 1, 64)
	c.count(row, "max_sockets", x.MaxSockets, 1, 64)
	c.number(row, "price_usd", x.PriceUSD, 1, 1e6)
	c.date(row, "price_date", x.PriceDate)
	c.cites(ids, row, "spec_source", x.SpecSource)
	c.cites(ids, row, "price_source", x.PriceSource)
	if x.PerCore != nil {
		c.perCore(row, x.PerCore, ids)
	}
}

// perCore checks a per-core figure: the median inside its band, the band
// positive, the results counted, the result and the source named.
func (c *checker) perCore(row string, p *PerCore, ids map[string]bool) {
	c.number(row, "per_core.low", p.Low, 1e-9, 1e6)
	c.number(row, "per_core.median", p.Median, p.Low, p.High)
	c.number(row, "per_core.high", p.High, p.Low, 1e6)
	c.count(row, "per_core.results", p.Results, 1, 1e6)
	c.text(row, "per_core.example", p.Example)
	c.text(row, "per_core.url", p.URL)
	c.cites(ids, row, "per_core.source", p.Source)
}
