package pgscript

import (
	"math"
	"math/bits"
)

// prng is xoroshiro128**, the generator PostgreSQL 15 calls pg_prng, seeded
// as PostgreSQL seeds it (two rounds of splitmix64). Each client owns one;
// permute seeds a fresh one from its seed argument, as pgbench does, which
// makes permute's results equal to pgbench's.
type prng struct{ s0, s1 uint64 }

// splitmix64 advances *state and returns the next output of SplitMix64.
func splitmix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	z := *state
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func newPRNG(seed uint64) prng {
	var r prng
	r.s0 = splitmix64(&seed)
	r.s1 = splitmix64(&seed)
	if r.s0 == 0 && r.s1 == 0 { // xoroshiro's one bad state
		r.s0 = 1
	}
	return r
}

// clientPRNG derives client id's generator from the run's seed and round
// (0: none): distinct clients or rounds get unrelated streams, and the
// same (seed, id, round) the same stream.
func clientPRNG(seed uint64, id int, round uint64) prng {
	s := seed
	a := splitmix64(&s)
	c := uint64(id)
	b := splitmix64(&c)
	if round > 0 {
		b ^= splitmix64(&round)
	}
	return newPRNG(a ^ b)
}

func (r *prng) uint64() uint64 {
	s0 := r.s0
	sx := r.s1 ^ s0
	v := bits.RotateLeft64(s0*5, 7) * 9
	r.s0 = bits.RotateLeft64(s0, 24) ^ sx ^ sx<<16
	r.s1 = bits.RotateLeft64(sx, 37)
	return v
}

// float64 is uniform in [0, 1), from 52 random bits.
func (r *prng) float64() float64 {
	return float64(r.uint64()>>12) * 0x1p-52
}

// uint64Range is uniform in [lo, hi] (lo <= hi), by bitmask rejection.
func (r *prng) uint64Range(lo, hi uint64) uint64 {
	if hi <= lo {
		return lo
	}
	span := hi - lo
	shift := bits.LeadingZeros64(span)
	for {
		v := r.uint64() >> shift
		if v <= span {
			return lo + v
		}
	}
}

// uniform is random(lo, hi): inclusive, lo <= hi and hi-lo+1 fits an int64
// (checked by the caller).
func (r *prng) uniform(lo, hi int64) int64 {
	return lo + int64(r.uint64Range(0, uint64(hi-lo)))
}

// exponential is random_exponential(lo, hi, param), param > 0: the
// exponential distribution cut at param, scaled onto [lo, hi].
func (r *prng) exponential(lo, hi int64, param float64) int64 {
	cut := math.Exp(-param)
	u := 1.0 - r.float64() // (0, 1]
	x := -math.Log(cut+(1.0-cut)*u) / param
	return lo + int64(float64(hi-lo+1)*x)
}

// gaussian is random_gaussian(lo, hi, param), param >= 2: a normal
// distribution cut at ±param standard deviations (Box-Muller), scaled onto
// [lo, hi].
func (r *prng) gaussian(lo, hi int64, param float64) int64 {
	var stdev float64
	for {
		u1 := 1.0 - r.float64() // (0, 1]: log is finite
		u2 := r.float64()
		stdev = math.Sqrt(-2.0*math.Log(u1)) * math.Sin(2.0*math.Pi*u2)
		if stdev >= -param && stdev < param {
			break
		}
	}
	x := (stdev + param) / (param * 2.0)
	return lo + int64(float64(hi-lo+1)*x)
}

// zipfian is random_zipfian(lo, hi, s), 1.001 <= s <= 1000: value lo+k-1
// with probability proportional to 1/k^s, by the rejection method of
// Devroye's "Non-Uniform Random Variate Generation" (p. 550), as pgbench
// 15 draws it.
func (r *prng) zipfian(lo, hi int64, s float64) int64 {
	n := hi - lo + 1
	if n <= 1 {
		return lo
	}
	b := math.Pow(2.0, s-1.0)
	for {
		u := r.float64()
		v := r.float64()
		x := math.Floor(math.Pow(u, -1.0/(s-1.0)))
		t := math.Pow(1.0+1.0/x, s-1.0)
		if v*x*(t-1.0)/(b-1.0) <= t/b && x <= float64(n) {
			return lo - 1 + int64(x)
		}
	}
}

// permute maps i onto [0, size) bijectively for a given seed: six rounds
// of seeded odd multiplications, xors and rotations of the low and the
// high part of the range, then a seeded offset, as pgbench 15 computes it
// (its results are pgbench's). size > 0 is checked by the caller.
func permute(i, size, seed int64) int64 {
	if size < 2 {
		return 0
	}
	r := newPRNG(uint64(seed))
	n := uint64(size)
	v := uint64(i) % n
	width := 63 - bits.LeadingZeros64(n) // largest power of 2 <= n is 1<<width
	mask := uint64(1)<<width - 1
	rot := func(x uint64) uint64 { return (x<<1)&mask | x>>(width-1) }
	for range 6 {
		m := r.uint64()&mask | 1
		x := r.uint64() & mask
		if v <= mask {
			v = rot((v*m ^ x) & mask)
		}
		m = r.uint64()&mask | 1
		x = r.uint64() & mask
		if t := n - 1 - v; t <= mask {
			v = n - 1 - rot((t*m^x)&mask)
		}
		v = (v + r.uint64Range(0, n-1)) % n
	}
	return int64(v)
}

const (
	fnvPrime  = 0x100000001b3
	fnvOffset = 0xcbf29ce484222325
	mm2Mul    = 0xc6a4a7935bd1e995
	mm2Rot    = 47
)

// hashFNV1a is FNV-1a over the 8 little-endian bytes of v, its offset
// basis xored with seed, as pgbench's hash_fnv1a.
func hashFNV1a(v int64, seed int64) int64 {
	h := uint64(fnvOffset) ^ uint64(seed)
	u := uint64(v)
	for range 8 {
		h ^= u & 0xff
		h *= fnvPrime
		u >>= 8
	}
	return int64(h)
}

// hashMurmur2 is MurmurHash64A of the 8 bytes of v with seed, as
// pgbench's hash_murmur2 (and hash).
func hashMurmur2(v int64, seed int64) int64 {
	h := uint64(seed) ^ (8 * mm2Mul & math.MaxUint64) // the length, 8 bytes, times the multiplier
	k := uint64(v) * mm2Mul
	k ^= k >> mm2Rot
	k *= mm2Mul
	h ^= k
	h *= mm2Mul
	h ^= h >> mm2Rot
	h *= mm2Mul
	h ^= h >> mm2Rot
	return int64(h)
}
