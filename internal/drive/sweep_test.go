package drive

import (
	"reflect"
	"strings"
	"testing"
)

func TestSweep(t *testing.T) {
	got, err := Sweep([]int{1, 2}, []string{"smt=on", "smt=off"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []Point{
		{0, 1, "smt=on", 0}, {1, 2, "smt=on", 0}, {2, 1, "smt=off", 0}, {3, 2, "smt=off", 0},
		{4, 1, "smt=on", 1}, {5, 2, "smt=on", 1}, {6, 1, "smt=off", 1}, {7, 2, "smt=off", 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Sweep = %v\nwant %v", got, want)
	}
	got, err = Sweep([]int{4}, nil, 1)
	if err != nil || !reflect.DeepEqual(got, []Point{{0, 4, "", 0}}) {
		t.Errorf("no placements: %v, %v; want one unpinned cell", got, err)
	}
	for _, bad := range []struct {
		streams []int
		repeats int
		msg     string
	}{
		{nil, 1, "no stream counts"},
		{[]int{1, 0}, 1, "0 streams is not a positive count"},
		{[]int{1}, 0, "0 repeats"},
	} {
		if _, err := Sweep(bad.streams, []string{""}, bad.repeats); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("Sweep(%v, %d): err = %v, want %q", bad.streams, bad.repeats, err, bad.msg)
		}
	}
}
