package hosts

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/workload/sqlscript"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// Measure is what a run measured, as far as comparing hosts goes: two
// hosts' figures compare only when every field is the same.
type Measure struct {
	Kind       string `json:"kind"`     // result.RunOLTP or result.RunSQL
	Workload   string `json:"workload"` // the cells' workloads, joined
	Engine     string `json:"engine"`
	Warehouses int    `json:"warehouses,omitempty"` // run oltp
	Scale      int    `json:"scale,omitempty"`      // run sql
	// Loop is "closed loop", or what paces the run (a think time, a
	// rate, a load curve, a monitoring run): a paced run measures its
	// pace, not the host.
	Loop string `json:"loop"`
}

// closedLoop is Loop for a run that measures what the host can do.
const closedLoop = "closed loop"

// String is the measure in words: "tpcc-ro on sqlite, 1 warehouse, closed loop".
func (m Measure) String() string {
	s := m.Workload + " on " + m.Engine
	if m.Warehouses > 0 {
		s += fmt.Sprintf(", %d %s", m.Warehouses, plural(m.Warehouses, "warehouse", "warehouses"))
	}
	if m.Scale > 0 {
		s += fmt.Sprintf(", scale %d", m.Scale)
	}
	return s + ", " + m.Loop
}

// Measured reads what run r measured: an OLTP run or a run of the user's
// scripts; other kinds are refused.
func Measured(r *result.Run) (Measure, error) {
	m := Measure{Kind: r.Kind, Loop: closedLoop}
	switch r.Kind {
	case result.RunOLTP:
		var c tpcc.RunConfig
		if err := json.Unmarshal(r.Config, &c); err != nil {
			return m, fmt.Errorf("run %d: reading its configuration: %w", r.ID, err)
		}
		m.Engine, m.Warehouses = c.Engine, c.Warehouses
		switch {
		case c.Curve:
			m.Loop = "a load curve"
		case len(c.Monitor) > 0:
			m.Loop = "a monitoring run"
		case c.Paced():
			m.Loop = "paced"
		}
	case result.RunSQL:
		var c sqlscript.RunConfig
		if err := json.Unmarshal(r.Config, &c); err != nil {
			return m, fmt.Errorf("run %d: reading its configuration: %w", r.ID, err)
		}
		m.Engine, m.Scale = c.Engine, c.Scale
		if c.Paced() {
			m.Loop = "paced"
		}
	default:
		return m, fmt.Errorf("run %d is a %s run: hosts compare OLTP runs ('numalab eval' or 'numalab run oltp') "+
			"or runs of your scripts ('numalab run sql')",
			r.ID, r.Kind)
	}
	cells, err := result.KindCell.All(r)
	if err != nil {
		return m, err
	}
	var ws []string
	for _, c := range cells {
		if !slices.Contains(ws, c.Workload) {
			ws = append(ws, c.Workload)
		}
	}
	slices.Sort(ws)
	m.Workload = strings.Join(ws, "+")
	return m, nil
}

// differ says in words how b differs from a, field by field; "" when
// they are the same.
func differ(a, b Measure) []string {
	var out []string
	add := func(what, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s %s against %s", what, x, y))
		}
	}
	add("kind", a.Kind, b.Kind)
	add("workload", a.Workload, b.Workload)
	add("engine", a.Engine, b.Engine)
	add("warehouses", fmt.Sprint(a.Warehouses), fmt.Sprint(b.Warehouses))
	add("scale", fmt.Sprint(a.Scale), fmt.Sprint(b.Scale))
	add("loop", a.Loop, b.Loop)
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
