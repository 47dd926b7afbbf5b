package stats

import "testing"

func TestShiftOf(t *testing.T) {
	a := []float64{10, 11, 12, 13, 14}
	b := []float64{20, 21, 22, 23, 24}
	s := ShiftOf(a, b)
	if s.Estimate != 10 || !s.HasCI || s.Lo > 10 || s.Hi < 10 || s.Lo < 6 || s.Hi > 14 || s.NA != 5 || s.NB != 5 {
		t.Errorf("shift of a constant 10: %+v", s)
	}
	if !s.Contains(10) || s.Contains(0) {
		t.Error("Contains")
	}
	// Ratio's interval on the same data, shifted to differences, has the
	// same ranks: the interval must hold the same pairs.
	r := RatioOf(a, b)
	if r.HasCI != s.HasCI || r.Level != s.Level {
		t.Errorf("ratio %+v and shift %+v use different ranks", r, s)
	}
	if z := ShiftOf(nil, b); z.Estimate != 0 || z.HasCI {
		t.Errorf("one side empty: %+v", z)
	}
	if few := ShiftOf([]float64{1, 2}, []float64{3, 4}); few.HasCI || few.Estimate != 2 {
		t.Errorf("2+2 repeats: %+v", few)
	}
	if got := s.String(); got != "+10 [7, 13] n=5+5" {
		t.Errorf("String %q", got)
	}
}
