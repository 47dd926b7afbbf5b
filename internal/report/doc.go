// Package report turns stored runs into what a person reads: one
// self-contained HTML file (inline CSS and inline SVG charts drawn by
// internal/chart, no script, no network), terminal tables, JSON and CSV,
// and a comparison of two runs of the same kind.
//
// Build computes every figure and the plain-language findings from the
// runs and what was concluded from them, given as values
// (conclusion.Inputs, which assess fills: calib calibrates the model,
// decide takes the purchase); it imports neither, and the writers only
// render a Report. The same runs give the same bytes: map keys are
// sorted, floats have fixed formats, and the only times shown are the
// runs' own.
//
// The report's own sections are the machine, memory, OLTP, reporting
// queries, storage, the model and which server; it imports no workload.
// A workload hands it its section through one interface, Section (HTML,
// text, CSV rows, JSON and findings, drawn with this package's exported
// helpers), registered as a Workload: the run kinds it shows, how to
// tell its runs apart, what its absence means and how to build it.
// internal/workloads registers every workload's, in order.
//
// It measures nothing, opens no files and prints nothing: callers pass
// runs they read from the store and an io.Writer, one of each kind (Kinds),
// or of the kinds a workload tells apart one per variant (null and insert
// runs one per engine, method and key: eval's SQLite floor and PostgreSQL
// matrix are two null runs in one report; tpch runs one per engine, a row
// engine's beside DuckDB's), and of probe-io runs one per span. It refuses to guess: a
// figure that needs a run kind that is absent is reported as absent, and
// every assumption (a remote latency on a one-node machine, a miss fraction
// kept at its default) is written next to the figure it shapes. Each
// quantity has one definition (docs/figures.md): the DRAM latency is the
// model's (Memory.DRAM), cycles use the run's one clock, tps per core
// divides by the cores the streams ran on. A finding or comparison that
// says higher, lower, helped or did not help rests on a test over repeats
// (stats.Compare) and says "cannot tell" when there are too few.
package report
