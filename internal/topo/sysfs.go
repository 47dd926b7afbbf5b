// Package topo finds a machine's topology: packages (sockets), dies, NUMA
// nodes with their memory and distances, physical cores and their SMT
// siblings, caches and which logical CPUs share them, and the settings a
// database engineer checks first (SMT control, transparent huge pages,
// frequency governor, kernel, hypervisor).
//
// It reads Linux's /sys and /proc below a root (FromSysfs), so a captured
// machine reads exactly like a live one, or an hwloc XML export
// (FromHwlocXML) for a machine numalab is not running on. Capture writes
// the files FromSysfs reads into a tarball.
//
// Like hwloc, it describes what this process may use: CPUs that are
// offline or outside the process's cgroup cpuset go to Topology.Offline and
// appear in no core, cache, node or package; NUMA nodes outside the
// cpuset's memory nodes (or offline) are left out, so a CPU whose node is
// left out has CPU.Node -1, and a package whose CPUs are all unusable but
// which holds an allowed node is listed with no CPUs. Packages group CPUs by
// physical_package_id; a cache instance is the set of CPUs most of its
// members report (one corrupt shared_cpu_map does not invent a cache). It
// does no probing: every figure is what the kernel or the XML says.
package topo

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

// Where the kernel keeps CPUs and nodes. Some systems (and captures) have
// the per-CPU directories only under the bus directory.
var (
	cpuBases  = []string{"sys/devices/system/cpu", "sys/bus/cpu/devices"}
	nodeBases = []string{"sys/devices/system/node", "sys/bus/node/devices"}
)

// ErrNoCPUs is returned when a root holds no readable CPU at all (wrong
// directory, or not a Linux tree).
var ErrNoCPUs = errors.New("no CPUs found")

// sysCPU is what sysfs says about one logical CPU.
type sysCPU struct {
	id      int
	dir     string // relative to the root
	hasTopo bool
	pkg     int
	die     int
	core    int
	threads []int // thread_siblings (core_cpus), nil if unknown
	node    int   // NUMA node among those listed (allowed), -1 if none
}

// FromSysfs reads the topology of the Linux machine whose /sys and /proc
// are below root ("/" for this machine). Missing optional files are normal
// (captures keep only some); it fails only when no CPU can be found.
func FromSysfs(root string) (*result.Topology, error) {
	return fromFS(sysfs.New(root))
}

func fromFS(f sysfs.FS) (*result.Topology, error) {
	root := f.Root()
	t := &result.Topology{Source: "sysfs:" + root}

	cpus := findCPUs(f)
	if len(cpus) == 0 {
		return nil, fmt.Errorf("reading the topology under %q: %w in sys/devices/system/cpu (want the root of a "+
			"Linux tree: a directory holding sys/ and proc/)", root, ErrNoCPUs)
	}
	known := make([]int, 0, len(cpus))
	for id := range cpus {
		known = append(known, id)
	}
	slices.Sort(known)
	if present, err := f.CPUList("sys/devices/system/cpu/present"); err == nil && len(present) > 0 {
		known = present
	}

	online := onlineCPUs(f, known, cpus)
	allowedCPUs, allowedMems := cpuset(f)
	var usable []int
	for _, id := range known {
		if !contains(online, id) || (allowedCPUs != nil && !contains(allowedCPUs, id)) {
			t.Offline = append(t.Offline, id)
			continue
		}
		usable = append(usable, id)
	}
	if len(usable) == 0 {
		return nil, fmt.Errorf("reading the topology under %q: %w that are online and allowed (present %s, online %s)",
			root, ErrNoCPUs, sysfs.FormatCPUList(known), sysfs.FormatCPUList(online))
	}

	for _, id := range known {
		if c, ok := cpus[id]; ok {
			readCPUTopology(f, c)
		}
	}

	info := readCPUInfo(f)
	readIdentity(f, t, info, usable)
	buildCores(t, cpus, usable)
	buildNodes(f, t, cpus, usable, allowedMems)
	buildPackages(t, cpus, usable, info)
	buildCaches(f, t, cpus, usable)
	readFrequencies(f, t, cpus)
	return t, nil
}

