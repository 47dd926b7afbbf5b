package eval

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/sentinel"
	"github.com/numalab/numalab/internal/topo/topotest"
)

// TestWatch: the sentinel, both references, is timed at the start and
// before and after every step, and the step's error comes through.
func TestWatch(t *testing.T) {
	boom := errors.New("boom")
	steps := []*step{
		{title: "a", run: func(context.Context, Stored) error { return nil }},
		{title: "b", run: func(context.Context, Stored) error { return boom }},
	}
	mem, err := sentinel.MemoryFor(topotest.Fixture(t, "kvm-2vcpu-zen.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Free()
	s := watch(steps, mem)
	for _, st := range steps {
		st.err = st.run(context.Background(), func(string, int64) {})
	}
	var labels []string
	for _, sm := range s.Samples {
		labels = append(labels, sm.Label)
		if sm.Took <= 0 || sm.Mem <= 0 {
			t.Errorf("sample %q took %v, its memory reference %v", sm.Label, sm.Took, sm.Mem)
		}
	}
	if got := strings.Join(labels, "|"); got != "start|before a|after a|before b|after b" ||
		!errors.Is(steps[1].err, boom) {
		t.Errorf("samples %q, step b's error %v", got, steps[1].err)
	}
}
