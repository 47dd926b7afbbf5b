package sweep

import (
	"errors"
	"strconv"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/setting"
)

// Pacing is how a sweep's cells are paced, as a user writes it (flags
// --think, --think-dist, --rate, --arrivals, or the same keys in a sweep
// file); the zero value is the closed loop with no think time. A run
// command's configuration embeds it (or Load) and stores it with the run.
type Pacing struct {
	Think     time.Duration `toml:"think" json:"think_ns,omitempty"`        // think time after each call
	ThinkDist string        `toml:"think_dist" json:"think_dist,omitempty"` // "fixed" (default) or "exp"
	Rate      float64       `toml:"rate" json:"rate_per_s,omitempty"`       // calls per second over all streams
	Arrivals  string        `toml:"arrivals" json:"arrivals,omitempty"`     // "poisson" (default) or "uniform"
}

// Load is Pacing with run oltp's load curve and the paced load of its
// monitoring runs.
type Load struct {
	Pacing
	// Curve asks for a load curve (package curve): a closed-loop cell
	// for the capacity, then open-loop cells at the fractions CurveAt of
	// it; KneeFactor is how far p99 must rise above its low-load floor
	// to be past the knee.
	Curve      bool      `toml:"curve" json:"curve,omitempty"`
	CurveAt    []float64 `toml:"curve_at" json:"curve_at,omitempty"`
	KneeFactor float64   `toml:"knee_factor" json:"knee_factor,omitempty"`
	// MonitorLoad is the paced load, as a fraction of capacity, at which
	// a monitoring run repeats its pairs after those at saturation; 0:
	// saturation only.
	MonitorLoad float64 `toml:"monitor_load" json:"monitor_load,omitempty"`
}

// Paced reports whether p asks for anything but the closed loop.
func (p Pacing) Paced() bool { return p.Think > 0 || p.Rate > 0 }

// Check validates p, naming the flags at fault.
func (p Pacing) Check() error { return p.check(false) }

// check validates p; curve says a load curve sets the rate, so that
// --arrivals needs no --rate.
func (p Pacing) check(curve bool) error {
	var errs []error
	if p.Think < 0 {
		errs = append(errs,
			setting.Errorf("think", "%q is negative: want a think time after each call, e.g. 10ms, or 0 for none", p.Think))
	}
	if p.Rate < 0 || p.Rate > drive.MaxRate || p.Rate != p.Rate {
		errs = append(errs, setting.Errorf("rate", "%q is not between 0 and %g calls per second (0: closed loop)",
			strconv.FormatFloat(p.Rate, 'g', -1, 64), float64(drive.MaxRate)))
	}
	if p.Think > 0 && p.Rate > 0 {
		errs = append(errs,
			setting.New("think", "not with --rate: a think time paces a closed loop, a rate an open one (give one of them)"))
	}
	switch p.ThinkDist {
	case "", "fixed", "exp":
	default:
		errs = append(errs, setting.Errorf("think-dist", "%q is not a distribution: want fixed or exp", p.ThinkDist))
	}
	switch p.Arrivals {
	case "", "poisson", "uniform":
	default:
		errs = append(errs, setting.Errorf("arrivals", "%q is not an arrival process: want poisson or uniform", p.Arrivals))
	}
	if p.ThinkDist != "" && p.Think == 0 {
		errs = append(errs, setting.New("think-dist", "is for --think (a think time)"))
	}
	if p.Arrivals != "" && p.Rate == 0 && !curve {
		errs = append(errs, setting.New("arrivals", "is for --rate or --curve (an arrival rate)"))
	}
	return errors.Join(errs...)
}

// Check validates l, naming the flags at fault.
func (l Load) Check() error {
	errs := []error{l.Pacing.check(l.Curve)}
	if l.Curve && l.Paced() {
		errs = append(errs,
			setting.New("curve", "not with --rate or --think: the curve sets each cell's rate from the capacity it measures"))
	}
	for _, f := range l.CurveAt {
		if !(f > 0 && f <= 10) {
			errs = append(errs,
				setting.Errorf("curve-at", "%g is not a fraction of capacity between 0 and 10 (e.g. 0.1,0.5,0.9,1.2)", f))
			break
		}
	}
	if l.KneeFactor != 0 && !(l.KneeFactor > 1 && l.KneeFactor <= 1000) {
		errs = append(errs, setting.Errorf("knee-factor",
			"%g is not above 1 and at most 1000: want how many times its low-load floor p99 must reach, e.g. 2", l.KneeFactor))
	}
	if !(l.MonitorLoad >= 0 && l.MonitorLoad <= 10) {
		errs = append(errs, setting.Errorf("monitor-load",
			"%g is not a fraction of capacity between 0 and 10 (0: saturation only)", l.MonitorLoad))
	}
	if !l.Curve && (len(l.CurveAt) > 0 || l.KneeFactor != 0) {
		errs = append(errs, setting.Together([]string{"curve-at", "knee-factor"}, "are for --curve"))
	}
	return errors.Join(errs...)
}

// Pace is p as drive's pacing of a cell at rate calls per second (p's own
// Rate, or a load curve's), its streams' RNGs seeded from seed.
func (p Pacing) Pace(rate float64, seed int64) drive.Pace {
	return drive.Pace{Think: p.Think, ThinkExp: p.ThinkDist == "exp", Rate: rate,
		Uniform: p.Arrivals == "uniform", Seed: uint64(seed)}
}

// Pacer is Plan.Pace for p: every cell paced alike; nil when p is the
// closed loop.
func (p Pacing) Pacer(seed int64) func(Cell, []*result.Cell) drive.Pace {
	if !p.Paced() {
		return nil
	}
	dp := p.Pace(p.Rate, seed)
	return func(Cell, []*result.Cell) drive.Pace { return dp }
}
