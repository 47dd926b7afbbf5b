package hosts

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/setting"
)

// ErrNotComparable is returned when the hosts' runs measured different
// things.
var ErrNotComparable = errors.New("the runs are not comparable")

// Comparison is the answer: every host's measured throughput and cost
// with their bands, cheapest per 1,000 tps first, and the decision.
type Comparison struct {
	Stores  []string `json:"stores"`
	Measure Measure  `json:"measure"` // what every host measured
	// Band says what the bands cover.
	Band  string `json:"band"`
	Hosts []Host `json:"hosts"`
	// Decision is the cheapest host per 1,000 tps, or "" when its cost
	// band overlaps another's (Rivals); then MoreRepeats is how many more
	// repeats on each would part the bands at the spreads measured (0:
	// none would, or a host was measured once; Recommendation says).
	Decision       string   `json:"decision"`
	Rivals         []string `json:"rivals,omitempty"`
	MoreRepeats    int      `json:"more_repeats,omitempty"`
	Recommendation string   `json:"recommendation"`
	// Notes are what may make the hosts' figures differ besides the
	// machines: numalab versions, clocks.
	Notes []string `json:"notes,omitempty"`
	// LeftOut are the hosts in the stores with no run to compare, each
	// with why (Select).
	LeftOut []string `json:"left_out,omitempty"`
}

