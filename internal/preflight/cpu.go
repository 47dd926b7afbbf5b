package preflight

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

const cpuDir = "sys/devices/system/cpu"

// firstCPU is the first usable CPU's number, whose cpufreq and cpuidle
// directories stand for all (the kernel sets drivers machine-wide).
func firstCPU(t *result.Topology) int {
	if len(t.CPUs) == 0 {
		return 0
	}
	return t.CPUs[0].ID
}

// checkCPUFreq reports the frequency driver and governors; a governor that
// keeps the clock low or fixed is a warning.
func checkCPUFreq(r *Report, f sysfs.FS, t *result.Topology) {
	c := firstCPU(t)
	driver, err := f.String(fmt.Sprintf("%s/cpu%d/cpufreq/scaling_driver", cpuDir, c))
	if err != nil {
		driver, _ = f.String(fmt.Sprintf("%s/cpufreq/policy%d/scaling_driver", cpuDir, c))
	}
	var govs []string
	for _, cpu := range t.CPUs {
		if cpu.Governor != "" && !slices.Contains(govs, cpu.Governor) {
			govs = append(govs, cpu.Governor)
		}
	}
	slices.Sort(govs)
	switch {
	case driver == "" && len(govs) == 0:
		if t.Hypervisor != "" {
			r.set("cpufreq", "not exposed (the host sets the clock)")
		} else {
			r.set("cpufreq", "not exposed")
		}
		return
	case len(govs) == 0:
		r.set("cpufreq", "driver %s, no governor", driver)
	default:
		r.set("cpufreq", "driver %s, governor %s", cmp.Or(driver, "unknown"), strings.Join(govs, "/"))
	}
	for _, g := range govs {
		switch g {
		case "powersave", "conservative":
			r.warn("governor "+g,
				"the clock stays low or ramps up slowly, so latency, OLTP and query figures read low and vary between runs",
				"`cpupower frequency-set -g performance` (root)",
				Latency, OLTP, Queries, Scaling)
		case "userspace":
			r.warn("governor userspace",
				"the clock is fixed by hand, so every figure holds for that clock only",
				"`cpupower frequency-set -g performance` (root)",
				Latency, OLTP, Queries, Scaling)
		}
	}
}

// checkTurbo reports turbo (Intel) or boost (others). With turbo on, a
// core runs faster alone than with its neighbours busy.
func checkTurbo(r *Report, f sysfs.FS, _ *result.Topology) {
	var on bool
	var file, off string
	if s, err := f.String(cpuDir + "/intel_pstate/no_turbo"); err == nil {
		on, file, off = s == "0", cpuDir+"/intel_pstate/no_turbo", "1"
	} else if s, err := f.String(cpuDir + "/cpufreq/boost"); err == nil {
		on, file, off = s == "1", cpuDir+"/cpufreq/boost", "0"
	} else {
		r.set("turbo", "not exposed")
		return
	}
	if !on {
		r.set("turbo", "off (/%s)", file)
		return
	}
	r.set("turbo", "on (/%s)", file)
	r.warn("turbo on",
		"one busy core clocks higher than many, so per-core figures fall with more streams or DOP partly from the "+
			"clock, not from contention",
		fmt.Sprintf("for flat scaling `echo %s > /%s` (root)", off, file),
		Scaling)
}

// deepIdleUS is the exit latency above which an enabled C-state makes an
// idle core noticeably slow to wake for a transaction.
const deepIdleUS = 50

// checkCStates reports the cpuidle driver, the first CPU's idle states and
// the modules' max_cstate limits; an enabled deep state is a warning.
func checkCStates(r *Report, f sysfs.FS, t *result.Topology) {
	driver, _ := f.String(cpuDir + "/cpuidle/current_driver")
	dir := fmt.Sprintf("%s/cpu%d/cpuidle", cpuDir, firstCPU(t))
	ids, _ := f.Numbered(dir, "state")
	var limits []string
	for _, m := range []string{"intel_idle", "processor"} {
		if s, err := f.String("sys/module/" + m + "/parameters/max_cstate"); err == nil {
			limits = append(limits, m+".max_cstate="+s)
		}
	}
	if driver == "" && len(ids) == 0 {
		r.set("c-states", "not exposed")
		return
	}
	var states []string
	deepName, deepUS := "", -1
	for _, id := range ids {
		d := fmt.Sprintf("%s/state%d/", dir, id)
		name, _ := f.String(d + "name")
		us, err := f.Int(d + "latency")
		if err != nil {
			continue
		}
		if dis, _ := f.String(d + "disable"); dis == "1" {
			states = append(states, fmt.Sprintf("%s %dus (disabled)", name, us))
			continue
		}
		states = append(states, fmt.Sprintf("%s %dus", name, us))
		if us > deepUS {
			deepName, deepUS = name, us
		}
	}
	v := "driver " + cmp.Or(driver, "unknown")
	if len(states) > 0 {
		v += ", states (exit latency) " + strings.Join(states, ", ")
	}
	if len(limits) > 0 {
		v += ", limits " + strings.Join(limits, " ")
	}
	r.set("c-states", "%s", v)
	if deepUS > deepIdleUS {
		r.warn(fmt.Sprintf("C-state %s enabled (exit latency %d us)", deepName, deepUS),
			"an idle core takes that long to wake, so OLTP and query figures at few streams read low and scaling looks "+
				"better than it is",
			fmt.Sprintf("`cpupower idle-set -D %d` (root) disables the deeper states", deepIdleUS),
			OLTP, Queries, Scaling)
	}
}

