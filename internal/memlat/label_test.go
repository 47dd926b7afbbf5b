package memlat

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// synthetic is a ladder of touched sizes from 1 KiB to top with 4 points
// per doubling, on a machine with the given cache capacities and
// latencies (lat has one more entry: DRAM). A random access over F bytes
// hits a cache of C bytes with probability C/F.
func synthetic(top int64, caches []int64, lat []float64) ([]int64, []float64) {
	var bytes []int64
	var ns []float64
	for _, b := range Sizes(1<<10, top, 4, 64) {
		f := float64(b)
		v := lat[len(lat)-1]
		for k := len(caches) - 1; k >= 0; k-- {
			if h := float64(caches[k]) / f; h >= 1 {
				v = lat[k]
			} else {
				v = lat[k]*h + v*(1-h)
			}
		}
		bytes = append(bytes, b)
		ns = append(ns, v)
	}
	return bytes, ns
}

var (
	zenCaches = []int64{32 << 10, 1 << 20, 32 << 20}
	zenLat    = []float64{1.1, 3.9, 14, 140}
)

func TestLabelPlateaus(t *testing.T) {
	noisy := func(ns []float64, seed uint64) []float64 {
		r := rand.New(rand.NewPCG(seed, seed))
		out := make([]float64, len(ns))
		for i, v := range ns {
			out[i] = v
			if r.IntN(5) == 0 { // one point in five inflated by up to 25%
				out[i] = v * (1 + 0.25*r.Float64())
			}
		}
		return out
	}
	tlbStep := func(bytes []int64, ns []float64) []float64 {
		out := append([]float64(nil), ns...)
		for i, b := range bytes {
			if b > 128<<20 {
				out[i] *= 1.3 // page walks once the TLB's reach is passed
			}
		}
		return out
	}
	bytes, clean := synthetic(256<<20, zenCaches, zenLat)
	for _, tc := range []struct {
		name   string
		bytes  []int64
		ns     []float64
		caches []int64
		want   string
	}{
		{"clean", bytes, clean, zenCaches, "L1 L2 L3 DRAM"},
		{"noisy", bytes, noisy(clean, 1), zenCaches, "L1 L2 L3 DRAM"},
		{"noisy2", bytes, noisy(clean, 2), zenCaches, "L1 L2 L3 DRAM"},
		{"tlb step in DRAM", bytes, tlbStep(bytes, clean), zenCaches, "L1 L2 L3 DRAM"},
		{"no cache sizes", bytes, clean, nil, "L1 L2 L3 DRAM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lv, err := LabelPlateaus(tc.bytes, tc.ns, tc.caches)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, l := range lv {
				names = append(names, l.Name)
			}
			if got := strings.Join(names, " "); got != tc.want {
				t.Fatalf("levels %q, want %q (%+v)", got, tc.want, lv)
			}
			for k, l := range lv[:3] {
				if math.Abs(l.NS/zenLat[k]-1) > 0.15 {
					t.Errorf("%s: %.2f ns, want about %.2f", l.Name, l.NS, zenLat[k])
				}
				// The knee lies within a factor of two of the capacity.
				if r := float64(l.KneeBytes) / float64(zenCaches[k]); r < 0.5 || r > 2 {
					t.Errorf("%s: knee at %d bytes, cache %d", l.Name, l.KneeBytes, zenCaches[k])
				}
				if tc.caches != nil &&
					(l.CacheBytes != zenCaches[k] || math.Abs(l.KneeRatio-float64(l.KneeBytes)/float64(zenCaches[k])) > 1e-9) {
					t.Errorf("%s: cache %d ratio %.2f", l.Name, l.CacheBytes, l.KneeRatio)
				}
			}
			if d := lv[3]; d.NS < 100 || d.KneeBytes != 0 {
				t.Errorf("DRAM plateau %+v", d)
			}
		})
	}
}

