package report_test

// The report's tests render every workload's section, the golden files
// included: the one list of workloads registers them for the whole test
// binary, this package's internal tests too (package report cannot
// import a workload: each imports report).
import _ "github.com/numalab/numalab/internal/workloads"
