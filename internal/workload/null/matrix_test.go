package null

import (
	"slices"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/topo/topotest"
)

func TestMatrixFixtures(t *testing.T) {
	// Captured machines, as lstopo shows them: this 2-vCPU guest (one
	// node, no SMT), SMT siblings numbered apart (cpu 0 and 8), four
	// sockets in eight nodes (the farthest from node 0 is node 3, from cpu
	// 24), SMT siblings numbered together, and cpu 0 offline.
	for _, c := range []struct {
		fixture string
		want    []string // Pairing.String of each, in order
	}{
		{"kvm-2vcpu-zen.tar.gz",
			[]string{"same-cpu: client on cpu 0, backend on cpu 0", "smt-sibling: unavailable (one thread per core)",
				"other-core: client on cpu 0, backend on cpu 1", "other-node: unavailable (one NUMA node)"}},
		{"16em64t-4s2c2t.tar.bz2",
			[]string{"same-cpu: client on cpu 0, backend on cpu 0", "smt-sibling: client on cpu 0, backend on cpu 8",
				"other-core: client on cpu 0, backend on cpu 1", "other-node: unavailable (one NUMA node)"}},
		{"64amd64-4s2n4ca2co.tar.bz2",
			[]string{"same-cpu: client on cpu 0, backend on cpu 0", "smt-sibling: unavailable (one thread per core)",
				"other-core: client on cpu 0, backend on cpu 1", "other-node: client on cpu 0, backend on cpu 24"}},
		{"fakecpuid1f-64intel64-2p4d2n2c2t.tar.bz2",
			[]string{"same-cpu: client on cpu 0, backend on cpu 0", "smt-sibling: client on cpu 0, backend on cpu 1",
				"other-core: client on cpu 0, backend on cpu 2", "other-node: client on cpu 0, backend on cpu 4"}},
		{"offline-cpu0-node0.tar.bz2",
			[]string{"same-cpu: client on cpu 4, backend on cpu 4", "smt-sibling: unavailable (one thread per core)",
				"other-core: client on cpu 4, backend on cpu 6", "other-node: unavailable (one NUMA node)"}},
	} {
		m := Matrix(topotest.Fixture(t, c.fixture))
		var got []string
		for _, p := range m {
			got = append(got, p.String())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: matrix\n%q\nwant\n%q", c.fixture, got, c.want)
		}
	}
}

// TestMatrixOnThisHost checks the matrix this machine offers: whatever it
// is, same-cpu is there, every pairing is named once, in order, and each
// is either placed on two usable CPUs or says why not.
func TestMatrixOnThisHost(t *testing.T) {
	host, err := topo.FromSysfs("/")
	if err != nil {
		t.Fatal(err)
	}
	m := Matrix(host)
	if len(m) != len(Pairings) {
		t.Fatalf("matrix %v; want the %d pairings %v", m, len(Pairings), Pairings)
	}
	for i, p := range m {
		t.Log(p)
		_, clientOK := host.CPU(p.Client)
		_, backendOK := host.CPU(p.Backend)
		switch {
		case p.Name != Pairings[i]:
			t.Errorf("pairing %d is %q; want %q", i, p.Name, Pairings[i])
		case p.Unavailable == "" && (!clientOK || !backendOK):
			t.Errorf("%v: not on usable CPUs", p)
		case p.Unavailable != "" && (p.Client != -1 || p.Backend != -1):
			t.Errorf("%v: unavailable but placed", p)
		}
	}
	if m[0].Unavailable != "" || m[0].Client != m[0].Backend {
		t.Errorf("same-cpu is %v; want both on one usable CPU", m[0])
	}
}

func TestCellsInterleaveRepeats(t *testing.T) {
	cfg := DefaultRunConfig()
	cfg.Streams = []int{1, 2}
	cells, layout, m := cfg.Cells(topotest.Fixture(t, "kvm-2vcpu-zen.tar.gz"))
	if len(m) != 4 {
		t.Fatalf("matrix %v; want every pairing", m)
	}
	// 3 repeats x 2 transports x 2 available pairings x 2 stream counts.
	if len(cells) != 24 || len(layout) != len(cells) {
		t.Fatalf("%d cells, %d layouts; want 24", len(cells), len(layout))
	}
	for i, c := range cells {
		l := layout[i]
		if c.Index != i || c.Repeat != i/8 || !slices.Equal(c.Place.CPUs, []int{l.Pairing.Client}) ||
			l.Pairing.Unavailable != "" {
			t.Errorf("cell %d: %+v with %+v", i, c, l)
		}
	}
	if layout[0].Transport != Unix || layout[4].Transport != TCP || layout[2].Pairing.Name != OtherCore {
		t.Errorf("order of the first repeat: %+v", layout[:8])
	}
	cfg.Engine = "sqlite"
	cells, layout, m = cfg.Cells(topotest.Fixture(t, "kvm-2vcpu-zen.tar.gz"))
	if len(cells) != 6 || layout[0].Transport != InProcess || m[0].Name != SameCPU {
		t.Errorf("sqlite: %d cells, %+v, matrix %v; want 6 in-process cells and the matrix untouched",
			len(cells), layout[0], m)
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		edit func(*RunConfig)
		want string // "" = valid
	}{
		{func(*RunConfig) {}, ""},
		{func(c *RunConfig) { c.Engine = "duckdb" }, "-engine"},
		{func(c *RunConfig) { c.Transports = []string{"udp"} }, "-transport"},
		{func(c *RunConfig) { c.DSN = "host=/tmp" }, "-transport: \"[unix tcp]\" names two transports"},
		{func(c *RunConfig) { c.Pairings = []string{"far"} }, "-pairing"},
		{func(c *RunConfig) { c.Protocol = "extended" }, "-protocol"},
		{func(c *RunConfig) { c.Streams = []int{0} }, "-streams"},
		{func(c *RunConfig) { c.Duration = 0 }, "-duration"},
		{func(c *RunConfig) { c.Engine, c.DSN, c.Transports = "sqlite", "host=/tmp", []string{Unix} }, "-dsn"},
	} {
		cfg := DefaultRunConfig()
		c.edit(&cfg)
		err := cfg.Check()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v; want valid", cfg, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: %v; want an error with %q", cfg, err, c.want)
		}
	}
}
