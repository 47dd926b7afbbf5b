package eval

import (
	"fmt"

	"github.com/numalab/numalab/internal/sentinel"
)

// SentinelTolerance is how far off its median the speed sentinel may read
// before the step next to it is said to have run off the machine's usual
// speed: a tenth and a half, well inside the ±30% phases this guest shows.
const SentinelTolerance = 0.15

// watch times the speed sentinel, with the memory reference mem where
// there is one, at the start and around every step: the samples "before
// S" and "after S" bracket step S. Eval's summary shows the series and
// its verdict.
func watch(steps []*step, mem *sentinel.Memory) *sentinel.Series {
	s := &sentinel.Series{}
	s.UseMemory(mem)
	s.Take("start")
	for _, st := range steps {
		run, title := st.run, st.title
		st.run = func(stored Stored) error {
			s.Take("before " + title)
			defer s.Take("after " + title)
			return run(stored)
		}
	}
	return s
}

// offSpeed says, when the sentinel's verdict v on series s has a sample
// off next to the step of that title, that the model's fit came from
// cells taken while the machine was not at its usual speed; "" when it
// held.
func offSpeed(s *sentinel.Series, v sentinel.Verdict, title string) string {
	for i, sm := range s.Samples {
		if sm.Label != "before "+title || i+1 >= len(s.Samples) {
			continue
		}
		if v.Between(i, i+1) {
			return fmt.Sprintf("the speed sentinel read more than %.0f%% off its median next to the %s step, whose cells the model is fitted to: the fit is not to be trusted (run eval again)", 100*v.Tolerance, title)
		}
		return fmt.Sprintf("the speed sentinel held within %.0f%% of its median around the %s step, whose cells the model is fitted to", 100*v.Tolerance, title)
	}
	return ""
}
