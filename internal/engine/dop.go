package engine

import "fmt"

// CheckDOP refuses degrees of parallelism the engine or the machine
// (cpus) cannot give: above 1 on an engine that runs each query on one
// thread, or above the machine's CPUs.
func (s Spec) CheckDOP(dops []int, cpus int) error {
	for _, p := range dops {
		if s.Name != "" && !s.Parallel.Query && p != 1 {
			more := ""
			if s.Server {
				more = ", or --streams for concurrent queries"
			}
			return fmt.Errorf("asks %s for DOP %d, but %s: use --dop 1 (or --engine %s)%s", s.Title, p, s.Parallel.Refusal,
				List(func(s Spec) bool { return s.Parallel.Query }), more)
		}
		if p > cpus {
			return fmt.Errorf("has DOP %d, more than this machine's %d CPUs: use at most %d", p, cpus, cpus)
		}
	}
	return nil
}
