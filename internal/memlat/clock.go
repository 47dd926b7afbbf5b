package memlat

import (
	"context"
	"time"
)

// Clock is one measurement of the core clock.
type Clock struct {
	When string `json:"when"` // "start", "before 2m ladder", "end"
	CPU  int    `json:"cpu"`
	GHz  Stat   `json:"ghz"`
}

// measureClock measures the core clock on cpu; when says at which point
// of the probe.
func measureClock(ctx context.Context, cpu int, when string) (Clock, error) {
	var st Stat
	err := onCPU(cpu, func() (err error) {
		st, err = measureGHz(ctx, sampling{Samples: 5, MinWindow: 20 * time.Millisecond})
		return err
	})
	return Clock{When: when, CPU: cpu, GHz: st}, err
}

// measureGHz measures the core clock with a dependent chain of one-cycle
// adds, after 50 ms of the same work so an idle core has ramped up.
func measureGHz(ctx context.Context, s sampling) (Stat, error) {
	sink := 0
	for t0 := time.Now(); time.Since(t0) < 50*time.Millisecond; {
		sink += addChain(1 << 14)
	}
	st, err := timeWindows(ctx, s, func(n int) { sink += addChain(n / 16) },
		func(n int, d time.Duration) float64 { return float64(n/16*16) / float64(d.Nanoseconds()) })
	_ = sink
	return st, err
}
