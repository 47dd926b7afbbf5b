// Package vmtest boots emulated NUMA machines for the test suite: a QEMU
// guest with the nodes, distances, sockets and SMT threads a test asks for,
// running one command (a numalab binary, a compiled test binary or a shell
// script) and returning its output and exit status.
//
// The guest is a Debian cloud kernel (CONFIG_NUMA=y) and a busybox
// initramfs that carries the command's files and every shared library they
// need. QEMU runs under TCG, so any x86-64 Linux host will do, with no
// hardware virtualisation: QEMU shows the guest the firmware tables (SRAT
// for CPUs and memory per node, SLIT for distances) of the machine asked
// for, and the guest kernel builds its NUMA topology from them.
//
// [Find] finds qemu-system-x86_64 and busybox (Debian's qemu-system-x86
// and busybox-static) and the kernel; as root with apt it fetches the
// kernel package (linux-image-cloud-amd64's dependency) and unpacks it into
// the cache without installing it. The initramfs is built in Go and cached
// on content under the user's cache directory (or /var/tmp).
//
// What it refuses to do: measure. QEMU does not model NUMA distance or
// SMT contention, so a guest proves what numalab sees and does (topology,
// selectors, pinning, page placement, labels), never latency or
// throughput. It runs one guest at a time per host (a lock in the cache
// directory; [Host.RunTogether] boots several under one hold of it, for
// guests that must run at once), and each qemu process is always killed, by its own PID, when
// the guest's kernel has not reached its /init within the boot limit
// (ErrNoBoot, with the kernel's log), when the command's time runs out,
// when the context is cancelled, and on SIGINT or SIGTERM (after which
// the signal takes its usual course). qemu runs at a nice value Favour
// below the test process's where that may be raised (root): a guest's
// eval spends a budget of wall time, which the packages go test runs
// beside would otherwise take.
//
// A machine may have a RAM disk at /data, ext2 (busybox's mke2fs) or ext4
// (the host's mke2fs, from e2fsprogs, carried into the guest).
//
// A guest has no network, unless its machine names a host port
// ([Machine.HostPort]): then it reaches that one port of the host's
// loopback at [HostAddr] (a store or a server the test started on
// 127.0.0.1), and nothing else: QEMU's user network with restrict=on and
// one forward, through the kernel's virtio NIC modules.
package vmtest
