package result

import "time"

// BulkLoad is how a workload's data got into an engine: how fast its main
// table was written, by which bulk path. Reused means the data was found
// complete from an earlier load, whose figures these are.
type BulkLoad struct {
	Engine   string `json:"engine"`
	Workload string `json:"workload"`
	// Method is the engine's bulk path: "COPY" (PostgreSQL), "appender"
	// (DuckDB), "prepared multi-row INSERT in large transactions" (SQLite).
	Method string `json:"method"`
	Rows   int64  `json:"rows"` // rows of the main table
	Rate   int64  `json:"rate"` // workload parameter (transtats: rows per second of tran_begin)
	// Insert is the time to generate and write the main table's rows;
	// RowsPerSecond = Rows / Insert. Total adds keys, other tables and
	// statistics.
	Insert        time.Duration `json:"insert_ns"`
	RowsPerSecond float64       `json:"rows_per_s"`
	Total         time.Duration `json:"total_ns"`
	Reused        bool          `json:"reused"`
	Where         string        `json:"where"` // file, or server with the password hidden
}

// QueryCell is one cell of a reporting sweep: one query run in closed
// loops by Cell.Streams streams at Cell.DOP, with its plan before and
// after the cell.
type QueryCell struct {
	Query string `json:"query"`
	// Cell is what package drive measured; nil when the cell could not
	// start (Error says why).
	Cell  *Cell  `json:"cell,omitempty"`
	Error string `json:"error,omitempty"`
	// QueriesPerHour is successful queries per hour of the measured
	// window, all streams together.
	QueriesPerHour float64 `json:"queries_per_hour"`
	// SpeedupVsDOP1 is QueriesPerHour over that of DOP 1 at the same
	// streams and query; 0 when DOP 1 was not measured.
	SpeedupVsDOP1 float64 `json:"speedup_vs_dop1,omitempty"`
	// PlanBefore is the plan before the cell; PlanAfter after it, with the
	// same parameters, and PlanAfterOther with other ones (P2's t).
	PlanBefore     string `json:"plan_before,omitempty"`
	PlanAfter      string `json:"plan_after,omitempty"`
	PlanAfterOther string `json:"plan_after_other,omitempty"`
	PlanError      string `json:"plan_error,omitempty"`
	// Cost is the estimated cost of the plan before the cell, in
	// CostUnit (planest's units): PostgreSQL's total cost, DuckDB's
	// estimated rows summed over the operators; 0 on SQLite, which gives
	// none.
	Cost     float64 `json:"cost,omitempty"`
	CostUnit string  `json:"cost_unit,omitempty"`
	// Settings are the engine settings of the cell (DOP and what goes
	// with it).
	Settings map[string]string `json:"settings,omitempty"`
	// Workers is where the cell's parallel workers ran (DOP > 1).
	Workers *WorkerCPUs `json:"workers,omitempty"`
	// Hog are the CPUs a busy thread kept busy during the cell (--hog).
	Hog []int `json:"hog_cpus,omitempty"`
}

// PlanFinding is a plan that changed: within a cell (Kind "within-cell"),
// or between a DOP and the one before it at the same streams ("across-dop").
// A finding, not an error: which plan a DOP gets is part of the answer.
type PlanFinding struct {
	Kind    string `json:"kind"`
	Query   string `json:"query"`
	Streams int    `json:"streams"`
	DOP     int    `json:"dop"`
	FromDOP int    `json:"from_dop,omitempty"` // across-dop: the DOP compared with
	Detail  string `json:"detail"`
	Before  string `json:"before"`
	After   string `json:"after"`
}
