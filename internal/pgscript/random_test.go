package pgscript

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDistributions draws 100,000 values of each random function for a
// seeded client and checks what cannot flake: the range, the same draws
// for the same seed and client, other draws for another client, and a
// mean (or a frequency) within a bound many standard errors wide.
func TestDistributions(t *testing.T) {
	const n = 100000
	zipfH := 0.0 // the zipfian's normalising sum for s = 1.5, n = 1000
	for k := 1; k <= 1000; k++ {
		zipfH += math.Pow(float64(k), -1.5)
	}
	tests := []struct {
		expr     string
		lo, hi   int64
		stat     func(vals []int64) float64
		min, max float64
	}{
		// uniform: mean 50.5, standard error 0.09
		{"random(1, 100)", 1, 100, mean, 50, 51},
		// mean of the cut exponential: 1 + 1000*(1/5 - e^-5/(1-e^-5)) - 0.5 = 193.7, standard error 0.6
		{"random_exponential(1, 1000, 5)", 1, 1000, mean, 190, 197},
		// symmetric: mean 500.5, standard error 1.2
		{"random_gaussian(1, 1000, 2.5)", 1, 1000, mean, 495, 506},
		// P(1) = 1/H(1000, 1.5) = 0.392, standard error 0.0015
		{"random_zipfian(1, 1000, 1.5)", 1, 1000, freqOf(1), 1/zipfH - 0.01, 1/zipfH + 0.01},
		// a narrow range
		{"random(-3, -2)", -3, -2, mean, -2.52, -2.48},
	}
	for _, tt := range tests {
		a := draws(t, tt.expr, 7, 0, n)
		b := draws(t, tt.expr, 7, 0, n)
		c := draws(t, tt.expr, 7, 1, n)
		same := 0
		for i := range a {
			if a[i] < tt.lo || a[i] > tt.hi {
				t.Fatalf("%s drew %d", tt.expr, a[i])
			}
			if a[i] != b[i] {
				t.Fatalf("%s: the same seed and client drew %d then %d", tt.expr, a[i], b[i])
			}
			if a[i] == c[i] {
				same++
			}
		}
		if same == n {
			t.Errorf("%s: clients 0 and 1 drew the same values", tt.expr)
		}
		if s := tt.stat(a); s < tt.min || s > tt.max {
			t.Errorf("%s: statistic %g, want %g to %g", tt.expr, s, tt.min, tt.max)
		}
	}
}

// TestRounds checks that a round (run sql's cell) draws apart from
// another and from none, the same again when repeated, and leaves
// :default_seed, hash's and permute's, as it is.
func TestRounds(t *testing.T) {
	r1, r2 := drawsIn(t, "random(1, 1000000)", 7, 0, 50, 1), drawsIn(t, "random(1, 1000000)", 7, 0, 50, 2)
	if slices.Equal(r1, r2) || slices.Equal(r1, draws(t, "random(1, 1000000)", 7, 0, 50)) {
		t.Error("rounds 1 and 2, or round 1 and none, drew the same values")
	}
	if !slices.Equal(r1, drawsIn(t, "random(1, 1000000)", 7, 0, 50, 1)) {
		t.Error("round 1 drew differently the second time")
	}
	if p1, p2 := drawsIn(t, "permute(5, 100)", 7, 0, 1, 1),
		drawsIn(t, "permute(5, 100)", 7, 0, 1, 2); !slices.Equal(p1, p2) {
		t.Errorf("permute(5, 100) is %v in round 1 and %v in round 2: a round changed :default_seed", p1, p2)
	}
}

// draws runs `\set v expr` n times for one client and returns the values.
func draws(t *testing.T, expr string, seed uint64, client, n int) []int64 {
	t.Helper()
	return drawsIn(t, expr, seed, client, n, 0)
}

// drawsIn is draws in round round (Options.Round).
func drawsIn(t *testing.T, expr string, seed uint64, client, n int, round uint64) []int64 {
	t.Helper()
	s, err := Parse("d.sql", strings.NewReader(`\set v `+expr))
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewSet(Options{Seed: seed, Round: round}, Weighted{s, 1})
	if err != nil {
		t.Fatal(err)
	}
	c := set.Client(client)
	v := set.index["v"]
	out := make([]int64, n)
	for i := range out {
		if _, err := c.Run(context.Background(), &fakeConn{}, 0); err != nil {
			t.Fatal(err)
		}
		out[i] = c.vars[v].i
	}
	return out
}

func mean(vals []int64) float64 {
	s := 0.0
	for _, v := range vals {
		s += float64(v)
	}
	return s / float64(len(vals))
}

func freqOf(x int64) func([]int64) float64 {
	return func(vals []int64) float64 {
		k := 0
		for _, v := range vals {
			if v == x {
				k++
			}
		}
		return float64(k) / float64(len(vals))
	}
}

// TestPermuteBijection checks that permute maps [0, size) onto itself
// for many sizes and seeds, and reads any i modulo size.
func TestPermuteBijection(t *testing.T) {
	sizes := []int64{1, 2, 3, 4, 5, 7, 8, 9, 10, 31, 32, 33, 100, 255, 256, 257, 1000, 4097}
	for _, size := range sizes {
		for _, seed := range []int64{0, 1, -1, 5432, math.MaxInt64} {
			seen := make([]bool, size)
			moved := 0
			for i := range size {
				p := permute(i, size, seed)
				if p < 0 || p >= size || seen[p] {
					t.Fatalf("permute(%d, %d, %d) = %d: out of range or repeated", i, size, seed, p)
				}
				seen[p] = true
				if p != i {
					moved++
				}
				if q := permute(i+3*size, size, seed); q != p {
					t.Fatalf("permute(%d+3*%d, %d, %d) = %d, not %d", i, size, size, seed, q, p)
				}
			}
			if size > 8 && moved == 0 {
				t.Errorf("permute(·, %d, %d) is the identity", size, seed)
			}
		}
	}
}

// nullConn answers every call at once, with no row.
type nullConn struct{}

func (nullConn) Exec(ctx context.Context, query string, args ...any) error { return nil }
func (nullConn) Query(ctx context.Context, query string, args []any, row func([]any) error) error {
	return nil
}

// BenchmarkSelectOnly is the interpreter's cost of one select-only
// transaction (a draw, binding :aid, the engine call) on an engine that
// costs nothing. Its one allocation is the int64 :aid boxed into the
// engine's []any arguments.
func BenchmarkSelectOnly(b *testing.B) {
	for _, tt := range []struct {
		name    string
		observe func(int, int, time.Duration, error)
	}{{"plain", nil}, {"observed", func(int, int, time.Duration, error) {}}} {
		b.Run(tt.name, func(b *testing.B) {
			s, err := Builtin("select-only")
			if err != nil {
				b.Fatal(err)
			}
			set, err := NewSet(Options{Placeholders: Dollar, Seed: 1, Scale: 100, Observe: tt.observe}, Weighted{s, 1})
			if err != nil {
				b.Fatal(err)
			}
			c := set.Client(0)
			ctx := context.Background()
			var conn Conn = nullConn{}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Run(ctx, conn, c.Choose()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
