package model

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/numalab/numalab/internal/setting"
)

// CPUOption is a processor one could buy: cores per socket, clock and
// price per processor.
type CPUOption struct {
	Name  string  `json:"name,omitempty"`
	Cores int     `json:"cores"`
	GHz   float64 `json:"ghz"`
	Price float64 `json:"price"`
}

// Sizing is the question: which configuration reaches TargetTPS at the
// lowest cost when software is licensed per core.
type Sizing struct {
	Workload       Workload
	Machine        Machine // latency per socket count; its CoresPerSocket is ignored
	TargetTPS      float64
	LicensePerCore float64
	CPUs           []CPUOption
	SystemPrice    map[int]float64 // base price of a system by socket count (chassis, board, memory); missing: 0
	Sockets        []int
	SMT            int
}

// SizeRow is one configuration: a processor option in S sockets.
type SizeRow struct {
	Sockets      int       `json:"sockets"`
	CPU          CPUOption `json:"cpu"`
	Cores        int       `json:"cores"` // all physical cores in the system, all licensed
	LatencyNS    float64   `json:"latency_ns"`
	TPSPerCore   float64   `json:"tps_per_core"`
	TotalTPS     float64   `json:"total_tps"`
	CoresNeeded  int       `json:"cores_needed"` // ceil(target / tps per core)
	Meets        bool      `json:"meets_target"`
	LicenseCost  float64   `json:"license_cost"`  // cores × licence per core
	HardwareCost float64   `json:"hardware_cost"` // sockets × processor price + system price
	TotalCost    float64   `json:"total_cost"`
	CostPerKTPS  float64   `json:"cost_per_1000_tps"`
}

// Size evaluates every processor option in every socket count, and sorts
// the configurations that meet the target first, cheapest first.
func Size(z Sizing) ([]SizeRow, error) {
	if err := z.Workload.Validate(); err != nil {
		return nil, err
	}
	if !(z.TargetTPS > 0) {
		return nil, fmt.Errorf("target %v tps: want a positive throughput: %w", z.TargetTPS, ErrInput)
	}
	if z.LicensePerCore < 0 {
		return nil, fmt.Errorf("licence cost %v per core: want zero or more: %w", z.LicensePerCore, ErrInput)
	}
	if len(z.CPUs) == 0 {
		return nil, fmt.Errorf("sizing with no processor options: want at least one: %w", ErrInput)
	}
	var rows []SizeRow
	for _, s := range z.Sockets {
		l, err := z.Machine.Latency(s)
		if err != nil {
			return nil, err
		}
		for _, c := range z.CPUs {
			if c.Cores < 1 || !(c.GHz > 0) || c.Price < 0 {
				return nil, fmt.Errorf(
					"processor %q: %d cores, %v GHz, price %v: want positive cores and clock and a price of zero or more: %w",
					c.Name, c.Cores, c.GHz, c.Price, ErrInput)
			}
			per := ThreadTPS(z.Workload, l, c.GHz, Grid{}.Gain(z.SMT))
			r := SizeRow{
				Sockets: s, CPU: c, Cores: s * c.Cores, LatencyNS: l,
				TPSPerCore: per, TotalTPS: TotalTPS(per, c.Cores, s),
				CoresNeeded: int(math.Ceil(z.TargetTPS / per)),
			}
			r.Meets = r.TotalTPS >= z.TargetTPS
			r.LicenseCost = float64(r.Cores) * z.LicensePerCore
			r.HardwareCost = float64(s)*c.Price + z.SystemPrice[s]
			r.TotalCost = r.LicenseCost + r.HardwareCost
			r.CostPerKTPS = r.TotalCost / (r.TotalTPS / 1000)
			rows = append(rows, r)
		}
	}
	slices.SortStableFunc(rows, func(a, b SizeRow) int {
		if a.Meets != b.Meets {
			if a.Meets {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.TotalCost, b.TotalCost), cmp.Compare(a.Sockets, b.Sockets), cmp.Compare(a.Cores, b.Cores))
	})
	return rows, nil
}

// ClockCPUs refuses no processor options (--cpu-cost), and gives each
// option without a clock the clock ghz (--ghz, 0: not given) and names it
// again (DefaultName); without ghz each such option is an error that
// names it.
func ClockCPUs(cpus []CPUOption, ghz float64) error {
	if len(cpus) == 0 {
		return setting.New("cpu-cost", "missing: give at least one processor, e.g. --cpu-cost 'cores=16,ghz=3,price=3000'")
	}
	var errs []error
	for i := range cpus {
		if cpus[i].GHz != 0 {
			continue
		}
		if ghz == 0 {
			errs = append(errs, setting.Errorf("cpu-cost", "%q has no ghz: add ghz=F to it or give --ghz", cpus[i].Name))
			continue
		}
		cpus[i].GHz = ghz
		cpus[i].Name = cpus[i].DefaultName()
	}
	return errors.Join(errs...)
}
