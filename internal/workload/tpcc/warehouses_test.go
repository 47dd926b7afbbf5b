package tpcc

import (
	"context"
	"math/rand/v2"
	"testing"
)

// TestFirstWarehouses: a workload drawn from its first warehouses gives
// its streams inputs from those alone, where the whole draws from all;
// its transactions run; n outside 1 to the warehouses held is refused.
func TestFirstWarehouses(t *testing.T) {
	w, err := openFile(t, loaded(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	three := *w
	three.meta.Warehouses = 3 // as if the file held three
	one, err := three.FirstWarehouses(1)
	if err != nil || one.Meta().Warehouses != 1 || three.meta.Warehouses != 3 {
		t.Fatalf("FirstWarehouses(1) of three: %v, %+v; want one warehouse, the whole left as it was", err, one)
	}
	seen := func(w *Workload) map[int]bool {
		s := &Stream{w: w, rng: rand.New(rand.NewPCG(1, 2))}
		m := map[int]bool{}
		for range 300 {
			m[s.orderStatusInput().W] = true
		}
		return m
	}
	if m := seen(one); len(m) != 1 || !m[1] {
		t.Errorf("drawn from the first warehouse: warehouses %v, want 1 only", m)
	}
	if m := seen(&three); len(m) != 3 {
		t.Errorf("drawn from all three: warehouses %v, want 1, 2 and 3", m)
	}
	for _, n := range []int{0, 4} {
		if _, err := three.FirstWarehouses(n); err == nil {
			t.Errorf("FirstWarehouses(%d) of three was not refused", n)
		}
	}
	real, err := w.FirstWarehouses(1)
	if err != nil {
		t.Fatal(err)
	}
	s, err := real.NewStream(rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 20 {
		if _, err := s.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
