package tpch

import "math/bits"

// rng is a small, fast generator (splitmix64). Every row draws from its own
// rng, seeded from the load's seed, its table and its key, so that a row's
// values do not depend on which worker made it or in what order: any split
// of the key range gives the same database.
type rng struct{ s uint64 }

// Stream identifiers: which table (or query parameters) an rng serves.
const (
	streamPart uint64 = iota + 1
	streamSupplier
	streamCustomer
	streamOrder
	streamNation
	streamRegion
	streamText
	streamParams
)

// newRNG returns the rng of row key of stream for seed.
func newRNG(seed int64, stream uint64, key int64) rng {
	r := rng{s: uint64(seed)*0x9E3779B97F4A7C15 ^ stream<<56 ^ uint64(key)*0xD1B54A32D192ED03}
	r.next()
	return r
}

func (r *rng) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// between returns a uniform integer in [lo, hi].
func (r *rng) between(lo, hi int64) int64 {
	n := uint64(hi - lo + 1)
	// Lemire's multiply-shift; the bias for n ≪ 2^64 is negligible.
	hiBits, _ := bits.Mul64(r.next(), n)
	return lo + int64(hiBits)
}

// pick returns a uniform element of list.
func pick[T any](r *rng, list []T) T { return list[r.between(0, int64(len(list)-1))] }
