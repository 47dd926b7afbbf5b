package model

import (
	"errors"
	"strings"
	"testing"
)

func TestSize(t *testing.T) {
	z := Sizing{
		Workload:       Default(),
		Machine:        Machine{LocalNS: 67, RemoteNS: 125, Locality: -1},
		TargetTPS:      400,
		LicensePerCore: 7000,
		CPUs: []CPUOption{{Name: "8c", Cores: 8, GHz: 3, Price: 1000},
			{Name: "16c", Cores: 16, GHz: 3, Price: 3000}},
		Sockets: []int{1, 2},
		SMT:     1,
	}
	rows, err := Size(z)
	if err != nil {
		t.Fatal(err)
	}
	// 1S: 27.27 tps/core; 2S (96 ns): 19.544 tps/core.
	//   1S×16: 16·27.27 = 436.4 ≥ 400, licence 16·7000 = 112000 + 3000 = 115000
	//   2S×16: 32·19.544 = 625.4 ≥ 400, 32·7000 = 224000 + 2·3000 = 230000
	//   1S×8: 218.2 < 400, 8·7000 + 1000 = 57000
	//   2S×8: 16·19.544 = 312.7 < 400, 16·7000 + 2000 = 114000
	// cores needed: ceil(400/27.27) = ceil(14.67) = 15; ceil(400/19.544) = ceil(20.47) = 21.
	want := []struct {
		s, cores, needed int
		meets            bool
		cost             float64
	}{
		{1, 16, 15, true, 115000},
		{2, 32, 21, true, 230000},
		{1, 8, 15, false, 57000},
		{2, 16, 21, false, 114000},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, w := range want {
		r := rows[i]
		if r.Sockets != w.s || r.Cores != w.cores || r.CoresNeeded != w.needed || r.Meets != w.meets ||
			r.TotalCost != w.cost {
			t.Errorf("row %d = %+v, want %+v", i, r, w)
		}
	}
	// A system price by socket count is added once per system.
	z.SystemPrice = map[int]float64{2: 100000}
	rows, _ = Size(z)
	if rows[1].Sockets != 2 || rows[1].HardwareCost != 106000 {
		t.Errorf("with system price: %+v", rows[1])
	}
	bad := z
	bad.CPUs = []CPUOption{{Cores: 0, GHz: 3}}
	if _, err := Size(bad); !errors.Is(err, ErrInput) {
		t.Errorf("0 cores: %v", err)
	}
	bad = z
	bad.TargetTPS = 0
	if _, err := Size(bad); !errors.Is(err, ErrInput) {
		t.Errorf("0 target: %v", err)
	}
}

// TestClockCPUs: options without a clock take --ghz and a name from it;
// without --ghz each is refused by name; none at all is refused.
func TestClockCPUs(t *testing.T) {
	opt := func() []CPUOption {
		return []CPUOption{{Name: "fast", Cores: 8, GHz: 3.5, Price: 1}, {Name: "a", Cores: 16, Price: 2},
			{Name: "b", Cores: 32, Price: 3}}
	}
	cpus := opt()
	if err := ClockCPUs(cpus, 2.5); err != nil || cpus[0].GHz != 3.5 || cpus[1].GHz != 2.5 ||
		cpus[1].Name != cpus[1].DefaultName() || cpus[1].Name == "a" {
		t.Errorf("ClockCPUs(2.5) = %v: %+v", err, cpus)
	}
	if err := ClockCPUs(nil, 3); err == nil || !strings.HasPrefix(err.Error(), "-cpu-cost: missing: ") {
		t.Errorf("ClockCPUs(none) = %v", err)
	}
	err := ClockCPUs(opt(), 0)
	if err == nil || err.Error() != "-cpu-cost: \"a\" has no ghz: add ghz=F to it or give --ghz\n"+
		"-cpu-cost: \"b\" has no ghz: add ghz=F to it or give --ghz" {
		t.Errorf("ClockCPUs(0) = %v", err)
	}
}
