package model

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParsePoint(t *testing.T) {
	for _, c := range []struct {
		in   string
		ghz  float64
		want Point
		err  string
	}{
		{"67:27.27", 3, Point{LatencyNS: 67, TPSPerCore: 27.27, GHz: 3}, ""},
		{" 96:19.5:2.2", 0, Point{LatencyNS: 96, TPSPerCore: 19.5, GHz: 2.2}, ""},
		{"67:27.27", 0, Point{}, ErrNoClock.Error()},
		{"67", 3, Point{}, "is not a point"},
		{"67:-1", 3, Point{}, "is not a point"},
		{"67:1:2:3", 3, Point{}, "is not a point"},
		{"x:1", 3, Point{}, "is not a point"},
	} {
		p, err := ParsePoint(c.in, c.ghz)
		if c.err == "" && (err != nil || p != c.want) ||
			c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParsePoint(%q, %g) = %+v, %v; want %+v, %q", c.in, c.ghz, p, err, c.want, c.err)
		}
	}
	if _, err := ParsePoint("67:27", 0); !errors.Is(err, ErrNoClock) {
		t.Errorf("no clock: %v, want ErrNoClock", err)
	}
}

func TestParsePositives(t *testing.T) {
	if v, err := ParsePositives("cost", "3, 2.2,1"); err != nil || !slices.Equal(v, []float64{3, 2.2, 1}) {
		t.Errorf("ParsePositives = %v, %v", v, err)
	}
	for _, bad := range []string{"", "3,0", "3,-1", "3,x", "inf"} {
		_, err := ParsePositives("ghz-list", bad)
		if want := fmt.Sprintf("-ghz-list: %q is not a list of numbers above 0", bad); err == nil ||
			!strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParsePositives(%q) = %v; want %s", bad, err, want)
		}
	}
}

// TestParseSystemPrices: prices by socket count; "" is none; a bad list
// is refused by its flag.
func TestParseSystemPrices(t *testing.T) {
	m, err := ParseSystemPrices("1:4000, 2:9000")
	if err != nil || len(m) != 2 || m[1] != 4000 || m[2] != 9000 {
		t.Errorf("ParseSystemPrices = %v, %v", m, err)
	}
	if m, err := ParseSystemPrices(" "); err != nil || len(m) != 0 {
		t.Errorf("none: %v, %v", m, err)
	}
	for _, bad := range []string{"2=9", "0:10", "1:-1", "1:x", "x:1"} {
		if _, err := ParseSystemPrices(bad); err == nil ||
			!strings.HasPrefix(err.Error(), fmt.Sprintf("-system-cost: %q is not a list of SOCKETS:PRICE", bad)) {
			t.Errorf("ParseSystemPrices(%q) = %v", bad, err)
		}
	}
}

// TestParsePoints: points take --ghz where they give no clock; a bad
// point, a missing clock and no points at all are refused by flag.
func TestParsePoints(t *testing.T) {
	pts, err := ParsePoints("67:27.27, 96:19.54:2.5", 3)
	if want := []Point{{LatencyNS: 67, TPSPerCore: 27.27, GHz: 3},
		{LatencyNS: 96, TPSPerCore: 19.54, GHz: 2.5}}; err != nil || !slices.Equal(pts, want) {
		t.Errorf("ParsePoints = %v, %v; want %v", pts, err, want)
	}
	for _, c := range []struct {
		in   string
		ghz  float64
		want string
	}{
		{" ", 3, "-points: missing: "},
		{"67:27.27,96:19.54:2.5", 0, `-ghz: missing: point "67:27.27" gives no clock`},
		{"67:27.27,96", 3, `-points: "96" is not a point: `},
	} {
		if _, err := ParsePoints(c.in, c.ghz); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ParsePoints(%q, %g) = %v; want %s...", c.in, c.ghz, err, c.want)
		}
	}
}

func TestDefaultSockets(t *testing.T) {
	if s := (Machine{}).DefaultSockets(); !slices.Equal(s, []int{1, 2, 4}) {
		t.Errorf("uniform: %v", s)
	}
	m := Machine{Matrix: [][]float64{{1}}, Sockets: [][]int{{0}, {1}, {2}}}
	if s := m.DefaultSockets(); !slices.Equal(s, []int{1, 2, 3}) {
		t.Errorf("three sockets: %v", s)
	}
}

// TestParseClocks: --ghz-list overrides --ghz; both are held to the
// plausible clocks unless unchecked; none given is none.
func TestParseClocks(t *testing.T) {
	for _, c := range []struct {
		ghz       float64
		list      string
		unchecked bool
		want      []float64
		err       string
	}{
		{3, "", false, []float64{3}, ""},
		{3, "2,1", false, []float64{2, 1}, ""},
		{0, "", false, nil, ""},
		{20, "", false, nil, `-ghz: "20" is not a plausible clock`},
		{20, "", true, []float64{20}, ""},
		{3, "2,20", false, nil, `-ghz-list: "20" is not a plausible clock`},
		{3, "2,x", false, nil, `-ghz-list: "2,x" is not a list of numbers above 0`},
	} {
		got, err := ParseClocks(c.ghz, c.list, c.unchecked)
		if c.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), c.err) {
				t.Errorf("ParseClocks(%g, %q) = %v, want %q", c.ghz, c.list, err, c.err)
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("ParseClocks(%g, %q) = %v, %v; want %v", c.ghz, c.list, got, err, c.want)
		}
	}
}
