package model

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/setting"
)

// ParseCPUOption reads a processor option 'cores=N,price=P[,ghz=F][,name=TEXT]'.
// Without a name, one with a clock is named by DefaultName.
func ParseCPUOption(s string) (CPUOption, error) {
	var c CPUOption
	seen := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		var err error
		switch k = strings.TrimSpace(k); {
		case !ok:
			err = fmt.Errorf("%q is not key=value", kv)
		case k == "cores":
			c.Cores, err = strconv.Atoi(v)
			if err == nil && c.Cores < 1 {
				err = fmt.Errorf("cores=%s: want 1 or more", v)
			}
		case k == "price":
			c.Price, err = strconv.ParseFloat(v, 64)
			if err == nil && (c.Price < 0 || math.IsInf(c.Price, 0)) {
				err = fmt.Errorf("price=%s: want 0 or more", v)
			}
		case k == "ghz":
			c.GHz, err = strconv.ParseFloat(v, 64)
			if err == nil && !(c.GHz > 0) {
				err = fmt.Errorf("ghz=%s: want a clock above 0", v)
			}
		case k == "name":
			c.Name = v
		default:
			err = fmt.Errorf("unknown key %q", k)
		}
		if err != nil {
			return c, fmt.Errorf("%v (want cores=N,price=P[,ghz=F][,name=TEXT], e.g. 'cores=16,ghz=3,price=3000')", err)
		}
		seen[k] = true
	}
	if !seen["cores"] || !seen["price"] {
		return c,
			errors.New("needs cores= and price= (want cores=N,price=P[,ghz=F][,name=TEXT], e.g. 'cores=16,ghz=3,price=3000')")
	}
	if c.Name == "" && c.GHz > 0 {
		c.Name = c.DefaultName()
	}
	return c, nil
}

// DefaultName names a processor option by its cores and clock: "16c 3GHz".
func (c CPUOption) DefaultName() string {
	return fmt.Sprintf("%dc %sGHz", c.Cores, Num(c.GHz))
}

// ParseSystemPrices reads base system prices by socket count, 'S:PRICE,...'
// (e.g. 1:4000,2:9000), as --system-cost gives them; "" is none.
func ParseSystemPrices(s string) (map[int]float64, error) {
	m := map[int]float64{}
	if strings.TrimSpace(s) == "" {
		return m, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), ":")
		n, err1 := strconv.Atoi(k)
		p, err2 := strconv.ParseFloat(v, 64)
		if !ok || err1 != nil || err2 != nil || n < 1 || p < 0 || math.IsInf(p, 0) {
			return nil, setting.Errorf("system-cost", "%q is not a list of SOCKETS:PRICE: want e.g. 1:4000,2:9000,4:40000", s)
		}
		m[n] = p
	}
	return m, nil
}

// ErrNoClock is a measured point that gives no clock when no default
// clock is known.
var ErrNoClock = errors.New("point gives no clock")

// ParsePoint reads one measured point, "L_ns:tps_per_core" or
// "L_ns:tps_per_core:GHz"; a point without a clock takes ghz, and is
// ErrNoClock when ghz is not above 0.
func ParsePoint(s string, ghz float64) (Point, error) {
	f := strings.Split(strings.TrimSpace(s), ":")
	var v [3]float64
	ok := len(f) == 2 || len(f) == 3
	for i := 0; ok && i < len(f); i++ {
		var err error
		v[i], err = strconv.ParseFloat(f[i], 64)
		ok = err == nil && v[i] > 0 && !math.IsInf(v[i], 0)
	}
	if !ok {
		return Point{},
			errors.New("is not a point: want L_ns:tps_per_core or L_ns:tps_per_core:GHz with positive numbers, e.g. 67:27.27")
	}
	if len(f) == 2 {
		if !(ghz > 0) {
			return Point{}, ErrNoClock
		}
		v[2] = ghz
	}
	return Point{LatencyNS: v[0], TPSPerCore: v[1], GHz: v[2]}, nil
}

// ParsePositives reads the comma-separated list of numbers above 0 that
// flag gave, e.g. clocks "3,2.2,1" or plan costs.
func ParsePositives(flag, s string) ([]float64, error) {
	var out []float64
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("-%s: %q is not a list of numbers above 0: want e.g. 3,2.2,1", flag, s)
		}
		out = append(out, v)
	}
	return out, nil
}

// ParsePoints reads --points, 'L_ns:tps_per_core[:GHz],...' (ParsePoint,
// each point without a clock at ghz, the --ghz given).
func ParsePoints(s string, ghz float64) ([]Point, error) {
	if strings.TrimSpace(s) == "" {
		return nil, setting.New("points", "missing: give two or more measured points, e.g. --points 67:27.27,96:19.54")
	}
	var pts []Point
	for _, p := range strings.Split(s, ",") {
		pt, err := ParsePoint(p, ghz)
		switch {
		case errors.Is(err, ErrNoClock):
			return nil,
				setting.Errorf("ghz", "missing: point %q gives no clock; give --ghz F or write it as L_ns:tps_per_core:GHz", p)
		case err != nil:
			return nil, setting.Errorf("points", "%q %w", p, err)
		}
		pts = append(pts, pt)
	}
	return pts, nil
}

// ParseClocks reads the clocks to model: --ghz-list as given (list, ""
// none) overrides --ghz (ghz, 0 none); each must be a plausible clock
// (Plausible) unless unchecked. None given is none.
func ParseClocks(ghz float64, list string, unchecked bool) ([]float64, error) {
	if list != "" {
		gs, err := ParsePositives("ghz-list", list)
		if err != nil {
			return nil, err
		}
		return gs, Plausible("ghz-list", nil, gs, nil, unchecked)
	}
	if ghz > 0 {
		return []float64{ghz}, Plausible("ghz", nil, []float64{ghz}, nil, unchecked)
	}
	return nil, nil
}

// ParseRemoteNS reads --remote-ns: one remote latency in ns ("125"), or
// one per hop ("125,190": one hop, then two hops), each above 0.
func ParseRemoteNS(s string) (oneHop, twoHops float64, err error) {
	f := strings.Split(s, ",")
	var v [2]float64
	for i, p := range f {
		if i < len(v) {
			v[i], err = strconv.ParseFloat(strings.TrimSpace(p), 64)
		}
		if len(f) > len(v) || err != nil || !(v[i] > 0) || math.IsInf(v[i], 0) {
			return 0, 0, errors.New("want ns above 0, one remote latency or one per hop (one hop, two hops), " +
				"e.g. --remote-ns 125 or --remote-ns ONE_HOP,TWO_HOPS")
		}
	}
	return v[0], v[1], nil
}
