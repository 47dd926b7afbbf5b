// Package planest reads an engine's plan with its estimated cost, and sets
// the optimizer's estimated speedup (the plan's cost at the lowest DOP over
// its cost at another) beside a measured one: what run tpch and run report
// both do at every DOP.
package planest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/engine"
)

// Plan is a query's plan as captured for a cell.
type Plan struct {
	// Shape is the plan's operators, one per line, indented by depth,
	// without costs, estimates or worker counts: two plans with the same
	// Shape chose the same operators.
	Shape string `json:"shape"`
	// Cost is the plan's estimated cost in CostUnit; 0 when the engine
	// gives none (SQLite).
	Cost     float64 `json:"cost,omitempty"`
	CostUnit string  `json:"cost_unit,omitempty"`
	// WorkersPlanned and WorkersLaunched are PostgreSQL's: the most any
	// Gather of the plan planned and (EXPLAIN ANALYZE only) launched.
	WorkersPlanned  int `json:"workers_planned,omitempty"`
	WorkersLaunched int `json:"workers_launched,omitempty"`
	// Seconds is PostgreSQL's execution time of the EXPLAIN ANALYZE run;
	// 0 without ANALYZE.
	Seconds float64 `json:"seconds,omitempty"`
}

// Cost units, for the record: what Plan.Cost counts on each engine.
const (
	CostPostgres = "PostgreSQL total cost"
	CostDuckDB   = "DuckDB estimated cardinality summed over operators (DuckDB's EXPLAIN gives no cost)"
	CostMySQL    = "MySQL query_cost"
	CostMariaDB  = "MariaDB query_block cost"
)

