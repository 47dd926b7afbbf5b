package preflight

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strings"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
	"github.com/numalab/numalab/internal/units"
)

// cgroupDirs returns the directories that hold controller's files for this
// process, its own cgroup first and then each parent up to the mount's
// root (a limit anywhere on the way applies), relative to f's root; v2
// says whether they are cgroup v2's. A v1 hierarchy with the controller is
// preferred, as the kernel gives a controller to one hierarchy only.
func cgroupDirs(f sysfs.FS, controller string) (dirs []string, v2 bool) {
	mounts, err := sysfs.Parse(f, "proc/mounts", sysfs.ParseMounts)
	if err != nil {
		return nil, false
	}
	lines, err := sysfs.Parse(f, "proc/self/cgroup", sysfs.ParseCgroup)
	if err != nil {
		return nil, false
	}
	walk := func(mount, p string) []string {
		var out []string
		for p = path.Clean("/" + p); ; p = path.Dir(p) {
			out = append(out, strings.TrimPrefix(path.Join(mount, p), "/"))
			if p == "/" {
				return out
			}
		}
	}
	for _, l := range lines {
		if !slices.Contains(l.Controllers, controller) {
			continue
		}
		for _, m := range mounts {
			if m.Type == "cgroup" && slices.Contains(m.Options, controller) {
				return walk(m.Dir, l.Path), false
			}
		}
	}
	for _, l := range lines {
		if l.Hierarchy != 0 || len(l.Controllers) != 0 {
			continue
		}
		for _, m := range mounts {
			if m.Type == "cgroup2" {
				return walk(m.Dir, l.Path), true
			}
		}
	}
	return nil, false
}

// checkCgroup reports the CPU, memory and cpuset limits of this process's
// cgroups. A CPU limit below the usable CPUs throttles streams; a memory
// limit below the machine's memory evicts databases and the page cache.
func checkCgroup(r *Report, f sysfs.FS, t *result.Topology) {
	checkCgroupCPU(r, f, t)
	checkCgroupMemory(r, f)
	checkCpuset(r, f, t)
}

func checkCgroupCPU(r *Report, f sysfs.FS, t *result.Topology) {
	dirs, v2 := cgroupDirs(f, "cpu")
	limit, where := math.Inf(1), ""
	for _, d := range dirs {
		var cpus float64
		if v2 {
			m, ok := parse(f, d+"/cpu.max", sysfs.ParseCPUMax)
			if !ok || m.QuotaUS < 0 {
				continue
			}
			cpus = float64(m.QuotaUS) / float64(m.PeriodUS)
		} else {
			q, ok := parse(f, d+"/cpu.cfs_quota_us", sysfs.ParseLimit)
			p, err := f.Int(d + "/cpu.cfs_period_us")
			if !ok || q < 0 || err != nil || p <= 0 {
				continue
			}
			cpus = float64(q) / float64(p)
		}
		if cpus < limit {
			limit, where = cpus, d
		}
	}
	switch {
	case dirs == nil:
		r.set("cgroup cpu", "not exposed")
		return
	case where == "":
		r.set("cgroup cpu", "no limit")
		return
	}
	file := "cpu.cfs_quota_us"
	if v2 {
		file = "cpu.max"
	}
	r.set("cgroup cpu", "%.2f CPUs (/%s/%s)", limit, where, file)
	if n := len(t.CPUs); limit < float64(n) {
		r.warn(fmt.Sprintf("cgroup CPU limit %.2f CPUs of %d", limit, n),
			"streams beyond the limit are throttled in bursts, so throughput stops scaling at the limit and latencies "+
				"include throttling stalls",
			fmt.Sprintf("raise or remove the limit in /%s/%s (or run numalab outside this cgroup)", where, file),
			OLTP, Queries, Scaling)
	}
}

func checkCgroupMemory(r *Report, f sysfs.FS) {
	dirs, v2 := cgroupDirs(f, "memory")
	file := "memory.limit_in_bytes"
	if v2 {
		file = "memory.max"
	}
	total := int64(math.MaxInt64)
	if mi, err := sysfs.Parse(f, "proc/meminfo", sysfs.ParseMeminfo); err == nil && mi["MemTotal"] > 0 {
		total = mi["MemTotal"]
	}
	limit, where := total, ""
	for _, d := range dirs {
		v, ok := parse(f, d+"/"+file, sysfs.ParseLimit)
		if ok && v >= 0 && v < limit {
			limit, where = v, d
		}
	}
	switch {
	case dirs == nil:
		r.set("cgroup memory", "not exposed")
		return
	case where == "":
		r.set("cgroup memory", "no limit")
		return
	}
	r.set("cgroup memory", "%v (/%s/%s)", units.Bytes(limit), where, file)
	r.warn(fmt.Sprintf("cgroup memory limit %v of %v", units.Bytes(limit), units.Bytes(total)),
		"databases and page cache beyond the limit are reclaimed, so runs whose data does not fit read from storage "+
			"and measure it, not memory",
		fmt.Sprintf("raise or remove the limit in /%s/%s (or run numalab outside this cgroup)", where, file),
		OLTP, Queries)
}

// checkCpuset reports the online CPUs this process may not use: the
// cgroup cpuset (or affinity) the topology already honours, so this is no
// distortion, only a record of it.
func checkCpuset(r *Report, f sysfs.FS, t *result.Topology) {
	online, err := f.CPUList(cpuDir + "/online")
	if err != nil {
		r.set("cgroup cpuset", "not exposed")
		return
	}
	usable := make([]int, len(t.CPUs))
	for i, c := range t.CPUs {
		usable[i] = c.ID
	}
	slices.Sort(usable)
	if slices.Equal(usable, online) {
		r.set("cgroup cpuset", "all online CPUs (%s)", sysfs.FormatCPUList(online))
		return
	}
	r.set("cgroup cpuset", "CPUs %s of online %s", sysfs.FormatCPUList(usable), sysfs.FormatCPUList(online))
}
