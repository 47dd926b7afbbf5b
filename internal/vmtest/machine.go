package vmtest

import (
	"fmt"
	"strconv"
)

// Machine is the emulated machine a guest boots as. Node i has CPUs
// i·CPUsPerNode to (i+1)·CPUsPerNode − 1; with ThreadsPerCore 2, CPUs 2k
// and 2k+1 are the two threads of one core.
type Machine struct {
	Nodes          int // NUMA nodes with CPUs, ≥ 1
	CPUsPerNode    int // logical CPUs per node, ≥ 1
	MemPerNodeMiB  int // memory per node; 0 means 1024
	Sockets        int // packages the CPUs are split into; 0 means 1
	ThreadsPerCore int // SMT threads per core; 0 means 1
	// Distances between nodes (ACPI SLIT), by pair of node IDs in either
	// order; a pair not given is 21 (the local distance is 10).
	Distances map[[2]int]int
	// MemOnlyMiB > 0 adds node Nodes with this much memory and no CPUs.
	MemOnlyMiB int
	// RAMDiskMiB > 0 gives the command a filesystem on a RAM disk (brd)
	// as its working directory, /data: a page cache that behaves as on a
	// disk. Otherwise it runs in /tmp, which is tmpfs.
	RAMDiskMiB int
	// RAMDiskFS is the RAM disk's filesystem: "" or "ext2" (busybox's
	// mke2fs), or "ext4" (the host's mke2fs, carried into the guest).
	RAMDiskFS string
	// HostPort > 0 gives the guest one way out, to the host's
	// 127.0.0.1:HostPort, which it reaches at [HostAddr]:HostPort (a
	// server on the host, a store). The guest has a virtio NIC, eth0 at
	// 10.0.2.15/24, on QEMU's user network with restrict=on: no route
	// out, no DNS, none of the host's other ports. Each connection the
	// guest opens to HostAddr:HostPort is relayed by a busybox nc that
	// QEMU starts for it on the host. 0: no network at all.
	HostPort int
}

// HostAddr is the address at which a guest reaches the host's
// 127.0.0.1:[Machine.HostPort].
const HostAddr = "10.0.2.100"

// DiskFS is the RAM disk's filesystem.
func (m Machine) DiskFS() string {
	if m.RAMDiskFS == "" {
		return "ext2"
	}
	return m.RAMDiskFS
}

// CPUs is the number of logical CPUs.
func (m Machine) CPUs() int { return m.Nodes * m.CPUsPerNode }

// AllNodes is the number of NUMA nodes, the memory-only one included.
func (m Machine) AllNodes() int {
	if m.MemOnlyMiB > 0 {
		return m.Nodes + 1
	}
	return m.Nodes
}

// Distance is the SLIT distance between nodes i and j.
func (m Machine) Distance(i, j int) int {
	if i == j {
		return 10
	}
	if d, ok := m.Distances[[2]int{i, j}]; ok {
		return d
	}
	if d, ok := m.Distances[[2]int{j, i}]; ok {
		return d
	}
	return 21
}

// String is a short description: "2 nodes × 2 CPUs, 2 sockets, SMT 2,
// memory-only node 2, ext2", or "4 nodes × 1 CPU".
func (m Machine) String() string {
	s := plural(m.Nodes, "node") + " × " + plural(m.CPUsPerNode, "CPU")
	if m.sockets() > 1 {
		s += fmt.Sprintf(", %d sockets", m.sockets())
	}
	if m.threads() > 1 {
		s += fmt.Sprintf(", SMT %d", m.threads())
	}
	if m.MemOnlyMiB > 0 {
		s += fmt.Sprintf(", memory-only node %d", m.Nodes)
	}
	if m.RAMDiskMiB > 0 {
		s += ", " + m.DiskFS()
	}
	if m.HostPort > 0 {
		s += fmt.Sprintf(", host port %d", m.HostPort)
	}
	return s
}

// plural is "1 node", "2 nodes".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func (m Machine) sockets() int { return max(m.Sockets, 1) }
func (m Machine) threads() int { return max(m.ThreadsPerCore, 1) }
func (m Machine) memPerNode() int {
	if m.MemPerNodeMiB > 0 {
		return m.MemPerNodeMiB
	}
	return 1024
}

