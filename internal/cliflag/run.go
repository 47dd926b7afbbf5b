package cliflag

import (
	"cmp"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/curve"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/setting"
	"github.com/numalab/numalab/internal/sweep"
)

// The settings of the flags that several run commands share: how cells are
// paced (sweep.Pacing), run oltp's load curve (sweep.Load), and what
// monitoring costs (--monitor, --allow-settings, --monitor-load).

// Pacing are the settings of sweep.Pacing's flags: how a run's cells are
// paced.
func Pacing(p *sweep.Pacing) Settings {
	return Settings{
		Optional(DurationIn("think", &p.Think, 0, time.Hour)).Flag(
			"closed loop with a think `time` after each call, e.g. 10ms, up to 1h (0: none; see --think-dist)"),
		Optional(Str("think-dist", &p.ThinkDist)).Flag(
			"think times: fixed (the default) or exp (exponential with mean --think)"),
		Optional(Float("rate", &p.Rate)).Flag(
			"open loop: calls per `second` over all streams, each stream taking its share on its own schedule; latency " +
				"runs from each call's intended start, and calls that start over 1ms late are counted (0: closed loop)"),
		Optional(Str("arrivals", &p.Arrivals)).Flag("arrivals of --rate (or --curve): poisson (the default) or uniform"),
	}
}

// Load are the settings of sweep.Load's flags: the pacing flags and run
// oltp's load curve.
func Load(l *sweep.Load) Settings {
	return append(Pacing(&l.Pacing),
		Optional(Bool("curve", &l.Curve)).Flag("a load curve: a closed-loop cell for the capacity (first stream "+
			"count and placement), then open-loop cells at --curve-at fractions of it; reports throughput, p50/p95/p99 "+
			"from intended start and CPU % against offered load, and the knee"),
		Optional(Field("curve-at", &l.CurveAt, parseFloats, formatFloats)).Flag(
			"fractions of the capacity for --curve, e.g. 0.1,0.5,0.9,1.2 (default "+formatFloats(curve.DefaultFractions)+")"),
		Optional(Float("knee-factor", &l.KneeFactor)).Flag(
			"for --curve: the knee is the first load whose p99 exceeds this many times its low-load floor (default "+
				strconv.FormatFloat(curve.DefaultFactor, 'g', -1, 64)+")"))
}

// CurveDefaults fills a curve's unset fractions and knee factor, so that
// the stored command spells them.
func CurveDefaults(l *sweep.Load) {
	if !l.Curve {
		return
	}
	if len(l.CurveAt) == 0 {
		l.CurveAt = curve.DefaultFractions
	}
	if l.KneeFactor == 0 {
		l.KneeFactor = curve.DefaultFactor
	}
}

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, setting.Errorf("curve-at", "%q is not a list of numbers: want e.g. 0.1,0.5,0.9,1.2", s)
		}
		out = append(out, v)
	}
	return out, nil
}

func formatFloats(v []float64) string {
	s := make([]string, len(v))
	for i, f := range v {
		s[i] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

// Monitor is --monitor's setting: the facilities whose cost to measure,
// a comma-separated list (empty: none, or, when listed, one empty name).
func Monitor(p *[]string, listed bool) Setting {
	s := List("monitor", ",", p)
	if !listed {
		s = Field("monitor", p, splitNames, func(v []string) string { return strings.Join(v, ",") })
	}
	return Optional(s).Flag("measure what monitoring `facilities` cost, off against on: " +
		"PostgreSQL's pg_stat_statements,auto_explain,auto_explain_analyze,log_all,track_io_timing; MariaDB's " +
		"performance_schema,general_log,slow_log,slow_log_explain; numalab's trace,sysmon,series (see above)")
}

// splitNames is a comma-separated list of names, none when empty.
func splitNames(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, ","), nil
}

// AllowSettings is --allow-settings's setting.
func AllowSettings(p *bool) Setting {
	return Optional(Bool("allow-settings", p)).Flag("let --monitor SET PostgreSQL or MariaDB facilities in numalab's " +
		"sessions on the --dsn server (never its configuration)")
}

// MonitorLoad is --monitor-load's setting, spelled only with --monitor
// (monitor, which holds the facilities).
func MonitorLoad(p *float64, monitors *[]string) Setting {
	return When(Float("monitor-load", p), func() bool { return len(*monitors) > 0 }).
		FlagDefault(strconv.FormatFloat(monitor.DefaultPacedLoad, 'g', -1, 64),
			"with --monitor: run the pairs again open-loop at this `fraction` of the capacity the saturated off cells "+
				"measured, and report CPU % and p50/p99 added there (0: saturation only)")
}

// CheckMonitor checks a run's monitoring flags. With monitoring on, it
// sets --repeat's default (monitor.MinRepeat) and refuses a bad request
// and pacing (paceFlags names the command's pacing flags); with it off,
// --allow-settings and --monitor-load, whose value it zeroes.
func CheckMonitor(fs *flag.FlagSet, on bool, req monitor.Request, paced bool, paceFlags string, repeat *int,
	load *float64) []error {
	var errs []error
	if on {
		if !Given(fs, "repeat") {
			*repeat = monitor.MinRepeat
		}
		if _, err := monitor.Check(req); err != nil {
			errs = append(errs, err)
		}
		if paced {
			errs = append(errs, setting.Errorf("monitor", "not with %s (it paces its own cells: see --monitor-load)", paceFlags))
		}
		return errs
	}
	if req.AllowSettings {
		errs = append(errs,
			setting.New("allow-settings", "is for --monitor with PostgreSQL or MariaDB facilities on a --dsn server"))
	}
	if Given(fs, "monitor-load") {
		errs = append(errs, setting.New("monitor-load", "is for --monitor"))
	}
	*load = 0
	return errs
}

// CheckHog refuses a --hog of more CPUs than a cell's placement has
// (run report, run tpch): the busy threads would double up on CPUs, and
// the run would be labelled with more busy CPUs than there were.
func CheckHog(n int, cells []sweep.Cell) error {
	if n == 0 {
		return nil
	}
	for _, c := range cells {
		if _, err := place.HogCPUs(c.Place.Streams, n); err != nil {
			where := cmp.Or(c.Placement, "(all CPUs)")
			return Bad("hog", strconv.Itoa(n),
				fmt.Sprintf("is more than placement %s has: %v (give --hog up to its CPUs)", where, err))
		}
	}
	return nil
}
