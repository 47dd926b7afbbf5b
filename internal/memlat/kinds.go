package memlat

import "github.com/numalab/numalab/internal/result"

// Item kinds a memory probe stores, each with its type.
const (
	KindClock     result.Kind[Clock]     = "memlat.Clock"
	KindLadder    result.Kind[Ladder]    = "memlat.Ladder"
	KindMLP       result.Kind[MLP]       = "memlat.MLP"
	KindBandwidth result.Kind[Bandwidth] = "memlat.Bandwidth"
	KindMatrix    result.Kind[Matrix]    = "memlat.Matrix"
	KindRepeat    result.Kind[Repeat]    = "memlat.Repeat"
	KindSummary   result.Kind[Summary]   = "memlat.Summary"
	KindC2C       result.Kind[C2C]       = "memlat.C2C"
	// KindNeighbourCell is an OLTP run's cell measured with a neighbour.
	KindNeighbourCell result.Kind[NeighbourCell] = "memlat.NeighbourCell"
)
