package model

import (
	"errors"
	"strings"
	"testing"
)

func TestMatrixLatency(t *testing.T) {
	two := [][]float64{{67, 125}, {125, 67}}
	// Row mean: (67 + 125)/2 = 96, the 2-socket AverageLatency.
	if got := RowMeanLatency(two, 0, nil); !near(got, 96) {
		t.Errorf("RowMeanLatency = %v, want 96", got)
	}
	// 80% local: 0.8·67 + 0.2·125 = 78.6.
	if got := LocalityRowLatency(two, 1, nil, 0.8); !near(got, 78.6) {
		t.Errorf("LocalityRowLatency = %v, want 78.6", got)
	}
	m := [][]float64{
		{10, 20, 30},
		{20, 10, 40},
		{30, 40, 10},
	}
	// Row means 60/3 = 20, 70/3, 80/3; their mean = 210/9 = 23.333.
	if got := SetLatency(m, nil, -1); !near(got, 210.0/9) {
		t.Errorf("SetLatency = %v, want %v", got, 210.0/9)
	}
	// Nodes {0, 2} only: row 0 (10+30)/2 = 20, row 2 (30+10)/2 = 20 → 20.
	if got := SetLatency(m, []int{0, 2}, -1); !near(got, 20) {
		t.Errorf("SetLatency{0,2} = %v, want 20", got)
	}
	// Row 0 at 50% local: 0.5·10 + 0.5·(20+30)/2 = 5 + 12.5 = 17.5.
	if got := LocalityRowLatency(m, 0, nil, 0.5); !near(got, 17.5) {
		t.Errorf("LocalityRowLatency = %v, want 17.5", got)
	}
	// p = 1/n is the plain row mean: 1/3·10 + 2/3·25 = 20.
	if got := LocalityRowLatency(m, 0, nil, 1.0/3); !near(got, 20) {
		t.Errorf("LocalityRowLatency(1/3) = %v, want 20", got)
	}
	// Distances scaled to a local latency: 80·21/10 = 168.
	d := DistanceMatrix([][]int{{10, 21}, {21, 10}}, 80)
	if d[0][0] != 80 || !near(d[0][1], 168) || !near(d[1][0], 168) {
		t.Errorf("DistanceMatrix = %v", d)
	}
	for _, bad := range [][][]float64{nil, {{1, 2}}, {{1, 0}, {1, 1}}, {{1, -5}, {1, 1}}} {
		if err := CheckMatrix(bad); !errors.Is(err, ErrInput) {
			t.Errorf("CheckMatrix(%v) = %v, want ErrInput", bad, err)
		}
	}
}

func TestUniformMachine(t *testing.T) {
	mc := Machine{LocalNS: 67, RemoteNS: 125, BufferNS: 15, BufferMinSockets: 4, Locality: -1}
	for _, c := range []struct {
		s    int
		want float64
	}{{1, 67}, {2, 96}, {4, 125.5}} {
		if l, err := mc.Latency(c.s); err != nil || !near(l, c.want) {
			t.Errorf("Latency(%d) = %v, %v; want %v", c.s, l, err, c.want)
		}
	}
	// Beyond four sockets one remote latency gives no hops: refused,
	// saying what would give them.
	if l, err := mc.Latency(5); !errors.Is(err, ErrBeyond) ||
		!strings.Contains(err.Error(), "--remote-ns ONE_HOP,TWO_HOPS") || !strings.Contains(err.Error(), "--topology FILE") {
		t.Errorf("Latency(5) without hops = %v, %v; want ErrBeyond naming --topology and --remote-ns per hop", l, err)
	}
	// The remote latency per hop: three sockets one hop away, the rest
	// two hops, up to eight sockets; no coherency check beyond the local
	// latency's (a matrix of the same hops gives the same).
	mc.TwoHopNS = 190
	for _, c := range []struct {
		s    int
		want float64
	}{{4, 125.5}, {5, (67+3*125+190)/5.0 + 15}, {8, (67+3*125+4*190)/8.0 + 15}} {
		if l, err := mc.Latency(c.s); err != nil || !near(l, c.want) {
			t.Errorf("per hop: Latency(%d) = %v, %v; want %v", c.s, l, err, c.want)
		}
	}
	if l, err := mc.Latency(9); !errors.Is(err, ErrBeyond) || !strings.Contains(err.Error(), "at most 8") {
		t.Errorf("Latency(9) per hop = %v, %v; want ErrBeyond: at most 8", l, err)
	}
	hops := make([][]float64, 8)
	for i := range hops {
		hops[i] = make([]float64, 8)
		for j := range hops[i] {
			switch d := (j - i + 8) % 8; {
			case d == 0:
				hops[i][j] = 67
			case d <= 3:
				hops[i][j] = 125
			default:
				hops[i][j] = 190
			}
		}
	}
	mc.Locality = 0.5
	byMatrix := Machine{Matrix: hops, Sockets: [][]int{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}, Locality: 0.5}
	if a, _ := mc.Latency(8); !near(a, mc.BufferNS+SetLatency(hops, nil, 0.5)) {
		t.Errorf("per hop at 50%% locality = %v, a matrix of the same hops %v", a-mc.BufferNS, SetLatency(hops, nil, 0.5))
	}
	if l, err := byMatrix.Latency(8); err != nil || !near(l, 0.5*67+0.5*(3*125+4*190)/7.0) {
		t.Errorf("matrix of hops: Latency(8) = %v, %v", l, err)
	}
	// One socket apart (76 ns against 89 local): one socket at 76.
	mc = Machine{OneSocketNS: 76, LocalNS: 89, RemoteNS: 139, Locality: -1}
	for _, c := range []struct {
		s    int
		want float64
	}{{1, 76}, {2, 114}} {
		if l, err := mc.Latency(c.s); err != nil || !near(l, c.want) {
			t.Errorf("one socket apart: Latency(%d) = %v, %v; want %v", c.s, l, err, c.want)
		}
	}
	// With a locality, one socket is still one socket's latency (all of
	// its memory local), and full locality leaves two sockets at the
	// multi-socket local latency.
	for _, c := range []struct {
		p    float64
		s    int
		want float64
	}{{0.5, 1, 76}, {0.5, 2, 114}, {1, 1, 76}, {1, 2, 89}} {
		mc.Locality = c.p
		if l, err := mc.Latency(c.s); err != nil || !near(l, c.want) {
			t.Errorf("locality %g: Latency(%d) = %v, %v; want %v", c.p, c.s, l, err, c.want)
		}
	}
	// The uniform model equals the matrix model on a matrix with local on
	// the diagonal and remote elsewhere: 4 sockets → 125.5 - 15 = 110.5.
	m := [][]float64{{67, 125, 125, 125}, {125, 67, 125, 125}, {125, 125, 67, 125}, {125, 125, 125, 67}}
	if got := SetLatency(m, nil, -1); !near(got, 110.5) {
		t.Errorf("uniform matrix = %v, want 110.5", got)
	}
}