// findCPUs lists the cpuN directories, preferring sys/devices/system/cpu.
func findCPUs(f sysfs.FS) map[int]*sysCPU {
	cpus := make(map[int]*sysCPU)
	for _, base := range cpuBases {
		ids, _ := f.Numbered(base, "cpu")
		for _, id := range ids {
			if _, ok := cpus[id]; !ok {
				cpus[id] = &sysCPU{id: id, dir: fmt.Sprintf("%s/cpu%d", base, id), node: -1}
			}
		}
	}
	return cpus
}

// onlineCPUs reads cpu/online, or else each CPU's online file (a CPU
// without one, usually cpu0, cannot go offline).
func onlineCPUs(f sysfs.FS, known []int, cpus map[int]*sysCPU) []int {
	if on, err := f.CPUList("sys/devices/system/cpu/online"); err == nil {
		return on
	}
	var on []int
	for _, id := range known {
		c, ok := cpus[id]
		if !ok {
			continue
		}
		if s, err := f.String(c.dir + "/online"); err == nil && s == "0" {
			continue
		}
		on = append(on, id)
	}
	return on
}

// cpuset returns the CPUs and memory nodes this process's cgroup cpuset
// allows, or nil for each that cannot be determined (no cgroup information
// in a capture means no restriction).
func cpuset(f sysfs.FS) (cpus, mems []int) {
	b, err := f.Bytes("proc/mounts")
	if err != nil {
		return nil, nil
	}
	mounts, err := sysfs.ParseMounts(bytes.NewReader(b))
	if err != nil {
		return nil, nil
	}
	v1Path, v2Path := "", ""
	if s, err := f.String("proc/self/cpuset"); err == nil && strings.HasPrefix(s, "/") {
		v1Path, v2Path = s, s
	}
	if b, err := f.Bytes("proc/self/cgroup"); err == nil {
		if ls, err := sysfs.ParseCgroup(bytes.NewReader(b)); err == nil {
			for _, l := range ls {
				if slices.Contains(l.Controllers, "cpuset") {
					v1Path = l.Path
				}
				if l.Hierarchy == 0 && len(l.Controllers) == 0 {
					v2Path = l.Path
				}
			}
		}
	}
	type try struct {
		dir, p     string
		cpus, mems []string
	}
	var v1, v2 []try // cgroup v1 first: where both are mounted, v1 holds the cpuset
	for _, m := range mounts {
		switch {
		case m.Type == "cgroup" && slices.Contains(m.Options, "cpuset") && v1Path != "":
			v1 = append(v1, try{m.Dir, v1Path,
				[]string{"cpuset.effective_cpus", "cpuset.cpus", "cpus"},
				[]string{"cpuset.effective_mems", "cpuset.mems", "mems"}})
		case m.Type == "cgroup2" && v2Path != "":
			v2 = append(v2, try{m.Dir, v2Path,
				[]string{"cpuset.cpus.effective"}, []string{"cpuset.mems.effective"}})
		}
	}
	tries := append(v1, v2...)
	for _, tr := range tries {
		// Walk up from the process's cgroup: inside a container the
		// mount's root is already the container's cgroup, and under v2 a
		// cgroup without the cpuset controller inherits its parent's.
		for p := path.Clean("/" + tr.p); ; p = path.Dir(p) {
			dir := path.Join(tr.dir, p)
			if c, ok := firstCPUList(f, dir, tr.cpus); ok {
				mems, _ := firstCPUList(f, dir, tr.mems)
				if len(mems) == 0 {
					mems = nil
				}
				return c, mems
			}
			if p == "/" {
				break
			}
		}
	}
	return nil, nil
}

func firstCPUList(f sysfs.FS, dir string, names []string) ([]int, bool) {
	for _, n := range names {
		if l, err := f.CPUList(dir + "/" + n); err == nil {
			return l, true
		}
	}
	return nil, false
}

func readCPUTopology(f sysfs.FS, c *sysCPU) {
	d := c.dir + "/topology/"
	c.core = c.id
	if !f.Exists(d) {
		return
	}
	c.hasTopo = true
	if v, err := f.Int(d + "physical_package_id"); err == nil && v >= 0 {
		c.pkg = v
	}
	if v, err := f.Int(d + "die_id"); err == nil && v >= 0 {
		c.die = v
	}
	if v, err := f.Int(d + "core_id"); err == nil && v >= 0 {
		c.core = v
	}
	if ts, err := f.CPUs(d+"thread_siblings", d+"thread_siblings_list"); err == nil && len(ts) > 0 {
		c.threads = ts
	} else if ts, err := f.CPUs(d+"core_cpus", d+"core_cpus_list"); err == nil && len(ts) > 0 {
		c.threads = ts
	}
}

