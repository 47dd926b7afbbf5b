package dop

import (
	"strings"
	"testing"
)

// TestInput: 'model dop”s inputs give the rule of its threshold, a time
// converted by --units-per-second or a run's fit; bad combinations are
// refused, each naming its flag.
func TestInput(t *testing.T) {
	// Chang's proposal: 0.5 s at 57.135 units/s is cost 28.57.
	in := Input{Threshold: "0.5s", UnitsPerSecond: 57.135, CoresPerSocket: 10, Sockets: 1}
	th, cs, err := in.Check()
	if err != nil || th.Seconds != 0.5 || cs != nil {
		t.Fatalf("Check: %+v %v %v", th, cs, err)
	}
	l, err := in.Ladder(th, nil, 0)
	if err != nil || !(l.Rule.Threshold > 28.56 && l.Rule.Threshold < 28.58) {
		t.Errorf("0.5 s at 57.135 units/s: %+v, %v; want cost 28.57", l.Rule, err)
	}
	// A run's fit, 0.02 s per unit: 0.5 s is cost 25.
	in = Input{Threshold: "0.5s", RunID: 7, CoresPerSocket: 8, Sockets: 1}
	if l, err := in.Ladder(Threshold{Seconds: 0.5}, []float64{100}, 0.02); err != nil || l.Rule.Threshold != 25 ||
		len(l.Advice) != 1 {
		t.Errorf("a run's 0.02 s per unit: %+v, %v", l, err)
	}
	for _, c := range []struct {
		in   Input
		want string
	}{
		{Input{Threshold: "soon"}, `-threshold: "soon" is not a plan cost or a time`},
		{Input{Threshold: "0.5s", UnitsPerSecond: 57, RunID: 3}, `-run: "3" gives the cost units per second a second time`},
		{Input{Threshold: "0.5s"}, `-threshold: "0.5s" is a time: give --units-per-second`},
		{Input{Threshold: "30", UnitsPerSecond: 57}, `-threshold: "30" is a cost already`},
		{Input{Threshold: "30", Costs: "1,x"}, `-cost: "1,x" is not a list of numbers above 0`},
	} {
		if _, _, err := c.in.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.in, err, c.want)
		}
	}
	for _, c := range []struct {
		in   Input
		want string
	}{
		{Input{Threshold: "30", CoresPerSocket: 8, Sockets: 2, Span: 10},
			`-span-threshold: "10" is below the threshold's cost 30`},
		{Input{Threshold: "30", CoresPerSocket: 8, Sockets: 1, Span: 100}, `-sockets: "1" leaves nothing to span`},
	} {
		if _, err := c.in.Ladder(Threshold{Cost: 30}, nil, 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.in, err, c.want)
		}
	}
}
