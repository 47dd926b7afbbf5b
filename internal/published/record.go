package published

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/numalab/numalab/internal/model"
)

// ErrData is wrapped by every error about a published-data file.
var ErrData = errors.New("invalid published data")

// Source is a document a figure was read in.
type Source struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	URL    string `json:"url"`
	States string `json:"states"` // what was read there
	// Basis is what the source's figures are: BasisMeasured, BasisVendor
	// or BasisEstimated (a catalogue's sources must say; ParseCatalogue).
	Basis string `json:"basis,omitempty"`
}

// Platform is the memory latencies of a system the results ran on.
type Platform struct {
	ID       string  `json:"id"`
	CPU      string  `json:"cpu"`
	LocalNS  float64 `json:"local_ns"`
	RemoteNS float64 `json:"remote_ns"`
	BufferNS float64 `json:"buffer_ns,omitempty"` // on every access (a memory buffer chip)
	// TwoHopNS is the remote latency two hops away, which a result above
	// model.PublishedSockets sockets needs (three sockets one hop away,
	// the rest two); TwoHopLowNS and TwoHopHighNS its band where no
	// measurement gives it (0: the value alone).
	TwoHopNS     float64 `json:"two_hop_ns,omitempty"`
	TwoHopLowNS  float64 `json:"two_hop_low_ns,omitempty"`
	TwoHopHighNS float64 `json:"two_hop_high_ns,omitempty"`
	Source       string  `json:"source"`
	Note         string  `json:"note,omitempty"`
}

// Result is one published benchmark result.
type Result struct {
	ID         string  `json:"id"`
	Benchmark  string  `json:"benchmark"`
	System     string  `json:"system"`
	CPU        string  `json:"cpu"`
	Generation string  `json:"generation"`
	GHz        float64 `json:"ghz"`
	Sockets    int     `json:"sockets"`
	Cores      int     `json:"cores"` // all physical cores of the system
	Result     float64 `json:"result"`
	Unit       string  `json:"unit"`
	Date       string  `json:"date"` // YYYY, YYYY-MM or YYYY-MM-DD
	Document   string  `json:"document"`
	Platform   string  `json:"platform"`
	Source     string  `json:"source"`
}

// Pair is two results whose ratio (To over From) the model predicts.
type Pair struct {
	From string `json:"from"`
	To   string `json:"to"`
	Note string `json:"note,omitempty"`
}

// Candidate kinds.
const (
	KindLocality    = "locality"
	KindRemoteRatio = "remote_ratio"
)

// Candidate is one published figure of a term that might explain why more
// sockets cost more than the latency model says. Validate shows how each
// term (its candidates together) moves every pair's error; none of them
// enters the prediction, which the contention term fitted leave-one-out
// carries (scaling.go).
type Candidate struct {
	Term string `json:"term"`
	// Kind is what the figure sets: "locality" (the share of accesses to
	// the local node) or "remote_ratio" (remote over local latency).
	Kind      string   `json:"kind"`
	Sockets   int      `json:"sockets,omitempty"`   // the socket count it applies to (0: every one)
	Platforms []string `json:"platforms,omitempty"` // the platforms it applies to (none: every one)
	Value     float64  `json:"value"`
	Source    string   `json:"source"`
	Note      string   `json:"note,omitempty"`
}

// Results is the published-results file (data/tpc.json).
type Results struct {
	About      string      `json:"about"`
	Sources    []Source    `json:"sources"`
	Platforms  []Platform  `json:"platforms"`
	Results    []Result    `json:"results"`
	Pairs      []Pair      `json:"pairs"`
	Candidates []Candidate `json:"candidates,omitempty"`
}

// Source is the source of that id (Check guarantees it exists).
func sourceOf(sources []Source, id string) Source {
	for _, s := range sources {
		if s.ID == id {
			return s
		}
	}
	return Source{}
}

//go:embed data/tpc.json
var tpcJSON []byte

// BuiltinResults is the embedded published-results file, checked.
func BuiltinResults() (*Results, error) { return ParseResults("data/tpc.json", tpcJSON) }

