package result

import (
	"fmt"
	"time"
)

// Cell is one measured point of a sweep: one engine and workload run by a
// number of streams on a placement for a fixed duration after a warm-up.
// Package drive fills the measurement; the command that ran it fills the
// labels it alone knows (engine, workload, DOP, data node).
//
// Throughput and latency count only calls that completed inside the
// measured window (by completion time). Latencies are per call, in
// microseconds, from the call's start to its return, of successful calls.
type Cell struct {
	Index     int    `json:"index"`     // position in the sweep, from 0
	Engine    string `json:"engine"`    // "sqlite", "duckdb", "postgres"
	Workload  string `json:"workload"`  // "tpcc-ro", "tpcc-ro-augmented", "transtats", ...
	Streams   int    `json:"streams"`   // concurrent streams (connections)
	DOP       int    `json:"dop"`       // degree of parallelism of one query; 1 when the engine has none
	Placement string `json:"placement"` // the selector as given, e.g. "smt=off"; "" = not pinned
	CPUs      []int  `json:"cpus"`      // logical CPUs the streams were pinned to; empty = not pinned
	// SpreadCPUs is true when stream i was pinned to CPUs[i mod len(CPUs)]
	// alone, false when every stream could run on all of CPUs.
	SpreadCPUs bool `json:"spread_cpus,omitempty"`
	Cores      int  `json:"cores"`     // distinct physical cores in the placement, the divisor of TPSPerCore
	DataNode   int  `json:"data_node"` // NUMA node the data pages were placed on; -1 = not controlled
	Repeat     int  `json:"repeat"`    // repetition of the same point, from 0

	Started     time.Time     `json:"started"`     // wall clock when the warm-up began
	Warmup      time.Duration `json:"warmup_ns"`   // planned warm-up, excluded from every figure
	Duration    time.Duration `json:"duration_ns"` // planned measured window
	Measured    time.Duration `json:"measured_ns"` // measured window actually run: Duration, or less when Interrupted
	Interrupted bool          `json:"interrupted"` // cut short (Ctrl-C, or Cut); every figure covers Measured only
	// Cut, when not empty, says why the cell was cut: streams still in a
	// call a grace period after the window closed (a stuck engine call, a
	// server that stopped answering). Their calls are not counted.
	Cut string `json:"cut,omitempty"`
	// Stopped lists streams that ended before the window did, and why
	// (too many consecutive errors, a tx type out of range).
	Stopped []StreamStop `json:"stopped,omitempty"`

	// Latency runs from each call's start; in an open-loop cell (Pace)
	// from its intended start.
	Total TxStats   `json:"total"` // all transaction types together
	Types []TxStats `json:"types"` // per transaction type, in the workload's order

	TPS        float64 `json:"tps"`          // successful transactions per second of Measured
	TPM        float64 `json:"tpm"`          // TPS × 60
	TPSPerCore float64 `json:"tps_per_core"` // TPS / Cores (0 when Cores is 0)
	// PerSecond counts successful transactions completed in each second of
	// the measured window: element i covers [i s, i+1 s). The last element
	// covers a partial second when Measured is not a whole number of seconds.
	PerSecond []int64 `json:"per_second"`

	// Usage is what the machine did during the measured window; nil when
	// not monitored.
	Usage      *Usage `json:"usage,omitempty"`
	UsageError string `json:"usage_error,omitempty"` // why Usage is missing, when monitoring failed
	// Per successful transaction, from Usage.Perf; 0 when not available.
	CyclesPerTx       float64 `json:"cycles_per_tx,omitempty"`
	InstructionsPerTx float64 `json:"instructions_per_tx,omitempty"`
	LLCMissesPerTx    float64 `json:"llc_misses_per_tx,omitempty"`

	// Trace holds per-call records of the measured window when tracing was
	// asked for, sorted by Start; TraceDropped counts calls not recorded
	// because a stream's trace buffer was full.
	Trace        []TraceEvent `json:"trace,omitempty"`
	TraceDropped int64        `json:"trace_dropped,omitempty"`

	// Pace says how the streams spaced their calls (think time, arrival
	// rate) and what that did; nil for the closed loop with no think time.
	Pace *Pace `json:"pace,omitempty"`
}

// TxStats summarises one transaction type (or all of them) in a cell.
// Latency fields are in microseconds, of successful calls only; quantiles
// come from a log-linear histogram with ≤ 0.05% relative error.
type TxStats struct {
	Name    string  `json:"name"`
	Count   int64   `json:"count"`    // successful calls completed in the window
	Errors  int64   `json:"errors"`   // failed calls completed in the window
	MeanUS  float64 `json:"mean_us"`  // arithmetic mean (exact)
	StdevUS float64 `json:"stdev_us"` // sample standard deviation (exact)
	P50US   float64 `json:"p50_us"`
	P90US   float64 `json:"p90_us"`
	P95US   float64 `json:"p95_us"`
	P99US   float64 `json:"p99_us"`
	P999US  float64 `json:"p99_9_us"`
	MaxUS   float64 `json:"max_us"` // exact
	// FirstError is the text of the first error seen for this type in the
	// window, to tell a dead server from a bad query.
	FirstError string `json:"first_error,omitempty"`
}

// StreamStop says why a stream ended before its cell did.
type StreamStop struct {
	Stream int           `json:"stream"`
	At     time.Duration `json:"at_ns"` // elapsed since the warm-up began
	Reason string        `json:"reason"`
}

