package memlat

import (
	"fmt"
	"math"
	"slices"
)

// Level is one plateau of a latency ladder: a cache level or DRAM.
type Level struct {
	Name string `json:"name"` // "L1", "L2", "L3", ..., "DRAM"
	// FromBytes and ToBytes are the touched bytes of the plateau's first
	// and last ladder points.
	FromBytes int64   `json:"from_bytes"`
	ToBytes   int64   `json:"to_bytes"`
	NS        float64 `json:"ns"`               // latency where the plateau is flattest
	Cycles    float64 `json:"cycles,omitempty"` // NS times the measured clock
	// KneeBytes is where latency crosses the geometric mean of this plateau
	// and the next: the capacity the ladder sees (0 for the last plateau).
	KneeBytes int64 `json:"knee_bytes,omitempty"`
	// CacheBytes is the size the topology reports for this level (0 when
	// unknown or for DRAM); KneeRatio is KneeBytes / CacheBytes.
	CacheBytes int64   `json:"cache_bytes,omitempty"`
	KneeRatio  float64 `json:"knee_ratio,omitempty"`
}

// Label thresholds.
const (
	// steepStep is the latency ratio between neighbouring ladder points
	// above which the step belongs to a transition between levels, for
	// ladders with 4 points per doubling (scaled for other densities).
	steepStep = 1.15
	// sameLevel is the latency ratio under which two neighbouring plateaus
	// are one level (a TLB step inside DRAM, noise near a knee).
	sameLevel = 1.6
)

// LabelPlateaus finds the plateaus of a ladder of (touched bytes, ns)
// points sorted by size and names them L1, L2, ... from the smallest, and
// DRAM for the last when it reaches twice the largest cache (or, with no
// cache sizes known, when there are at least two plateaus). A knee far
// below the cache the topology reports is a finding, not an error: in a
// VM the last-level cache is shared with neighbours the guest cannot see.
// cacheBytes are the data cache sizes one CPU sees, by level (L1d, L2,
// L3, ...); they are used only to compare, never to place a knee.
func LabelPlateaus(bytes []int64, ns []float64, cacheBytes []int64) ([]Level, error) {
	if len(bytes) != len(ns) {
		return nil, fmt.Errorf("labelling ladder: %d sizes but %d latencies", len(bytes), len(ns))
	}
	if len(bytes) < 2 {
		return nil, fmt.Errorf("labelling ladder: %d points, want at least 2", len(bytes))
	}
	for i := 1; i < len(bytes); i++ {
		if bytes[i] <= bytes[i-1] {
			return nil, fmt.Errorf("labelling ladder: sizes not increasing at point %d", i)
		}
	}
	for i, v := range ns {
		if !(v > 0) {
			return nil, fmt.Errorf("labelling ladder: latency %v at point %d is not positive", v, i)
		}
	}
	// Density: points per doubling, to scale the step threshold.
	doublings := math.Log2(float64(bytes[len(bytes)-1]) / float64(bytes[0]))
	perDoubling := max(float64(len(bytes)-1)/max(doublings, 1e-9), 0.5)
	steep := min(math.Pow(steepStep, 4/perDoubling), 1.5)

	// Segments of gentle steps are plateaus; steep steps separate them.
	type seg struct{ lo, hi int } // inclusive point indices
	var segs []seg
	cur := seg{0, 0}
	for i := 1; i < len(ns); i++ {
		if ns[i]/ns[i-1] > steep {
			segs = append(segs, cur)
			cur = seg{i, i}
			continue
		}
		cur.hi = i
	}
	segs = append(segs, cur)

	// A plateau's latency is taken where it is flattest: the median of the
	// three points around the smallest change across them. Near its start
	// a level still gets hits from the level below, near its end misses to
	// the level above; and noise on a shared machine (preemption, a busy
	// neighbour) is a single raised point the median ignores.
	median := func(s seg) float64 {
		if s.hi-s.lo < 2 {
			v := slices.Clone(ns[s.lo : s.hi+1])
			slices.Sort(v)
			return v[0]
		}
		best, val := math.Inf(1), 0.0
		for i := s.lo + 1; i < s.hi; i++ {
			w := []float64{ns[i-1], ns[i], ns[i+1]}
			slices.Sort(w)
			if d := (w[2] - w[0]) / w[1]; d < best {
				best, val = d, w[1]
			}
		}
		return val
	}
	// Single points between two steep steps are the knee itself: fold them
	// into the neighbour they are closer to, then merge near-equal plateaus.
	var plats []seg
	for _, s := range segs {
		if s.hi == s.lo && len(segs) > 1 && s.lo != 0 && s.hi != len(ns)-1 {
			continue
		}
		plats = append(plats, s)
	}
	if len(plats) == 0 {
		plats = segs
	}
	merged := []seg{plats[0]}
	for _, s := range plats[1:] {
		last := &merged[len(merged)-1]
		if median(s)/median(*last) < sameLevel {
			last.hi = s.hi
			continue
		}
		merged = append(merged, s)
	}

	// More plateaus than cache levels and DRAM: a step inside a level (a
	// TLB reach, a busy neighbour's share of the L3). Merge the closest
	// neighbours until the count fits.
	for len(cacheBytes) > 0 && len(merged) > len(cacheBytes)+1 {
		best, bi := math.Inf(1), 0
		for i := 1; i < len(merged); i++ {
			if r := median(merged[i]) / median(merged[i-1]); r < best {
				best, bi = r, i
			}
		}
		merged[bi-1].hi = merged[bi].hi
		merged = slices.Delete(merged, bi, bi+1)
	}
	largest := int64(0)
	if len(cacheBytes) > 0 {
		largest = slices.Max(cacheBytes)
	}
	reachesDRAM := len(merged) >= 2 && (largest == 0 || bytes[merged[len(merged)-1].hi] >= 2*largest)
	levels := make([]Level, len(merged))
	for k, s := range merged {
		l := Level{FromBytes: bytes[s.lo], ToBytes: bytes[s.hi], NS: median(s)}
		switch {
		case k == len(merged)-1 && reachesDRAM:
			l.Name = "DRAM"
		default:
			l.Name = fmt.Sprintf("L%d", k+1)
			if k < len(cacheBytes) {
				l.CacheBytes = cacheBytes[k]
			}
		}
		if k+1 < len(merged) {
			l.KneeBytes = crossing(bytes, ns, s.hi, math.Sqrt(l.NS*median(merged[k+1])))
			if l.CacheBytes > 0 {
				l.KneeRatio = float64(l.KneeBytes) / float64(l.CacheBytes)
			}
		}
		levels[k] = l
	}
	return levels, nil
}

// crossing returns the size, interpolated in log-log, at which the ladder
// first reaches latency target at or after point from.
func crossing(bytes []int64, ns []float64, from int, target float64) int64 {
	for i := from; i+1 < len(ns); i++ {
		if ns[i+1] >= target {
			if ns[i] >= target {
				return bytes[i]
			}
			f := math.Log(target/ns[i]) / math.Log(ns[i+1]/ns[i])
			return int64(math.Exp(math.Log(float64(bytes[i])) + f*math.Log(float64(bytes[i+1])/float64(bytes[i]))))
		}
	}
	return bytes[len(bytes)-1]
}