// decode reads JSON strictly: unknown fields and trailing data are errors.
func decode(name string, data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
			return fmt.Errorf("%s:%d: %v: %w", name, line, err, ErrData)
		}
		return fmt.Errorf("%s: %v: %w", name, err, ErrData)
	}
	if dec.More() {
		return fmt.Errorf("%s: data after the top-level object: want one JSON object: %w", name, ErrData)
	}
	return nil
}

// begin decodes a data file into v and starts its check with its
// sources (*sources, a field of v): the checker and the ids they define.
func begin(name string, data []byte, v any, sources *[]Source) (*checker, map[string]bool, error) {
	if err := decode(name, data, v); err != nil {
		return nil, nil, err
	}
	c := &checker{name: name}
	return c, c.sources(*sources), nil
}

// checker gathers every problem of a file, each naming the row and field.
type checker struct {
	name string
	errs []error
}

func (c *checker) bad(row, field, format string, a ...any) {
	c.errs = append(c.errs, fmt.Errorf("%s: %s: %s %s: %w", c.name, row, field, fmt.Sprintf(format, a...), ErrData))
}

func (c *checker) text(row, field, v string) {
	if strings.TrimSpace(v) == "" {
		c.bad(row, field, "is missing: want the figure's %s as its source gives it", field)
	}
}

func (c *checker) number(row, field string, v, lo, hi float64) {
	if !(v >= lo && v <= hi) {
		c.bad(row, field, "= %v is out of range: want %v to %v", v, lo, hi)
	}
}

func (c *checker) count(row, field string, v, lo, hi int) {
	if v < lo || v > hi {
		c.bad(row, field, "= %d is out of range: want %d to %d", v, lo, hi)
	}
}

// twoHop checks a platform's two-hop latency: at least one hop's (an
// access two hops away crosses one more link), its band around it.
func (c *checker) twoHop(row string, p Platform) {
	if p.TwoHopNS == 0 {
		if p.TwoHopLowNS != 0 || p.TwoHopHighNS != 0 {
			c.bad(row, "two_hop_ns", "is missing: a band of two hops needs the value the prediction takes")
		}
		return
	}
	c.number(row, "two_hop_ns", p.TwoHopNS, p.RemoteNS, 3000)
	if p.TwoHopLowNS != 0 || p.TwoHopHighNS != 0 {
		c.number(row, "two_hop_low_ns", p.TwoHopLowNS, p.RemoteNS, p.TwoHopNS)
		c.number(row, "two_hop_high_ns", p.TwoHopHighNS, p.TwoHopNS, 3000)
	}
}

var dateForm = regexp.MustCompile(`^(19|20)\d\d(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?$`)

func (c *checker) date(row, field, v string) {
	if !dateForm.MatchString(v) {
		c.bad(row, field, "= %q: want the date its source gives, YYYY, YYYY-MM or YYYY-MM-DD", v)
	}
}

// sources checks the source list and returns the ids it defines.
func (c *checker) sources(ss []Source) map[string]bool {
	ids := map[string]bool{}
	if len(ss) == 0 {
		c.bad("sources", "list", "is empty: want every document a figure was read in")
	}
	for i, s := range ss {
		row := fmt.Sprintf("source %d (%q)", i+1, s.ID)
		c.text(row, "id", s.ID)
		c.text(row, "title", s.Title)
		c.text(row, "states", s.States)
		if ids[s.ID] {
			c.bad(row, "id", "is given twice: want one id per source")
		}
		ids[s.ID] = true
	}
	return ids
}

func (c *checker) cites(ids map[string]bool, row, field, id string) {
	if !ids[id] {
		c.bad(row, field, "= %q names no source of the file: every figure needs the document it was read in", id)
	}
}

