package memlat

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/units"
)

// probeBWNodes measures read bandwidth from every CPU of each node (one
// thread per core first, as streamCPUs orders them) to memory bound to
// each node, --nodes limiting both as in the NUMA matrix. Each memory
// node's buffer is mapped once, as large as its largest reader needs, and
// each node's CPUs read their shares of its first part: an emulated
// four-node machine spent 5 s a pair mapping a fresh 512 MiB (20 pairs,
// 115 s of its quick probe). A memory node without room for a node's
// threads' regions is left out for those threads, with a note. On one
// node it measures nothing: the thread sweep is that node's.
func probeBWNodes(ctx context.Context, cfg *Config, t *result.Topology, k kernel, bw *Bandwidth, rep *Report,
	say func(string)) error {
	if len(t.Nodes) < 2 {
		rep.Notes = append(rep.Notes, "one NUMA node: no read bandwidth per node pair; the thread sweep is that node's")
		return nil
	}
	want := func(id int) bool { return len(cfg.Nodes) == 0 || slices.Contains(cfg.Nodes, id) }
	readers := map[int][]int{} // each wanted node with CPUs: its stream CPUs
	var order []int
	for _, cn := range t.Nodes {
		if cpus := nodeStreamCPUs(t, cn.ID); want(cn.ID) && len(cpus) > 0 {
			readers[cn.ID] = cpus
			order = append(order, cn.ID)
		}
	}
	for _, mn := range t.Nodes {
		if !want(mn.ID) || mn.MemBytes == 0 {
			continue
		}
		if err := memNodeBW(ctx, cfg, t, k, mn.ID, order, readers, bw, rep, say); err != nil {
			return err
		}
	}
	return nil
}

// memNodeBW measures read bandwidth from each node of order (its CPUs in
// readers) to memory bound to node, in one buffer mapped there.
func memNodeBW(ctx context.Context, cfg *Config, t *result.Topology, k kernel, node int, order []int,
	readers map[int][]int, bw *Bandwidth, rep *Report, say func(string)) error {
	usable, err := NodeUsable(cfg.ProcRoot, node)
	if err != nil {
		return err
	}
	var fit []int
	var size int64
	for _, cn := range order {
		need := bwBytes(t, len(readers[cn]))
		if usable < need {
			rep.Notes = append(rep.Notes,
				fmt.Sprintf("read bandwidth from node %d's CPUs to node %d not measured: %d threads need %s there, %s is free",
					cn, node, len(readers[cn]), units.Bytes(need), units.Bytes(usable)))
			continue
		}
		fit, size = append(fit, cn), max(size, need)
	}
	if len(fit) == 0 {
		return nil
	}
	b, err := nodeBuffer(cfg, node, size)
	if err != nil {
		return err
	}
	defer b.free()
	window := time.Duration(cfg.BWWindowMS) * time.Millisecond
	for _, cn := range fit {
		cpus := readers[cn]
		say(fmt.Sprintf("read bandwidth: node %d's CPUs, memory on node %d", cn, node))
		pt, err := bwPoint(ctx, k, OpRead, cpus, b.mem[:bwBytes(t, len(cpus))], window)
		if err != nil {
			return err
		}
		bw.Nodes = append(bw.Nodes, BWNodePoint{CPUNode: cn, MemNode: node, Point: pt})
	}
	return nil
}

// nodeBuffer maps bytes of memory bound to node, in the probe's largest
// page size, and checks that its pages are there.
func nodeBuffer(cfg *Config, node int, bytes int64) (*buffer, error) {
	b, err := mapBuffer(cfg.ProcRoot, bytes, cfg.Pages[len(cfg.Pages)-1], node)
	if err != nil {
		return nil, err
	}
	frac, err := onNode(b.mem, node)
	if err != nil {
		b.free()
		return nil, fmt.Errorf("checking where the pages bound to node %d are: %w", node, err)
	}
	if frac < 0.99 {
		b.free()
		return nil, fmt.Errorf("binding %s to node %d: only %.1f%% of its pages are there: %w",
			units.Bytes(int64(len(b.mem))), node, 100*frac, ErrCannotBind)
	}
	return b, nil
}

// nodeStreamCPUs is streamCPUs restricted to node's CPUs.
func nodeStreamCPUs(t *result.Topology, node int) []int {
	var out []int
	for _, c := range streamCPUs(t) {
		if cpu, ok := t.CPU(c); ok && cpu.Node == node {
			out = append(out, c)
		}
	}
	return out
}