func TestLabelPlateausStopsInCache(t *testing.T) {
	// A ladder that ends at 4 MiB never reaches DRAM: no DRAM label.
	bytes, ns := synthetic(4<<20, zenCaches, zenLat)
	lv, err := LabelPlateaus(bytes, ns, zenCaches)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lv {
		if l.Name == "DRAM" {
			t.Fatalf("a ladder ending at 4 MiB was labelled DRAM: %+v", lv)
		}
	}
	if len(lv) < 2 || lv[0].Name != "L1" || lv[1].Name != "L2" {
		t.Fatalf("levels %+v, want L1, L2, ...", lv)
	}
}

func TestLabelPlateausErrors(t *testing.T) {
	for _, tc := range []struct {
		bytes []int64
		ns    []float64
		want  string
	}{
		{[]int64{1, 2}, []float64{1}, "2 sizes but 1"},
		{[]int64{1}, []float64{1}, "at least 2"},
		{[]int64{2, 1}, []float64{1, 1}, "not increasing"},
		{[]int64{1, 2}, []float64{1, 0}, "not positive"},
		{[]int64{1, 2}, []float64{1, math.NaN()}, "not positive"},
	} {
		_, err := LabelPlateaus(tc.bytes, tc.ns, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LabelPlateaus(%v, %v) = %v, want %q", tc.bytes, tc.ns, err, tc.want)
		}
	}
}

func TestSizes(t *testing.T) {
	s := Sizes(4<<10, 1<<30, 4, 256)
	if s[0] != 4<<10 || s[len(s)-1] != 1<<30 {
		t.Fatalf("sizes run %d..%d", s[0], s[len(s)-1])
	}
	if len(s) < 4*18 {
		t.Fatalf("%d sizes over 18 doublings, want at least 4 per doubling", len(s))
	}
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] || s[i]%256 != 0 {
			t.Fatalf("size %d: %d after %d", i, s[i], s[i-1])
		}
		if r := float64(s[i]) / float64(s[i-1]); r > 1.25 {
			t.Fatalf("size %d: step %.2f, more than a quarter doubling", i, r)
		}
	}
}

// In a VM the L3 the guest sees is shared with neighbours: the ladder's
// knee comes far below the reported size. The levels are still named from
// the knees, and the ratio shows the gap.
func TestLabelPlateausSmallEffectiveL3(t *testing.T) {
	bytes, ns := synthetic(256<<20, []int64{32 << 10, 1 << 20, 4 << 20}, zenLat)
	lv, err := LabelPlateaus(bytes, ns, zenCaches)
	if err != nil {
		t.Fatal(err)
	}
	if len(lv) != 4 || lv[2].Name != "L3" || lv[3].Name != "DRAM" {
		t.Fatalf("levels %+v, want L1 L2 L3 DRAM", lv)
	}
	if r := lv[2].KneeRatio; r < 0.06 || r > 0.25 {
		t.Errorf("L3 knee/topology %.2f, want about 4 MiB / 32 MiB", r)
	}
}

// The random ladder starts past one TLB window; its labels use the
// TLB-local ladder's smaller sizes as a prefix, so its first level is L1.
func TestLadderLabelWithPrefix(t *testing.T) {
	bytes, ns := synthetic(256<<20, zenCaches, zenLat)
	var local, random Ladder
	for i, b := range bytes {
		p := Point{Bytes: b * 4, TouchedBytes: b, NS: Stat{Median: ns[i]}}
		local.Points = append(local.Points, p)
		if p.Bytes > DefaultWindowBytes {
			random.Points = append(random.Points, p)
		}
	}
	random.label(zenCaches, nil)
	if len(random.Levels) == 0 || random.Levels[0].Name != "L1" || random.Levels[0].NS < 2 {
		// Without the prefix the first plateau seen is L2, misnamed L1.
		t.Logf("without prefix: %+v", random.Levels)
	}
	random.label(zenCaches, local.Points)
	if len(random.Levels) != 4 || random.Levels[0].Name != "L1" || random.Levels[0].NS > 1.5 ||
		random.Levels[3].Name != "DRAM" {
		t.Fatalf("with prefix: %+v", random.Levels)
	}
}
