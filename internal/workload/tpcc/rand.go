package tpcc

import "math/bits"

// intner is what NURand needs from a random source: math/rand/v2's *Rand
// and the loader's generator both have it.
type intner interface {
	IntN(n int) int
}

// uniform returns a uniform integer in [lo, hi] (the specification's
// "random(x..y)", Clause 2.1.4).
func uniform(r intner, lo, hi int) int { return lo + r.IntN(hi-lo+1) }

// NURand is the specification's non-uniform random function (Clause 2.1.6):
//
//	NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x
//
// with A = 255 for C_LAST, 1023 for C_ID and 8191 for OL_I_ID, and C a
// constant in [0, A] chosen once per run (Constants).
func NURand(r intner, a, x, y, c int) int {
	return (((uniform(r, 0, a) | uniform(r, x, y)) + c) % (y - x + 1)) + x
}

// The A values of Clause 2.1.6.
const (
	aLast = 255
	aCID  = 1023
	aIID  = 8191
)

// Constants are the C values of NURand (Clause 2.1.6). The loader draws
// them and stores them with the database; a run draws its own C for C_LAST
// under Clause 2.1.6.1's rule and reuses the load's C_ID and OL_I_ID ones.
type Constants struct {
	CLast int `json:"c_last"` // in [0, 255]
	CID   int `json:"c_id"`   // in [0, 1023]
	CIID  int `json:"ol_i_id"`
}

// newConstants draws load-time constants.
func newConstants(r intner) Constants {
	return Constants{CLast: uniform(r, 0, aLast), CID: uniform(r, 0, aCID), CIID: uniform(r, 0, aIID)}
}

// validRunDelta says whether a run's C for C_LAST may be used with the
// load's one (Clause 2.1.6.1): the difference lies in [65, 119] and is
// neither 96 nor 112.
func validRunDelta(cLoad, cRun int) bool {
	d := cRun - cLoad
	if d < 0 {
		d = -d
	}
	return d >= 65 && d <= 119 && d != 96 && d != 112
}

// runConstants draws a run's constants from the load's (Clause 2.1.6.1).
func runConstants(r intner, load Constants) Constants {
	var ok []int
	for c := 0; c <= aLast; c++ {
		if validRunDelta(load.CLast, c) {
			ok = append(ok, c)
		}
	}
	run := load
	run.CLast = ok[r.IntN(len(ok))]
	return run
}

// syllables build customer last names (Clause 4.3.2.3).
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// LastName returns the last name for n in [0, 999]: the syllables of its
// three decimal digits, most significant first (Clause 4.3.2.3), so 371 is
// PRI·CALLY·OUGHT. The names are made once: a stream draws one for 60% of
// its Order-Status calls, and the call allocates nothing for it.
func LastName(n int) string { return lastNames[n] }

var lastNames = func() (names [1000]string) {
	for n := range names {
		names[n] = string(appendLastName(nil, n))
	}
	return names
}()

func appendLastName(b []byte, n int) []byte {
	b = append(b, syllables[n/100]...)
	b = append(b, syllables[n/10%10]...)
	return append(b, syllables[n%10]...)
}

// gen is the loader's generator: splitmix64, seeded per table and per
// district so that chunks can be made in any order and still be the same
// for a seed.
type gen struct{ s uint64 }

func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// newGen derives a generator from the seed and a path of labels
// (table, warehouse, district).
func newGen(seed int64, path ...uint64) *gen {
	s := mix(uint64(seed) + 0x9e3779b97f4a7c15)
	for _, p := range path {
		s = mix(s ^ mix(p+0x632be59bd9b4e019))
	}
	return &gen{s: s}
}

func (g *gen) next() uint64 {
	g.s += 0x9e3779b97f4a7c15
	return mix(g.s)
}

// IntN returns a uniform integer in [0, n) (Lemire's multiply; the bias is
// below 2⁻⁴⁰ for the ranges used here).
func (g *gen) IntN(n int) int {
	hi, _ := bits.Mul64(g.next(), uint64(n))
	return int(hi)
}

// alnum is the a-string alphabet (Clause 4.3.2.2: letters and digits).
const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// appendAString appends a random a-string of length in [lo, hi] (Clause
// 4.3.2.2): 6 bits per character, rejecting the two values past the
// alphabet.
func (g *gen) appendAString(b []byte, lo, hi int) []byte {
	n := uniform(g, lo, hi)
	for n > 0 {
		x := g.next()
		for k := 0; k < 10 && n > 0; k++ {
			v := x & 63
			x >>= 6
			if v < 62 {
				b = append(b, alnum[v])
				n--
			}
		}
	}
	return b
}

// appendNString appends n random digits (an n-string, Clause 4.3.2.2).
func (g *gen) appendNString(b []byte, n int) []byte {
	for n > 0 {
		x := g.next()
		for k := 0; k < 16 && n > 0; k++ {
			v := x & 15
			x >>= 4
			if v < 10 {
				b = append(b, byte('0'+v))
				n--
			}
		}
	}
	return b
}

// appendLetters appends n random upper-case letters (states, Clause 4.3.3.1).
func (g *gen) appendLetters(b []byte, n int) []byte {
	for i := 0; i < n; i++ {
		b = append(b, byte('A'+g.IntN(26)))
	}
	return b
}

// appendZip appends a zip code: a 4-digit n-string then "11111" (Clause 4.3.2.7).
func (g *gen) appendZip(b []byte) []byte {
	return append(g.appendNString(b, 4), "11111"...)
}

// appendData appends an a-string of length in [26, 50] that, when original,
// holds "ORIGINAL" at a random position (I_DATA and S_DATA, Clause 4.3.3.1).
func (g *gen) appendData(b []byte, original bool) []byte {
	start := len(b)
	b = g.appendAString(b, 26, 50)
	if original {
		at := start + g.IntN(len(b)-start-8+1)
		copy(b[at:], "ORIGINAL")
	}
	return b
}

// selector picks exactly k of n items uniformly at random, in one pass
// (selection sampling): the "10% of rows, selected at random" of Clause
// 4.3.3.1.
type selector struct{ k, n int }

func (s *selector) take(g *gen) bool {
	pick := g.IntN(s.n) < s.k
	s.n--
	if pick {
		s.k--
	}
	return pick
}
