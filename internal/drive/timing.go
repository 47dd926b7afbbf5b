package drive

import "time"

// The cell's clock. Every function here takes elapsed time since the
// warm-up began and decides from it alone, so the rules are tested without
// a clock. A call belongs to the phase in which it completed.

// phase is where a moment of a cell falls.
type phase int

const (
	warmingUp phase = iota // completions are run but not counted
	measuring              // completions are counted
	finished               // the cell is over; the stream stops
)

func (p phase) String() string {
	switch p {
	case warmingUp:
		return "warm-up"
	case measuring:
		return "measuring"
	}
	return "finished"
}

// phaseAt is the phase at elapsed e of a cell with the given warm-up and
// measured duration: warm-up is [0, warmup), measuring [warmup,
// warmup+duration), finished from then on.
func phaseAt(e, warmup, duration time.Duration) phase {
	switch {
	case e < warmup:
		return warmingUp
	case e < warmup+duration:
		return measuring
	}
	return finished
}

// slotCount is how many one-second slots a measured window of duration d
// needs: ⌈d / 1 s⌉, at least 1.
func slotCount(d time.Duration) int {
	n := int((d + time.Second - 1) / time.Second)
	return max(n, 1)
}

// secondOf is the slot of a completion at elapsed e (in the measured
// window) among n slots: ⌊(e − warmup) / 1 s⌋, kept within [0, n).
func secondOf(e, warmup time.Duration, n int) int {
	i := int((e - warmup) / time.Second)
	return min(max(i, 0), n-1)
}

// measuredAt is the length of the measured window when the cell stops at
// elapsed cut: the part of [warmup, warmup+duration) before cut.
func measuredAt(cut, warmup, duration time.Duration) time.Duration {
	return min(max(cut-warmup, 0), duration)
}