// checkSMT reports SMT control as the topology read it. SMT off is no
// distortion, only a missing half of the SMT comparison.
func checkSMT(r *Report, _ sysfs.FS, t *result.Topology) {
	r.set("smt", "%s", cmp.Or(t.SMT, "not exposed"))
}

// checkTHP reports transparent huge pages; at never the 2 MiB figures
// cannot be measured.
func checkTHP(r *Report, f sysfs.FS, t *result.Topology) {
	defrag := ""
	if b, err := f.Bytes("sys/kernel/mm/transparent_hugepage/defrag"); err == nil {
		defrag = sysfs.Bracketed(b)
	}
	switch {
	case t.THP == "" && defrag == "":
		r.set("thp", "not exposed")
	case defrag == "":
		r.set("thp", "%s", t.THP)
	default:
		r.set("thp", "%s, defrag %s", cmp.Or(t.THP, "unknown"), defrag)
	}
	if t.THP == "never" {
		r.warn("THP never",
			"numalab asks for 2 MiB pages with madvise and gets 4 KiB ones, so the 2 MiB latency and bandwidth figures "+
				"include TLB misses they should not",
			"`echo madvise > /sys/kernel/mm/transparent_hugepage/enabled` (root), or measure with `probe mem --pages 4k`",
			Latency, Bandwidth)
	}
}

// checkNUMABalancing reports kernel.numa_balancing; on a machine with more
// than one node, balancing moves the pages numalab placed.
func checkNUMABalancing(r *Report, f sysfs.FS, t *result.Topology) {
	mode, err := f.Int("proc/sys/kernel/numa_balancing")
	if err != nil {
		r.set("numa balancing", "not exposed")
		return
	}
	names := map[int]string{0: "off", 1: "on", 2: "memory tiering", 3: "on, with memory tiering"}
	name := cmp.Or(names[mode], "on")
	if mode != 0 && len(t.Nodes) < 2 {
		r.set("numa balancing", "%s (%d; no effect with one node)", name, mode)
		return
	}
	r.set("numa balancing", "%s (%d)", name, mode)
	if mode != 0 {
		r.warn("NUMA balancing "+name,
			"the kernel migrates pages toward the CPUs that touch them, so remote data turns local during a run: local "+
				"and remote figures converge and --data-node placements do not hold",
			"`sysctl kernel.numa_balancing=0` (root)",
			NUMA, Latency, OLTP)
	}
}

// checkInterleave flags a machine whose kernel sees one NUMA node for two
// or more packages: the firmware interleaves memory across the sockets, or
// (on old machines) one controller serves them all. Nodes are counted
// machine-wide (node/online), not as the cpuset allows them.
func checkInterleave(r *Report, f sysfs.FS, t *result.Topology) {
	pk := len(t.Packages)
	nodes := len(t.Nodes)
	if online, err := f.CPUList("sys/devices/system/node/online"); err == nil && len(online) > 0 {
		nodes = len(online)
	}
	if pk < 2 || nodes != 1 {
		r.set("memory nodes", "%d for %d %s", nodes, pk, plural(pk, "package", "packages"))
		return
	}
	r.set("memory nodes", "1 for %d packages (interleaved, or one shared controller)", pk)
	r.warn(fmt.Sprintf("1 NUMA node for %d packages", pk),
		"memory is interleaved across the sockets by the firmware, so every access averages local and remote and latency "+
			"reads between the two, or one controller serves all sockets; either way there is no local/remote comparison",
		"turn node interleaving off in the firmware setup (and boot without numa=off)",
		Latency, NUMA, OLTP)
}

// parse reads rel with a sysfs parser; ok is false when the file is
// missing or does not parse.
func parse[T any](f sysfs.FS, rel string, p func([]byte) (T, error)) (T, bool) {
	var zero T
	b, err := f.Bytes(rel)
	if err != nil {
		return zero, false
	}
	v, err := p(bytes.TrimSpace(b))
	if err != nil {
		return zero, false
	}
	return v, true
}
