package preflight

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

// checkHypervisor warns about running in a guest: the hardware numalab
// measures is what the host lets it see.
func checkHypervisor(r *Report, _ sysfs.FS, t *result.Topology) {
	hv := t.Hypervisor
	switch hv {
	case "":
		r.set("hypervisor", "none detected")
		return
	case "yes":
		hv = "present (vendor unknown)"
	}
	r.set("hypervisor", "%s", hv)
	r.warn("hypervisor "+hv,
		"memory latency includes the host's second-level page walk on TLB misses, and the guest's CPUs and nodes "+
			"are what the host maps them to (vCPUs may share physical cores, node distances may be invented), so figures "+
			"describe this guest, not the hardware",
		"measure the hardware on bare metal, or give the guest pinned vCPUs and host huge pages",
		Latency, NUMA, Scaling)
}

// stealShare is the share of CPU time stolen since boot above which a
// guest's throughput figures are noticeably low and noisy.
const stealShare = 0.01

// checkSteal reports the share of CPU time the host gave to others since
// boot (/proc/stat's steal column).
func checkSteal(r *Report, f sysfs.FS, _ *result.Topology) {
	st, err := sysfs.Parse(f, "proc/stat", sysfs.ParseStat)
	if err != nil {
		r.set("steal", "not exposed")
		return
	}
	var steal, total uint64
	for _, c := range st.CPUs {
		steal += c.Steal
		total += c.Total()
	}
	if total == 0 {
		r.set("steal", "no CPU time counted yet")
		return
	}
	share := float64(steal) / float64(total)
	r.set("steal", "%.2f%% of CPU time since boot", 100*share)
	if share >= stealShare {
		r.warn(fmt.Sprintf("steal %.1f%%", 100*share),
			"the host runs other work on these CPUs, so throughput reads low and varies between cells and runs",
			"move the guest to dedicated vCPUs or a quieter host",
			OLTP, Queries, Scaling)
	}
}

const damonDir = "sys/kernel/mm/damon/admin/kdamonds"

// checkDAMON reports running DAMON monitors (the sysfs interface's
// kdamonds, and the reclaim and LRU-sort modules). DAMON samples which
// pages are used and its schemes page out or migrate those it finds cold.
func checkDAMON(r *Report, f sysfs.FS, _ *result.Topology) {
	var on, stop []string
	ids, _ := f.Numbered(damonDir, "")
	for _, id := range ids {
		d := fmt.Sprintf("%s/%d", damonDir, id)
		if s, _ := f.String(d + "/state"); s != "on" {
			continue
		}
		var what []string
		ctxs, _ := f.Numbered(d+"/contexts", "")
		for _, c := range ctxs {
			cd := fmt.Sprintf("%s/contexts/%d", d, c)
			if ops, err := f.String(cd + "/operations"); err == nil {
				what = append(what, ops)
			}
			schemes, _ := f.Numbered(cd+"/schemes", "")
			for _, s := range schemes {
				if a, err := f.String(fmt.Sprintf("%s/schemes/%d/action", cd, s)); err == nil {
					what = append(what, a)
				}
			}
		}
		desc := fmt.Sprintf("kdamond %d", id)
		if len(what) > 0 {
			desc += " (" + strings.Join(what, ", ") + ")"
		}
		on = append(on, desc)
		stop = append(stop, fmt.Sprintf("`echo off > /%s/state`", d))
	}
	for _, m := range []string{"damon_reclaim", "damon_lru_sort"} {
		p := "sys/module/" + m + "/parameters/enabled"
		if s, _ := f.String(p); s == "Y" {
			on = append(on, m)
			stop = append(stop, fmt.Sprintf("`echo N > /%s`", p))
		}
	}
	switch {
	case len(on) > 0:
		r.set("damon", "on: %s", strings.Join(on, "; "))
		r.warn("DAMON on: "+strings.Join(on, "; "),
			"it samples which pages are used, taking CPU time, and its schemes page out or migrate memory it finds "+
				"cold, so memory measured hot can be gone when touched again: latency, OLTP and query figures drift between runs",
			strings.Join(stop, ", ")+" (root)", Latency, OLTP, Queries)
	case f.Exists("sys/kernel/mm/damon"):
		r.set("damon", "present, not running")
	default:
		r.set("damon", "not present")
	}
}

// balloonReporting is the virtio balloon's free page reporting feature
// bit (VIRTIO_BALLOON_F_REPORTING).
const (
	balloonDevice    = "0x0005"
	balloonReporting = 5
)

// checkFreePageReporting looks for a virtio balloon that reports free
// pages to the host: in its feature bits, and in the interrupt of its
// reporting queue.
func checkFreePageReporting(r *Report, f sysfs.FS, _ *result.Topology) {
	var ev []string
	balloon := false
	ids, _ := f.Numbered("sys/bus/virtio/devices", "virtio")
	for _, id := range ids {
		d := fmt.Sprintf("sys/bus/virtio/devices/virtio%d/", id)
		if dev, _ := f.String(d + "device"); dev != balloonDevice {
			continue
		}
		balloon = true
		if bits, ok := parse(f, d+"features", sysfs.ParseFeatures); ok && slices.Contains(bits, balloonReporting) {
			ev = append(ev, fmt.Sprintf("virtio%d balloon feature bit %d", id, balloonReporting))
		}
	}
	if b, err := f.Bytes("proc/interrupts"); err == nil {
		names, _ := sysfs.ParseInterrupts(bytes.NewReader(b))
		for _, n := range names {
			if strings.HasSuffix(n, "-reporting_vq") {
				ev = append(ev, "interrupt "+n)
			}
		}
	}
	switch {
	case len(ev) > 0:
		r.set("free page reporting", "on (%s)", strings.Join(ev, ", "))
		r.warn("free page reporting on",
			"the guest hands freed memory back to the host, which drops it; memory freed and touched again (probe buffers, "+
				"database caches between runs) faults in fresh from the host, maybe from another host node, so latency "+
				"and first-touch figures read high and vary",
			"turn the balloon's free page reporting off in the VM definition (QEMU: -device "+
				"virtio-balloon,free-page-reporting=off)",
			Latency, Bandwidth, OLTP)
	case balloon:
		r.set("free page reporting", "off (balloon without it)")
	default:
		r.set("free page reporting", "off (no virtio balloon)")
	}
}
