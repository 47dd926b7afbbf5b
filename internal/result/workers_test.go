package result

import "testing"

// TestWorkersShort: the table's few words for where workers ran, over
// repeats merged.
func TestWorkersShort(t *testing.T) {
	in := &WorkerCPUs{Placement: []int{2, 3}, PerCPU: []CPUTime{{CPU: 2, MS: 10}, {CPU: 3, MS: 5}}}
	out := &WorkerCPUs{Placement: []int{2, 3}, Oversubscribed: true,
		PerCPU: []CPUTime{{CPU: 0, MS: 5}, {CPU: 2, MS: 15}}, OutsideMS: 5}
	for _, tc := range []struct {
		w    *WorkerCPUs
		want string
	}{
		{nil, "-"},
		{in, "2-3 in"},
		{out, "0,2 25% out oversub"},
		{&WorkerCPUs{PerCPU: []CPUTime{{CPU: 0, MS: 1}, {CPU: 1, MS: 1}}}, "0-1"},
		{&WorkerCPUs{Placement: []int{1}, Why: "a server elsewhere"}, "not placed"},
		{MergeWorkers([]*WorkerCPUs{nil, in, out}), "0,2-3 14% out"},
		{MergeWorkers([]*WorkerCPUs{nil}), "-"},
	} {
		if got := tc.w.Short(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.w, got, tc.want)
		}
	}
	if n := out.Notes(); len(n) != 1 {
		t.Errorf("notes of a record with time outside: %q, want one", n)
	}
}