// ParseResults reads and checks a published-results file: every result
// and platform cites a listed source, every figure is in range, and every
// pair names two results of one benchmark at different socket or core
// counts. All problems are reported together.
func ParseResults(name string, data []byte) (*Results, error) {
	var r Results
	c, ids, err := begin(name, data, &r, &r.Sources)
	if err != nil {
		return nil, err
	}
	plats := map[string]Platform{}
	for i, p := range r.Platforms {
		row := fmt.Sprintf("platform %d (%q)", i+1, p.ID)
		c.text(row, "id", p.ID)
		c.text(row, "cpu", p.CPU)
		c.number(row, "local_ns", p.LocalNS, 20, 1000)
		c.number(row, "remote_ns", p.RemoteNS, p.LocalNS, 3000)
		c.number(row, "buffer_ns", p.BufferNS, 0, 200)
		c.twoHop(row, p)
		c.cites(ids, row, "source", p.Source)
		plats[p.ID] = p
	}
	results := map[string]Result{}
	for i, x := range r.Results {
		row := fmt.Sprintf("result %d (%q)", i+1, x.ID)
		for _, f := range []struct{ name, v string }{{"id", x.ID}, {"benchmark", x.Benchmark},
			{"system", x.System}, {"cpu", x.CPU}, {"generation", x.Generation}, {"unit", x.Unit}, {"document", x.Document}} {
			c.text(row, f.name, f.v)
		}
		c.number(row, "ghz", x.GHz, 0.1, 10)
		c.count(row, "sockets", x.Sockets, 1, 64)
		c.count(row, "cores", x.Cores, x.Sockets, 100000)
		if x.Sockets > 0 && x.Cores%x.Sockets != 0 {
			c.bad(row, "cores",
				"= %d is not a multiple of %d sockets: want all physical cores of the system", x.Cores, x.Sockets)
		}
		c.number(row, "result", x.Result, 1e-9, 1e12)
		c.date(row, "date", x.Date)
		c.cites(ids, row, "source", x.Source)
		if p, ok := plats[x.Platform]; !ok {
			c.bad(row, "platform", "= %q names no platform of the file: want the latencies the model needs", x.Platform)
		} else if x.Sockets > model.PublishedSockets && p.TwoHopNS == 0 {
			c.bad(row, "platform", "= %q has no two_hop_ns: %d sockets need the remote latency two hops away "+
				"(three sockets one hop away, the rest two)", x.Platform, x.Sockets)
		}
		if x.Sockets > model.MaxHopSockets {
			c.bad(row, "sockets", "= %d: the per-hop model takes at most %d (three sockets one hop away, the rest two hops)",
				x.Sockets, model.MaxHopSockets)
		}
		if _, dup := results[x.ID]; dup {
			c.bad(row, "id", "is given twice: want one id per result")
		}
		results[x.ID] = x
	}
	for i, p := range r.Pairs {
		row := fmt.Sprintf("pair %d (%s to %s)", i+1, p.From, p.To)
		a, okA := results[p.From]
		b, okB := results[p.To]
		switch {
		case !okA || !okB:
			c.bad(row, "from/to", "names a result the file does not have")
		case a.Benchmark != b.Benchmark || a.Unit != b.Unit:
			c.bad(row, "from/to", "compares %s %s with %s %s: want one benchmark", a.Benchmark, a.Unit, b.Benchmark, b.Unit)
		case a.Sockets == b.Sockets && a.Cores == b.Cores:
			c.bad(row, "from/to", "has the same sockets and cores on both sides: want a scaling pair")
		}
	}
	if len(r.Pairs) == 0 {
		c.bad("pairs", "list", "is empty: want at least one pair of results to compare")
	}
	c.candidates(r.Candidates, ids, plats)
	if err := errors.Join(c.errs...); err != nil {
		return nil, err
	}
	return &r, nil
}

// candidates checks the candidate terms: a known kind, a value in its
// range, a listed source, platforms the file has.
func (c *checker) candidates(cs []Candidate, ids map[string]bool, plats map[string]Platform) {
	for i, x := range cs {
		row := fmt.Sprintf("candidate %d (%q)", i+1, x.Term)
		c.text(row, "term", x.Term)
		switch x.Kind {
		case KindLocality:
			c.number(row, "value", x.Value, 0, 1)
		case KindRemoteRatio:
			c.number(row, "value", x.Value, 1, 5)
		default:
			c.bad(row, "kind", "= %q: want %q or %q", x.Kind, KindLocality, KindRemoteRatio)
		}
		c.count(row, "sockets", x.Sockets, 0, 64)
		for _, p := range x.Platforms {
			if _, ok := plats[p]; !ok {
				c.bad(row, "platforms", "names %q, no platform of the file", p)
			}
		}
		c.cites(ids, row, "source", x.Source)
	}
}
