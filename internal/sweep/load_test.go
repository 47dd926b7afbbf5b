package sweep

import (
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/drive"
)

func TestLoadCheck(t *testing.T) {
	for _, tc := range []struct {
		l    Load
		want string // "" = accepted
	}{
		{Load{}, ""},
		{Load{Pacing: Pacing{Think: time.Millisecond, ThinkDist: "exp"}}, ""},
		{Load{Pacing: Pacing{Rate: 100, Arrivals: "uniform"}}, ""},
		{Load{Pacing: Pacing{Arrivals: "poisson"}, Curve: true, CurveAt: []float64{0.5, 1.2}, KneeFactor: 3}, ""},
		{Load{Pacing: Pacing{Think: -1}}, "-think:"},
		{Load{Pacing: Pacing{Rate: drive.MaxRate + 1}}, "-rate:"},
		{Load{Pacing: Pacing{Think: 1, Rate: 1}}, "not with --rate"},
		{Load{Pacing: Pacing{Think: 1, ThinkDist: "gauss"}}, "-think-dist:"},
		{Load{Pacing: Pacing{ThinkDist: "exp"}}, "is for --think"},
		{Load{Pacing: Pacing{Rate: 1, Arrivals: "bursty"}}, "-arrivals:"},
		{Load{Pacing: Pacing{Arrivals: "uniform"}}, "is for --rate or --curve"},
		{Load{Pacing: Pacing{Rate: 1}, Curve: true}, "-curve: not with"},
		{Load{Curve: true, CurveAt: []float64{0}}, "-curve-at:"},
		{Load{Curve: true, KneeFactor: 1}, "-knee-factor:"},
		{Load{CurveAt: []float64{0.5}}, "are for --curve"},
	} {
		err := tc.l.Check()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.l, err, tc.want)
		}
	}
}

func TestLoadPace(t *testing.T) {
	if (Pacing{}).Pacer(1) != nil {
		t.Error("the closed loop has a pacer")
	}
	l := Pacing{Rate: 300, Arrivals: "uniform"}
	want := drive.Pace{Rate: 300, Uniform: true, Seed: 9}
	if got := l.Pacer(9)(Cell{}, nil); got != want {
		t.Errorf("pacer: %+v, want %+v", got, want)
	}
	th := Pacing{Think: time.Second, ThinkDist: "exp"}.Pace(0, 2)
	if th != (drive.Pace{Think: time.Second, ThinkExp: true, Seed: 2}) {
		t.Errorf("think: %+v", th)
	}
}
