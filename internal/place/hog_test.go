package place

import (
	"slices"
	"testing"
	"time"
)

func TestHogCPUs(t *testing.T) {
	if got, _ := HogCPUs([]int{0, 2, 1, 3}, 1); !slices.Equal(got, []int{3}) {
		t.Errorf("one of 0,2,1,3: %v, want the last streams take, [3]", got)
	}
	if got, err := HogCPUs([]int{0, 1}, 5); err == nil || got != nil {
		t.Errorf("five of 0,1: %v, %v; want them refused", got, err)
	}
	all, err := ProcessCPUs()
	if got, err2 := HogCPUs(nil, 1); err != nil || err2 != nil || !slices.Equal(got, all[len(all)-1:]) {
		t.Errorf("one, not placed: %v (%v, %v), want the last of %v", got, err, err2, all)
	}
}

// TestHogBusiesItsCPU: the hog's thread runs on its CPU and uses it.
func TestHogBusiesItsCPU(t *testing.T) {
	all, err := Affinity()
	if err != nil {
		t.Skip(err)
	}
	cpu := all[len(all)-1]
	h, err := StartHog([]int{cpu})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	h.Stop()
	if h.ran[0].Load() == 0 {
		t.Errorf("the busy thread on CPU %d ran no loop", cpu)
	}
	if _, err := StartHog([]int{-1}); err == nil {
		t.Error("a busy thread on CPU -1 started")
	}
}
