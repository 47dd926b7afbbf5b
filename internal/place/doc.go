// Package place turns placement selectors into CPU sets and applies them to
// the calling OS thread: which logical CPUs a stream may run on, where its
// memory is allocated, and where the pages of a memory range actually lie.
//
// Selectors are docs/placement.md's placement vocabulary, comma-separated:
//
//	cpus=0-3,8        these logical CPUs (OS numbers)
//	node=1            the CPUs of NUMA node 1 (node=0,1 or node=0-1: several)
//	cores=4           4 physical cores, filled node by node, then in package
//	                  order, lowest core first, with all their selected threads
//	smt=off           one logical CPU per physical core (its lowest-numbered
//	                  selected sibling); smt=on keeps every sibling
//	data=node0        where data pages should live (a node; no effect on CPUs)
//
// Filters apply in a fixed order whatever the order written: cpus and node
// first, then smt, then cores. "node=1,smt=off,cores=4" is four physical
// cores of node 1, one thread each. The empty selector is every usable CPU.
// [Parse] checks syntax only; [Spec.Resolve] checks the selector against a
// [result.Topology] and says what exists when the machine cannot satisfy it.
//
// The system-call side works on the calling OS thread only: [Pin] and
// [Affinity] set and read its CPU affinity, [SetMemPolicy] and [MemPolicy]
// its NUMA memory policy, [Mbind] the policy of a range of its process's
// memory, [PageNodes] asks move_pages(2) in query mode where pages lie, and
// [MoveFilePages] moves a file's page-cache pages to a node (the way to
// place data on tmpfs, where dropping and re-reading the file does
// nothing). The caller must have called runtime.LockOSThread first, or the
// Go scheduler may run the goroutine on another thread.
//
// Streams take a placement's CPUs in [Placement.Streams] order: one
// logical CPU of every physical core first, then a second sibling of every
// core, and so on, so that "smt=on" with 2 streams means two cores whether
// the machine numbers a core's siblings 0,1 or 0,N.
//
// What it refuses to do: it never moves another process's memory (no
// migrate_pages; move_pages moves only pages this process maps, and pages
// another process also maps stay), and it changes nothing
// outside the calling thread except through the explicit PID functions
// ([PinPID]), which the driver uses for PostgreSQL backends. Reading another
// process's page placement goes through /proc/<pid>/numa_maps
// ([ReadNumaMaps]), which is read-only.
package place
