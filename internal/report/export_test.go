package report

// The test helpers the tests of the workloads' sections (package
// report_test, which renders through the registered sections) share with
// this package's own.
var (
	WorkloadRuns = workloadRuns
	BuildRuns    = build
	Assessed     = assessed
	RenderAll    = renderAll
	RenderHTML   = renderHTML
	HTMLRow      = htmlRow
	FindingWith  = findingWith
	AbsentOf     = absent
	Near         = near
	Item         = item
)
