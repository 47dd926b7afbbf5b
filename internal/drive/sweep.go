package drive

import (
	"errors"
	"fmt"
)

// Point is one cell of a sweep before it runs: how many streams, on which
// placement selector, which repetition.
type Point struct {
	Index     int    // position in the sweep, from 0
	Streams   int    // concurrent streams
	Placement string // selector as the user wrote it; "" = not pinned
	Repeat    int    // repetition, from 0
}

// Sweep lists the cells of streams × placements × repeats in the order to
// run them. Repetitions are the outer loop, so that every point is
// measured once before any is measured again and slow drift (a noisy
// neighbour, a warming machine) spreads over all points instead of biasing
// one; within a repetition, placements in the order given, then streams.
func Sweep(streams []int, placements []string, repeats int) ([]Point, error) {
	if len(streams) == 0 {
		return nil, errors.New("planning sweep: no stream counts (try --streams 1,2,4)")
	}
	for _, s := range streams {
		if s < 1 {
			return nil, fmt.Errorf("planning sweep: %d streams is not a positive count (try --streams 1,2,4)", s)
		}
	}
	if repeats < 1 {
		return nil, fmt.Errorf("planning sweep: %d repeats is not a positive count (try --repeat 1)", repeats)
	}
	if len(placements) == 0 {
		placements = []string{""}
	}
	out := make([]Point, 0, repeats*len(placements)*len(streams))
	for r := range repeats {
		for _, p := range placements {
			for _, s := range streams {
				out = append(out, Point{Index: len(out), Streams: s, Placement: p, Repeat: r})
			}
		}
	}
	return out, nil
}