// Host is one host's measurement and cost.
type Host struct {
	Name    string    `json:"name"`
	Store   string    `json:"store"`
	Run     int64     `json:"run"`
	Started time.Time `json:"started"`
	Version string    `json:"version"`
	Machine Machine   `json:"machine"`
	// Cell is the best measured cell point: the highest mean tps over
	// its repeats. Repeats are its tps, each repeat; TPS their mean,
	// TPSLow and TPSHigh its band (Banded: two or more repeats), Spread
	// their standard deviation over the mean.
	Cell       Cell      `json:"cell"`
	Repeats    []float64 `json:"repeats"`
	TPS        float64   `json:"tps"`
	TPSLow     float64   `json:"tps_low"`
	TPSHigh    float64   `json:"tps_high"`
	Banded     bool      `json:"banded"`
	Spread     float64   `json:"spread"`
	TPSPerCore float64   `json:"tps_per_core"` // the cell's, mean of its repeats
	// Cost is Price's amount and every physical core's licence.
	Price       Price   `json:"price"`
	LicenceCost float64 `json:"licence_cost"`
	TotalCost   float64 `json:"total_cost"`
	CostPerKTPS float64 `json:"cost_per_1000_tps"`
	CostLow     float64 `json:"cost_per_1000_tps_low"`
	CostHigh    float64 `json:"cost_per_1000_tps_high"` // 0 when not Banded, or Unbounded
	// Unbounded: the tps band reaches 0, so the cost band has no top.
	Unbounded bool `json:"cost_band_unbounded,omitempty"`
	// Streams is the best cell at each stream count the run measured.
	Streams []StreamPoint `json:"streams"`
	// Sockets is what the host's own calibrated model says of 2 and 4
	// sockets of its CPU; Fit which fit it rests on, or why there is
	// none.
	Sockets []SocketFit `json:"sockets,omitempty"`
	Fit     string      `json:"fit"`
	// Warnings are the preflight warnings of the run that distort its
	// tps, tps per core or latency (distorting): the host's figure is not
	// comparable as it stands.
	Warnings []string `json:"warnings,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

// Cell is a cell point of a run: what its repeats share.
type Cell struct {
	Workload  string `json:"workload"`
	Streams   int    `json:"streams"`
	Placement string `json:"placement"`
	DOP       int    `json:"dop"`
	DataNode  int    `json:"data_node"`
	Cores     int    `json:"cores"` // physical cores of the placement
}

// String is the cell in words.
func (c Cell) String() string {
	s := fmt.Sprintf("%d %s, %s", c.Streams, plural(c.Streams, "stream", "streams"), cmp.Or(c.Placement, "not pinned"))
	if c.DataNode >= 0 {
		s += fmt.Sprintf(", data on node %d", c.DataNode)
	}
	return s
}

// StreamPoint is the best cell at one stream count, with its band.
type StreamPoint struct {
	Streams   int     `json:"streams"`
	Placement string  `json:"placement"`
	TPS       float64 `json:"tps"`
	Low       float64 `json:"low"`
	High      float64 `json:"high"`
}

// Compare compares the hosts' runs at the prices given: one Price per
// host, by name. Runs that measured different things, a host without a
// price and a price of no host measured are refused.
func Compare(stores []string, srcs []Source, prices []Price) (*Comparison, error) {
	if len(srcs) == 0 {
		return nil, ErrNoRuns
	}
	c := &Comparison{Stores: stores, Band: BandText}
	if err := c.comparable(srcs); err != nil {
		return nil, err
	}
	byName, err := priced(srcs, prices)
	if err != nil {
		return nil, err
	}
	for _, s := range srcs {
		h, err := measureHost(s, byName[s.Run.Host])
		if err != nil {
			return nil, err
		}
		c.Hosts = append(c.Hosts, h)
	}
	c.Notes = append(c.Notes, versions(c.Hosts)...)
	for _, h := range c.Hosts {
		c.Notes = append(c.Notes, h.Notes...)
	}
	slices.SortStableFunc(c.Hosts, func(a, b Host) int { return cmp.Compare(a.CostPerKTPS, b.CostPerKTPS) })
	c.decide()
	return c, nil
}

// comparable checks that every run measured what the first did, with a
// closed loop.
func (c *Comparison) comparable(srcs []Source) error {
	var errs []string
	for i, s := range srcs {
		m, err := Measured(s.Run)
		if err != nil {
			return err
		}
		if i == 0 {
			c.Measure = m
			if m.Loop != closedLoop {
				return fmt.Errorf("%w: host %s's run %d is %s: its tps is the pace it was given, not what the host can "+
					"do (give a closed-loop run: 'numalab run oltp' without --rate, --think, --curve or --monitor)",
					ErrNotComparable, s.Run.Host, s.Run.ID, m.Loop)
			}
			continue
		}
		if d := differ(m, c.Measure); len(d) > 0 {
			errs = append(errs, fmt.Sprintf("host %s's run %d (%s): %s", s.Run.Host, s.Run.ID, s.Store, strings.Join(d, ", ")))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf(
			"%w: host %s's run %d measured %s; %s (measure every host alike, or name comparable runs with --run)",
			ErrNotComparable, srcs[0].Run.Host, srcs[0].Run.ID, c.Measure, strings.Join(errs, "; "))
	}
	return nil
}

// priced is every host's price by name; a host without one, or a price
// of no host measured, is an error.
func priced(srcs []Source, prices []Price) (map[string]Price, error) {
	byName := map[string]Price{}
	for _, p := range prices {
		byName[p.Name] = p
	}
	var missing, measured []string
	for _, s := range srcs {
		measured = append(measured, s.Run.Host)
		if _, ok := byName[s.Run.Host]; !ok {
			missing = append(missing, s.Run.Host)
		}
	}
	var extra []string
	for _, p := range prices {
		if !slices.Contains(measured, p.Name) {
			extra = append(extra, p.Name)
		}
	}
	var errs []error
	if len(missing) > 0 {
		errs = append(errs, setting.Errorf("prices",
			"no price for host %s: give a [[host]] table with its name and price (or hourly and hours)",
			strings.Join(missing, ", ")))
	}
	if len(extra) > 0 {
		errs = append(errs, setting.Errorf("prices",
			"host %s has no run to compare (the hosts measured: %s)", strings.Join(extra, ", "), strings.Join(measured, ", ")))
	}
	return byName, errors.Join(errs...)
}

// versions says which hosts were measured by another numalab version than
// the others.
func versions(hs []Host) []string {
	var vs []string
	for _, h := range hs {
		if !slices.Contains(vs, h.Version) {
			vs = append(vs, h.Version)
		}
	}
	if len(vs) < 2 {
		return nil
	}
	var parts []string
	for _, h := range hs {
		parts = append(parts, fmt.Sprintf("%s %s", h.Name, h.Version))
	}
	return []string{fmt.Sprintf("numalab versions differ (%s): a change in numalab between them may be in the "+
		"figures; measure every host with one version to rule it out",
		strings.Join(parts, ", "))}
}

// ClockTolerance is how far a run's start, by its host's clock, may lie
// from when a PostgreSQL store received it, by the server's, before the
// host's clock is said to differ: the run is stored a round trip after
// it starts.
const ClockTolerance = 2 * time.Second

// clock says how far r's host's clock was from the store's when the
// store received r; "" within ClockTolerance, or when the store did not
// record it (SQLite, or an older store).
func clock(r *result.Run) string {
	if r.Received.IsZero() {
		return ""
	}
	d := r.Started.Sub(r.Received)
	if d.Abs() <= ClockTolerance {
		return ""
	}
	way := "ahead of"
	if d < 0 {
		way = "behind"
	}
	return fmt.Sprintf(
		"host %s's clock was %s %s the store's when it stored run %d (started %s by its clock, received %s by the store's): "+
			"its times, and which of its runs is the latest, are off by as much (set its clock with NTP)",
		r.Host, d.Abs().Round(time.Second), way, r.ID, r.Started.UTC().Format(time.RFC3339),
		r.Received.UTC().Format(time.RFC3339))
}

// cost fills h's cost from its price, its machine's physical cores and
// its throughput band.
func (h *Host) cost(p Price, r *result.Run) error {
	if r.Machine == nil || len(r.Machine.Cores) == 0 {
		return fmt.Errorf(
			"host %s's run %d stored no machine: its physical cores, which licences are counted by, are unknown", h.Name, r.ID)
	}
	h.Price = p
	h.LicenceCost = p.LicencePerCore * float64(len(r.Machine.Cores))
	h.TotalCost = p.Amount() + h.LicenceCost
	h.CostPerKTPS = perKTPS(h.TotalCost, h.TPS)
	h.CostLow = perKTPS(h.TotalCost, h.TPSHigh)
	switch {
	case h.Banded && h.TPSLow > 0:
		h.CostHigh = perKTPS(h.TotalCost, h.TPSLow)
	case h.Banded:
		h.Unbounded = true
	}
	return nil
}

func perKTPS(cost, tps float64) float64 {
	if !(tps > 0) {
		return math.Inf(1)
	}
	return cost / (tps / 1000)
}
