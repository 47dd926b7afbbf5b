package drive_test

import (
	"context"
	"fmt"
	"time"

	"github.com/numalab/numalab/internal/drive"
)

// counter is a workload with one transaction type that does nothing; a
// real one holds its connection, prepared statements and RNG.
type counter struct{ n int }

func (c *counter) Next(ctx context.Context) (int, error) { c.n++; return 0, nil }
func (c *counter) Close() error                          { return nil }

// Two cells, each run by drive.Run (package sweep runs whole sweeps). The
// caller labels each cell with what only it knows (engine, workload, DOP,
// data node).
func Example() {
	for i, streams := range []int{1, 2} {
		p := drive.Point{Index: i, Streams: streams}
		cell, err := drive.Run(context.Background(), drive.Config{
			Types:    []string{"noop"},
			Streams:  p.Streams,
			Warmup:   10 * time.Millisecond,
			Duration: 50 * time.Millisecond,
			Point:    p,
		}, func(ctx context.Context, stream int) (drive.Stream, error) { return &counter{}, nil })
		if err != nil {
			fmt.Println(err)
			return
		}
		cell.Engine, cell.Workload = "none", "noop"
		fmt.Printf("cell %d: %d streams, interrupted %v, measured %v, ran calls: %v\n",
			cell.Index, cell.Streams, cell.Interrupted, cell.Measured, cell.Total.Count > 0)
	}
	// Output:
	// cell 0: 1 streams, interrupted false, measured 50ms, ran calls: true
	// cell 1: 2 streams, interrupted false, measured 50ms, ran calls: true
}