// TraceEvent is one call of a traced cell. Offsets are in nanoseconds from
// the start of the measured window (negative for a call that began in the
// warm-up).
type TraceEvent struct {
	StartNS int64 `json:"start_ns"`
	EndNS   int64 `json:"end_ns"`
	Type    int   `json:"type"` // index into Cell.Types
	Stream  int   `json:"stream"`
	OK      bool  `json:"ok"`
}

// Usage is what the machine and the process did during a measured window,
// as package sysmon samples it.
type Usage struct {
	Elapsed time.Duration `json:"elapsed_ns"` // between the two samples
	// CPUs is each logical CPU's time over the window, in percent of the
	// window, sorted by CPU.
	CPUs []CPUUsage `json:"cpus"`
	// CtxSwitchesPerSec is the whole machine's context switches per second
	// (/proc/stat ctxt).
	CtxSwitchesPerSec float64 `json:"ctx_switches_per_s"`
	// Process (all threads, including threads that ended): context switches
	// and CPU time over the window (getrusage RUSAGE_SELF).
	ProcVoluntarySwitches   int64         `json:"proc_voluntary_switches"`
	ProcInvoluntarySwitches int64         `json:"proc_involuntary_switches"`
	ProcUserCPU             time.Duration `json:"proc_user_cpu_ns"`
	ProcSystemCPU           time.Duration `json:"proc_system_cpu_ns"`
	// ProcReadBytes is what this process caused to be read from storage
	// (/proc/self/io read_bytes); page-cache hits do not count.
	ProcReadBytes int64 `json:"proc_read_bytes"`
	// OwnCodeReadBytes is the part of ProcReadBytes that was numalab's own
	// binary read back in (its pages in memory grew by that much): a
	// loaded machine drops code pages, which are not the data.
	OwnCodeReadBytes int64 `json:"own_code_read_bytes,omitempty"`
	// DeviceReadBytes is the bytes read by all physical block devices
	// (/proc/diskstats sectors × 512), whoever asked for them.
	DeviceReadBytes int64         `json:"device_read_bytes"`
	Devices         []DeviceReads `json:"devices,omitempty"` // physical devices that read anything
	// ReadFromDisk is true when the process read from storage during the
	// window more than its own binary's pages (ProcReadBytes >
	// OwnCodeReadBytes): the data was not fully cached.
	ReadFromDisk bool `json:"read_from_disk"`
	Perf         Perf `json:"perf"`
}

// CPUUsage is one logical CPU's time over a window, in percent of it.
type CPUUsage struct {
	CPU       int     `json:"cpu"`
	UserPct   float64 `json:"user_pct"`   // user + nice (guest time included)
	SystemPct float64 `json:"system_pct"` // system + irq + softirq
	StealPct  float64 `json:"steal_pct"`  // taken by the hypervisor for others
	BusyPct   float64 `json:"busy_pct"`   // UserPct + SystemPct
}

// DeviceReads is one block device's reads over a window.
type DeviceReads struct {
	Name      string `json:"name"`
	Reads     int64  `json:"reads"` // read requests completed
	ReadBytes int64  `json:"read_bytes"`
}

// Perf holds hardware counters for the process over a window, or why there
// are none. Counts are scaled for multiplexing when the kernel had to share
// the counters.
type Perf struct {
	Available    bool   `json:"available"`
	Reason       string `json:"reason,omitempty"`    // why not available, e.g. "not available: perf_event_open cycles: no such file or directory (no hardware PMU in this guest?)"
	UserOnly     bool   `json:"user_only,omitempty"` // kernel time excluded (perf_event_paranoid ≥ 2 without privilege)
	Cycles       uint64 `json:"cycles"`
	Instructions uint64 `json:"instructions"`
	LLCMisses    uint64 `json:"llc_misses"` // last-level cache misses (PERF_COUNT_HW_CACHE_MISSES)
}

// BusyPct is the mean busy percentage over the given CPUs (all CPUs when
// cpus is empty); 0 when none of them was sampled.
func (u *Usage) BusyPct(cpus []int) float64 {
	if u == nil {
		return 0
	}
	sum, n := 0.0, 0
	for _, c := range u.CPUs {
		if len(cpus) > 0 && !containsInt(cpus, c.CPU) {
			continue
		}
		sum += c.BusyPct
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// PlacementLabel names the cell's placement for people: the selector, or
// "all CPUs" when pinned without one, or "not pinned".
func (c Cell) PlacementLabel() string {
	switch {
	case c.Placement != "":
		return c.Placement
	case len(c.CPUs) > 0:
		return "all CPUs"
	}
	return "not pinned"
}

// DataLocation says whether the cell's data node is the node of all its
// CPUs in t ("local"), another ("remote"), placed where it cannot be told
// ("placed": no topology or no CPUs), or was not placed ("").
func (c Cell) DataLocation(t *Topology) string {
	if c.DataNode < 0 {
		return ""
	}
	if t == nil || len(c.CPUs) == 0 {
		return "placed"
	}
	for _, id := range c.CPUs {
		cpu, ok := t.CPU(id)
		if !ok || cpu.Node != c.DataNode {
			return "remote"
		}
	}
	return "local"
}

// Series is the series of a sweep the cell belongs to: its placement and
// data location, as label ("smt=off, local data (node 0)") and location
// (as DataLocation).
func (c Cell) Series(t *Topology) (label, data string) {
	data, label = c.DataLocation(t), c.PlacementLabel()
	switch data {
	case "local":
		label += fmt.Sprintf(", local data (node %d)", c.DataNode)
	case "remote":
		label += fmt.Sprintf(", remote data (node %d)", c.DataNode)
	}
	return label, data
}
