package eval

import (
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
