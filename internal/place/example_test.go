package place

import "fmt"

// Selectors on a two-socket machine with SMT (siblings n and n+8) and a
// memory-only node 2.
func ExampleResolve() {
	t := twoSocket()
	for _, sel := range []string{"", "node=1", "smt=off", "cores=6,smt=off", "node=1,smt=off,cores=2,data=node2",
		"node=3", "cores=9"} {
		p, err := Resolve(t, sel)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-34q %v\n", sel, p)
	}
	// Output:
	// ""                                 cpus 0-15 (8 cores, nodes 0-1)
	// "node=1"                           cpus 4-7,12-15 (4 cores, node 1)
	// "smt=off"                          cpus 0-7 (8 cores, nodes 0-1)
	// "cores=6,smt=off"                  cpus 0-5 (6 cores, nodes 0-1)
	// "node=1,smt=off,cores=2,data=node2" cpus 4-5 (2 cores, node 1), data on node 2
	// selector "node=3": no NUMA node 3 (this machine has nodes 0-2)
	// selector "cores=9": only 8 physical cores (in node 0: 4, node 1: 4)
}

// Stream order on cores whose siblings are numbered next to each other
// (core k has CPUs 2k and 2k+1): one CPU of every core before any sibling.
func ExamplePlacement_streams() {
	p, err := Resolve(amdStyle(), "smt=on")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.CPUs, p.Streams)
	// Output: [0 1 2 3 4 5 6 7] [0 2 4 6 1 3 5 7]
}