// Operators are the distinct operator names of the plan, sorted.
func (p Plan) Operators() []string {
	var out []string
	for _, l := range strings.Split(p.Shape, "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// Explain captures sql's plan on eng at its current DOP: on PostgreSQL
// EXPLAIN (FORMAT JSON), or with analyze EXPLAIN (ANALYZE, TIMING OFF,
// FORMAT JSON), which runs the query once (without a clock read per row)
// and says how many workers it launched and how long it took; on DuckDB
// EXPLAIN (FORMAT JSON); on SQLite EXPLAIN QUERY PLAN, with no cost; on
// MariaDB and MySQL the engine's EXPLAIN, with the cost of EXPLAIN
// FORMAT=JSON where the server gives one (MySQL's query_cost, MariaDB's
// from 11.0; MariaDB 10 gives none). analyze is PostgreSQL's alone.
func Explain(ctx context.Context, eng engine.Engine, sql string, analyze bool) (Plan, error) {
	spec, _ := engine.Lookup(eng.Name())
	switch spec.Plan {
	case engine.PlanPostgresJSON:
		how := "EXPLAIN (FORMAT JSON) "
		if analyze {
			how = "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) "
		}
		var raw []byte
		if err := eng.DB().QueryRowContext(ctx, how+sql).Scan(&raw); err != nil {
			return Plan{}, fmt.Errorf("explaining on postgres: %w", err)
		}
		return pgPlan(raw)
	case engine.PlanDuckJSON:
		var key, raw string
		if err := eng.DB().QueryRowContext(ctx, "EXPLAIN (FORMAT JSON) "+sql).Scan(&key, &raw); err != nil {
			return Plan{}, fmt.Errorf("explaining on duckdb: %w", err)
		}
		return duckPlan([]byte(raw))
	case engine.PlanMySQLJSON:
		var raw []byte
		if err := eng.DB().QueryRowContext(ctx, "EXPLAIN FORMAT=JSON "+sql).Scan(&raw); err != nil {
			return Plan{}, fmt.Errorf("explaining on mariadb: %w", err)
		}
		p, err := textPlan(ctx, eng, sql)
		if err != nil {
			return p, err
		}
		p.Cost, p.CostUnit, err = myCost(raw)
		return p, err
	}
	return textPlan(ctx, eng, sql)
}

// textPlan is the shape of the engine's own EXPLAIN text, with no cost.
func textPlan(ctx context.Context, eng engine.Engine, sql string) (Plan, error) {
	text, err := eng.Explain(ctx, sql)
	if err != nil {
		return Plan{}, err
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		// SQLite's lines carry names of indexes and tables: keep the verb.
		t := strings.TrimSpace(l)
		ind := l[:len(l)-len(strings.TrimLeft(l, " "))]
		if f := strings.Fields(t); len(f) > 0 {
			lines = append(lines, ind+strings.Join(f[:min(len(f), 2)], " "))
		}
	}
	return Plan{Shape: strings.Join(lines, "\n")}, nil
}

type pgNode struct {
	Type     string   `json:"Node Type"`
	Strategy string   `json:"Strategy"`
	Join     string   `json:"Join Type"`
	Parallel bool     `json:"Parallel Aware"`
	Cost     float64  `json:"Total Cost"`
	Planned  int      `json:"Workers Planned"`
	Launched int      `json:"Workers Launched"`
	Plans    []pgNode `json:"Plans"`
}

// myCost reads the cost of a MariaDB or MySQL JSON plan: MySQL's
// query_block.cost_info.query_cost (a string), MariaDB's query_block.cost
// (a number, from 11.0); unit "" when it has neither.
func myCost(raw []byte) (float64, string, error) {
	var top struct {
		Block struct {
			Cost     *float64 `json:"cost"`
			CostInfo struct {
				QueryCost string `json:"query_cost"`
			} `json:"cost_info"`
		} `json:"query_block"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return 0, "", fmt.Errorf("reading mariadb's JSON plan: %w", err)
	}
	if q := top.Block.CostInfo.QueryCost; q != "" {
		v, err := strconv.ParseFloat(q, 64)
		if err != nil {
			return 0, "", fmt.Errorf("reading mysql's query_cost %q: %w", q, err)
		}
		return v, CostMySQL, nil
	}
	if top.Block.Cost != nil {
		return *top.Block.Cost, CostMariaDB, nil
	}
	return 0, "", nil
}

func pgPlan(raw []byte) (Plan, error) {
	var top []struct {
		Plan pgNode  `json:"Plan"`
		Exec float64 `json:"Execution Time"` // ms
	}
	if err := json.Unmarshal(raw, &top); err != nil || len(top) == 0 {
		return Plan{}, fmt.Errorf("reading postgres's JSON plan: %v", err)
	}
	p := Plan{Cost: top[0].Plan.Cost, CostUnit: CostPostgres, Seconds: top[0].Exec / 1000}
	var lines []string
	var walk func(n pgNode, depth int)
	walk = func(n pgNode, depth int) {
		name := n.Type
		if n.Parallel {
			name = "Parallel " + name
		}
		if n.Strategy != "" && n.Strategy != "Plain" {
			name += " (" + n.Strategy + ")"
		}
		if n.Join != "" && n.Join != "Inner" {
			name += " (" + n.Join + ")"
		}
		lines = append(lines, strings.Repeat("  ", depth)+name)
		p.WorkersPlanned = max(p.WorkersPlanned, n.Planned)
		p.WorkersLaunched = max(p.WorkersLaunched, n.Launched)
		for _, c := range n.Plans {
			walk(c, depth+1)
		}
	}
	walk(top[0].Plan, 0)
	p.Shape = strings.Join(lines, "\n")
	return p, nil
}

type duckNode struct {
	Name     string          `json:"name"`
	Extra    json.RawMessage `json:"extra_info"`
	Children []duckNode      `json:"children"`
}

func duckPlan(raw []byte) (Plan, error) {
	var roots []duckNode
	if err := json.Unmarshal(raw, &roots); err != nil {
		return Plan{}, fmt.Errorf("reading duckdb's JSON plan: %w", err)
	}
	p := Plan{CostUnit: CostDuckDB}
	var lines []string
	var walk func(n duckNode, depth int)
	walk = func(n duckNode, depth int) {
		lines = append(lines, strings.Repeat("  ", depth)+strings.TrimSpace(n.Name))
		var extra map[string]any
		if json.Unmarshal(n.Extra, &extra) == nil {
			if s, ok := extra["Estimated Cardinality"].(string); ok {
				if v, err := strconv.ParseFloat(strings.TrimPrefix(s, "~"), 64); err == nil {
					p.Cost += v
				}
			}
		}
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	p.Shape = strings.Join(lines, "\n")
	return p, nil
}

// Changed says which operators one plan has and the other not: removed
// from before, added in after; both empty when the shapes differ only in
// order or nesting.
func Changed(before, after Plan) (removed, added []string) {
	count := func(p Plan) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(p.Shape, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				m[l]++
			}
		}
		return m
	}
	b, a := count(before), count(after)
	for op, n := range b {
		for range max(0, n-a[op]) {
			removed = append(removed, op)
		}
	}
	for op, n := range a {
		for range max(0, n-b[op]) {
			added = append(added, op)
		}
	}
	slices.Sort(removed)
	slices.Sort(added)
	return removed, added
}
