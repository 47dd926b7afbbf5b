// Package result holds the types every other numalab package exchanges: the
// machine's topology, runs and what they measured. It does no I/O.
package result

// Topology is a machine as a database engineer needs to see it: which
// logical CPUs share a core, a cache, a NUMA node and a package, and the
// settings that change how memory behaves.
//
// CPU numbers are the operating system's logical CPU numbers (hwloc's P#).
// Slices are sorted: CPUs by ID, Cores by (Package, Die, ID), Nodes by ID,
// Caches by (Level, Type, first CPU).
type Topology struct {
	Source     string    `json:"source"`               // "sysfs:/", "sysfs:testdata/x", "hwloc:file.xml"
	Host       string    `json:"host,omitempty"`       // host name where known
	Kernel     string    `json:"kernel,omitempty"`     // e.g. "Linux 6.1.0-18-amd64"
	CPUModel   string    `json:"cpu_model,omitempty"`  // first model name seen
	Hypervisor string    `json:"hypervisor,omitempty"` // "" on bare metal or unknown; "KVM", "VMware", "yes" when only the cpu flag says so
	SMT        string    `json:"smt,omitempty"`        // /sys/devices/system/cpu/smt/control: on, off, forceoff, notsupported, notimplemented; "" unknown
	THP        string    `json:"thp,omitempty"`        // transparent huge pages: always, madvise, never; "" unknown
	CPUs       []CPU     `json:"cpus"`                 // usable (online and allowed) logical CPUs
	Offline    []int     `json:"offline,omitempty"`    // present but offline, or outside this process's cpuset
	Cores      []Core    `json:"cores"`                // physical cores
	Packages   []Package `json:"packages"`
	Nodes      []Node    `json:"nodes"`
	Caches     []Cache   `json:"caches"`
	// Distances is the NUMA distance matrix as the firmware reports it
	// (ACPI SLIT: 10 = local), indexed by position in Nodes.
	Distances [][]int `json:"distances,omitempty"`
	// LatencyNS is a measured or declared node-to-node memory latency
	// matrix in nanoseconds, indexed like Distances (hwloc XML memory
	// attributes); nil when unknown.
	LatencyNS [][]float64 `json:"latency_ns,omitempty"`
}

// CPU is one logical CPU (a hardware thread, hwloc's PU).
type CPU struct {
	ID       int     `json:"id"`
	Package  int     `json:"package"`            // physical_package_id
	Die      int     `json:"die"`                // die_id, 0 where the machine has no dies
	Core     int     `json:"core"`               // index into Topology.Cores
	Node     int     `json:"node"`               // NUMA node ID; -1 if unknown
	CurMHz   float64 `json:"cur_mhz,omitempty"`  // current frequency, where readable
	MaxMHz   float64 `json:"max_mhz,omitempty"`  // maximum frequency, where readable
	Governor string  `json:"governor,omitempty"` // cpufreq governor, where readable
}

// Core is one physical core with its hardware threads.
type Core struct {
	Package int   `json:"package"`
	Die     int   `json:"die"`
	ID      int   `json:"id"`   // core_id as the OS reports it (unique only within a package)
	CPUs    []int `json:"cpus"` // logical CPUs (SMT siblings), sorted
}

// Package is one socket.
type Package struct {
	ID    int    `json:"id"`
	Model string `json:"model,omitempty"`
	CPUs  []int  `json:"cpus"`
}

// Node is one NUMA node.
type Node struct {
	ID       int   `json:"id"`
	CPUs     []int `json:"cpus"`      // usable CPUs local to the node; may be empty (memory-only node)
	MemBytes int64 `json:"mem_bytes"` // memory local to the node
}

// Cache is one cache instance and the logical CPUs that share it.
type Cache struct {
	Level     int    `json:"level"`
	Type      string `json:"type"` // Data, Instruction, Unified
	SizeBytes int64  `json:"size_bytes"`
	LineBytes int    `json:"line_bytes,omitempty"`
	Ways      int    `json:"ways,omitempty"`
	CPUs      []int  `json:"cpus"`
}

// CPU returns the logical CPU with the given OS number.
func (t *Topology) CPU(id int) (CPU, bool) {
	for _, c := range t.CPUs {
		if c.ID == id {
			return c, true
		}
	}
	return CPU{}, false
}

// NodeIndex returns the position of node id in t.Nodes, or -1.
func (t *Topology) NodeIndex(id int) int {
	for i, n := range t.Nodes {
		if n.ID == id {
			return i
		}
	}
	return -1
}

// ThreadsPerCore is the largest number of hardware threads on any core.
func (t *Topology) ThreadsPerCore() int {
	k := 0
	for _, c := range t.Cores {
		k = max(k, len(c.CPUs))
	}
	return k
}

// LastLevelCache returns the largest data or unified cache's size in bytes
// (0 when no cache is known).
func (t *Topology) LastLevelCache() int64 {
	var best Cache
	for _, c := range t.Caches {
		if c.Type == "Instruction" {
			continue
		}
		if c.Level > best.Level || (c.Level == best.Level && c.SizeBytes > best.SizeBytes) {
			best = c
		}
	}
	return best.SizeBytes
}

// CoresUsed is the divisor of tps per core: the physical cores of t a
// cell's streams run on, not the placement's. Pinned with spread, stream i runs
// on cpus[i mod len(cpus)] alone (as drive pins it), so it counts the
// distinct cores of the CPUs the streams were given; pinned without
// spread, a stream runs on one core at a time, so it is the fewer of the
// streams and the cores of cpus. Not pinned (no cpus) it is 0: unknown.
func (t *Topology) CoresUsed(cpus []int, spread bool, streams int) int {
	if len(cpus) == 0 || streams < 1 {
		return 0
	}
	used := cpus
	if spread {
		used = cpus[:min(streams, len(cpus))]
	}
	cores := map[int]bool{}
	for _, id := range used {
		key := -1 - id // a CPU whose core is unknown counts as a core of its own
		if c, ok := t.CPU(id); ok && c.Core >= 0 {
			key = c.Core
		}
		cores[key] = true
	}
	if spread {
		return len(cores)
	}
	return min(streams, len(cores))
}