func readCPUInfo(f sysfs.FS) []sysfs.CPUInfo {
	b, err := f.Bytes("proc/cpuinfo")
	if err != nil {
		return nil
	}
	info, _ := sysfs.ParseCPUInfo(bytes.NewReader(b))
	return info
}

// readIdentity fills the header fields: host, kernel, CPU model,
// hypervisor, SMT control and THP.
func readIdentity(f sysfs.FS, t *result.Topology, info []sysfs.CPUInfo, usable []int) {
	t.Host, _ = f.String("proc/sys/kernel/hostname")
	ostype, _ := f.String("proc/sys/kernel/ostype")
	release, _ := f.String("proc/sys/kernel/osrelease")
	if release == "" {
		// "Linux version 6.1.0-18-amd64 (...) ..."
		if b, err := f.Bytes("proc/version"); err == nil {
			if w := strings.Fields(sysfs.FirstLine(b)); len(w) >= 3 && w[1] == "version" {
				ostype, release = w[0], w[2]
			}
		}
	}
	t.Kernel = strings.TrimSpace(cmp.Or(ostype, "Linux") + " " + release)
	if release == "" {
		t.Kernel = ""
	}
	flagged := false
	for _, ci := range info {
		if t.CPUModel == "" && ci.ModelName != "" && contains(usable, ci.Processor) {
			t.CPUModel = ci.ModelName
		}
		flagged = flagged || slices.Contains(ci.Flags, "hypervisor")
	}
	if t.CPUModel == "" {
		for _, ci := range info {
			if ci.ModelName != "" {
				t.CPUModel = ci.ModelName
				break
			}
		}
	}
	var sigs []string
	if f.Root() == "/" {
		// CPUID describes the machine numalab runs on, never a captured tree.
		sigs = hypervisorSignatures()
	}
	t.Hypervisor = hypervisor(f, flagged, sigs)
	t.SMT, _ = f.String("sys/devices/system/cpu/smt/control")
	if b, err := f.Bytes("sys/kernel/mm/transparent_hugepage/enabled"); err == nil {
		t.THP = sysfs.Bracketed(b)
	}
}

// buildCores finds the physical cores among the usable CPUs. A core is a
// CPU with those of its thread siblings that report the same package, die
// and core_id: siblings with other core_ids are separate cores sharing a
// front end (AMD's Bulldozer compute units, which old kernels list as
// siblings), as hwloc counts them. Without sibling masks, CPUs group by
// (package, die, core_id).
func buildCores(t *result.Topology, cpus map[int]*sysCPU, usable []int) {
	for _, id := range usable {
		if cpus[id] == nil { // present but no directory: a core of its own
			cpus[id] = &sysCPU{id: id, core: id, node: -1}
		}
	}
	type key struct{ pkg, die, core int }
	byKey := make(map[key]int)
	coreOf := make(map[int]int)
	for _, id := range usable {
		if _, done := coreOf[id]; done {
			continue
		}
		c := cpus[id]
		k := key{c.pkg, c.die, c.core}
		members := []int{id}
		if c.threads != nil {
			for _, s := range intersect(c.threads, usable) {
				d := cpus[s]
				if _, done := coreOf[s]; s != id && !done && d.threads != nil && (key{d.pkg, d.die, d.core}) == k {
					members = append(members, s)
				}
			}
		} else if i, ok := byKey[k]; ok {
			t.Cores[i].CPUs = append(t.Cores[i].CPUs, id)
			coreOf[id] = i
			continue
		}
		slices.Sort(members)
		i := len(t.Cores)
		if c.threads == nil {
			byKey[k] = i
		}
		t.Cores = append(t.Cores, result.Core{Package: c.pkg, Die: c.die, ID: c.core, CPUs: members})
		for _, m := range members {
			coreOf[m] = i
		}
	}
	newIndex := sortCores(t.Cores)
	for _, id := range usable {
		c := cpus[id]
		t.CPUs = append(t.CPUs, result.CPU{ID: id, Package: c.pkg, Die: c.die, Core: newIndex[coreOf[id]], Node: -1})
	}
}