// check says what is wrong with m, or nil.
func (m Machine) check() error {
	switch {
	case m.Nodes < 1 || m.CPUsPerNode < 1:
		return fmt.Errorf("machine %s: expected at least 1 node and 1 CPU per node", m)
	case m.CPUs()%(m.sockets()*m.threads()) != 0:
		return fmt.Errorf("machine %s: %d CPUs do not split into %d sockets of whole %d-thread cores",
			m, m.CPUs(), m.sockets(), m.threads())
	case m.CPUsPerNode%m.threads() != 0:
		return fmt.Errorf("machine %s: a node's %d CPUs would split a %d-thread core", m, m.CPUsPerNode, m.threads())
	case m.DiskFS() != "ext2" && m.DiskFS() != "ext4":
		return fmt.Errorf("machine %s: RAM disk filesystem %q: expected ext2 or ext4", m, m.RAMDiskFS)
	case m.HostPort < 0 || m.HostPort > 65535:
		return fmt.Errorf("machine %s: host port %d: expected 1-65535, or 0 for no network", m, m.HostPort)
	}
	for p, d := range m.Distances {
		if p[0] == p[1] || p[0] < 0 || p[1] < 0 || p[0] >= m.AllNodes() || p[1] >= m.AllNodes() || d <= 10 || d > 254 {
			return fmt.Errorf("machine %s: distance %v=%d: expected two different nodes below %d and a distance 11-254",
				m, p, d, m.AllNodes())
		}
	}
	return nil
}

// qemuArgs is the qemu-system-x86_64 command line that boots m with
// kernel and initrd, the guest's console on the file console and the
// command's output on the file out; with a host port, busybox relays each
// of the guest's connections to it.
func (m Machine) qemuArgs(kernel, initrd, console, out, busybox string) []string {
	cpu := "max"
	if m.threads() > 1 {
		cpu = "max,vendor=GenuineIntel" // TCG shows SMT siblings only with an Intel vendor
	}
	mem := m.Nodes*m.memPerNode() + m.MemOnlyMiB
	args := []string{
		"-machine", "pc", "-accel", "tcg,thread=multi", "-cpu", cpu,
		"-m", strconv.Itoa(mem) + "M",
		"-smp", fmt.Sprintf("%d,sockets=%d,cores=%d,threads=%d",
			m.CPUs(), m.sockets(), m.CPUs()/m.sockets()/m.threads(), m.threads()),
	}
	for i := range m.AllNodes() {
		size, node := m.memPerNode(), fmt.Sprintf("node,nodeid=%d,memdev=m%d", i, i)
		if i < m.Nodes {
			node += fmt.Sprintf(",cpus=%d-%d", i*m.CPUsPerNode, (i+1)*m.CPUsPerNode-1)
		} else {
			size = m.MemOnlyMiB
		}
		args = append(args, "-object", fmt.Sprintf("memory-backend-ram,id=m%d,size=%dM", i, size), "-numa", node)
		for j := range i {
			args = append(args, "-numa", fmt.Sprintf("dist,src=%d,dst=%d,val=%d", j, i, m.Distance(i, j)))
		}
	}
	if m.HostPort > 0 {
		// restrict=on drops every packet the guest sends but to the
		// guestfwd: QEMU runs the relay command for each connection.
		args = append(args, "-netdev", fmt.Sprintf("user,id=n0,restrict=on,guestfwd=tcp:%s:%d-cmd:%s nc 127.0.0.1 %d",
			HostAddr, m.HostPort, busybox, m.HostPort), "-device", "virtio-net-pci,netdev=n0")
	}
	return append(args,
		"-kernel", kernel, "-initrd", initrd,
		"-append", "console=ttyS0 loglevel=7 panic=-1 mitigations=off tsc=reliable no_timer_check",
		"-display", "none", "-monitor", "none", "-nodefaults", "-no-reboot",
		"-serial", "file:"+console, "-serial", "file:"+out)
}
