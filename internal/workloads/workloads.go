// Package workloads is the one place that says which workloads numalab
// has, for what composes them: it hands the report each workload's
// section (report.Register), in the order the report shows them, when
// it is imported. cmd/numalab and eval import it; the report itself
// imports no workload.
//
// Adding a workload adds its line here; the report, its HTML, text, CSV
// and JSON writers, and compare stay as they are.
//
// It refuses logic of its own: it only lists.
package workloads

import (
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/workload/insert"
	"github.com/numalab/numalab/internal/workload/null"
	"github.com/numalab/numalab/internal/workload/sqlscript"
	"github.com/numalab/numalab/internal/workload/tpcc"
	"github.com/numalab/numalab/internal/workload/tpch"
	"github.com/numalab/numalab/internal/workload/transtats"
)

// The report's sections by workload, in order: within the JSON, the
// HTML after "Which server", the text and CSV after storage, and the
// findings after the report's own (null's section sits beside the OLTP
// section: report.Workload.BesideOLTP).
func init() {
	for _, w := range []report.Workload{
		tpcc.OLTPReport,    // the OLTP run's warehouses
		transtats.Report,   // the reporting queries' estimated speedup
		tpch.Report,        // TPC-H-derived queries, row against column engines
		null.Report,        // the round-trip floor, beside the OLTP section
		insert.Report,      // concurrent loading into one table
		tpcc.MonitorReport, // what monitoring costs ('run oltp --monitor')
		tpcc.CurveReport,   // throughput and latency against offered load
		tpch.PacedReport,   // paced tpch and reporting runs
		sqlscript.Report,   // the user's own scripts ('run sql')
	} {
		report.Register(w)
	}
}