// buildNodes reads the NUMA nodes (online, and allowed by the cpuset's
// mems), their CPUs, memory and distances. A kernel without NUMA gets one
// node holding every usable CPU and all memory, as hwloc shows it.
func buildNodes(f sysfs.FS, t *result.Topology, cpus map[int]*sysCPU, usable []int, allowedMems []int) {
	var base string
	var ids []int
	for _, b := range nodeBases {
		if ids, _ = f.Numbered(b, "node"); len(ids) > 0 {
			base = b
			break
		}
	}
	if len(ids) == 0 {
		n := result.Node{ID: 0, CPUs: slices.Clone(usable)}
		if b, err := f.Bytes("proc/meminfo"); err == nil {
			if m, err := sysfs.ParseMeminfo(bytes.NewReader(b)); err == nil {
				n.MemBytes = m["MemTotal"]
			}
		}
		t.Nodes = []result.Node{n}
		for i := range t.CPUs {
			t.CPUs[i].Node = 0
		}
		return
	}
	// The distance file has one entry per online node, in node order.
	online := ids
	if on, err := f.CPUList("sys/devices/system/node/online"); err == nil && len(on) > 0 {
		online = on
	}
	rows := make(map[int][]int)
	for _, id := range ids {
		if !contains(online, id) || (allowedMems != nil && !contains(allowedMems, id)) {
			continue
		}
		dir := fmt.Sprintf("%s/node%d/", base, id)
		all, _ := f.CPUs(dir+"cpumap", dir+"cpulist")
		n := result.Node{ID: id, CPUs: intersect(all, usable)}
		if b, err := f.Bytes(dir + "meminfo"); err == nil {
			if m, err := sysfs.ParseMeminfo(bytes.NewReader(b)); err == nil {
				n.MemBytes = m["MemTotal"]
			}
		}
		if s, err := f.String(dir + "distance"); err == nil {
			rows[id] = atois(strings.Fields(s))
		}
		for _, c := range all {
			if sc, ok := cpus[c]; ok {
				sc.node = id
			}
		}
		t.Nodes = append(t.Nodes, n)
	}
	for i := range t.CPUs {
		t.CPUs[i].Node = cpus[t.CPUs[i].ID].node
	}
	// The matrix, when every row is readable and as long as the online list.
	d := make([][]int, len(t.Nodes))
	for i, n := range t.Nodes {
		row := rows[n.ID]
		if len(row) != len(online) {
			return
		}
		d[i] = make([]int, len(t.Nodes))
		for j, m := range t.Nodes {
			d[i][j] = row[slices.Index(online, m.ID)]
		}
	}
	if len(d) > 0 {
		t.Distances = d
	}
}

// buildPackages groups usable CPUs by physical_package_id. A package whose
// CPUs are all unusable still appears (with no CPUs) when it holds an
// allowed NUMA node: its memory is usable.
func buildPackages(t *result.Topology, cpus map[int]*sysCPU, usable []int, info []sysfs.CPUInfo) {
	model := make(map[int]string)
	for _, ci := range info {
		model[ci.Processor] = ci.ModelName
	}
	byID := make(map[int]*result.Package)
	get := func(id int) *result.Package {
		p, ok := byID[id]
		if !ok {
			p = &result.Package{ID: id, CPUs: []int{}}
			byID[id] = p
		}
		return p
	}
	for _, id := range usable {
		p := get(cpus[id].pkg)
		p.CPUs = append(p.CPUs, id)
	}
	for _, n := range t.Nodes {
		if len(n.CPUs) > 0 {
			continue
		}
		// A node without usable CPUs: attach it to the package of its
		// (unusable) CPUs, where sysfs knows them.
		for _, c := range nodeCPUsAll(n.ID, cpus) {
			if cpus[c].hasTopo {
				get(cpus[c].pkg)
				break
			}
		}
	}
	ids := make([]int, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	ordered := make([]int, 0, len(cpus))
	for id := range cpus {
		ordered = append(ordered, id)
	}
	slices.Sort(ordered)
	for _, id := range ids {
		p := byID[id]
		for _, c := range ordered {
			if cpus[c].hasTopo && cpus[c].pkg == id && model[c] != "" {
				p.Model = model[c]
				break
			}
		}
		t.Packages = append(t.Packages, *p)
	}
}

// nodeCPUsAll lists every CPU (usable or not) that sysfs puts on node.
func nodeCPUsAll(node int, cpus map[int]*sysCPU) []int {
	var out []int
	for id, c := range cpus {
		if c.node == node {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}
