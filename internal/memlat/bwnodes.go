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
// each node, --nodes limiting both as in the NUMA matrix. A memory node
// without room for the threads' regions is left out, with a note. On one
// node it measures nothing: the thread sweep is that node's.
func probeBWNodes(ctx context.Context, cfg *Config, t *result.Topology, k kernel, bw *Bandwidth, rep *Report, say func(string)) error {
	if len(t.Nodes) < 2 {
		rep.Notes = append(rep.Notes, "one NUMA node: no read bandwidth per node pair; the thread sweep is that node's")
		return nil
	}
	pages := cfg.Pages[len(cfg.Pages)-1]
	window := time.Duration(cfg.BWWindowMS) * time.Millisecond
	want := func(id int) bool { return len(cfg.Nodes) == 0 || slices.Contains(cfg.Nodes, id) }
	for _, mn := range t.Nodes {
		if !want(mn.ID) || mn.MemBytes == 0 {
			continue
		}
		for _, cn := range t.Nodes {
			cpus := nodeStreamCPUs(t, cn.ID)
			if !want(cn.ID) || len(cpus) == 0 {
				continue
			}
			say(fmt.Sprintf("read bandwidth: node %d's CPUs, memory on node %d", cn.ID, mn.ID))
			need := bwBytes(t, len(cpus))
			usable, err := NodeUsable(cfg.ProcRoot, mn.ID)
			if err != nil {
				return err
			}
			if usable < need {
				rep.Notes = append(rep.Notes, fmt.Sprintf("read bandwidth from node %d's CPUs to node %d not measured: %d threads need %s there, %s is free",
					cn.ID, mn.ID, len(cpus), units.Bytes(need), units.Bytes(usable)))
				continue
			}
			pt, err := nodeBWPoint(ctx, cfg, k, cpus, mn.ID, need, pages, window)
			if err != nil {
				return err
			}
			bw.Nodes = append(bw.Nodes, BWNodePoint{CPUNode: cn.ID, MemNode: mn.ID, Point: pt})
		}
	}
	return nil
}

// nodeBWPoint is the read bandwidth of cpus, each over its own share of
// bytes of memory bound to node.
func nodeBWPoint(ctx context.Context, cfg *Config, k kernel, cpus []int, node int, bytes int64, pages string, window time.Duration) (BWPoint, error) {
	b, err := mapBuffer(cfg.ProcRoot, bytes, pages, node)
	if err != nil {
		return BWPoint{}, err
	}
	defer b.free()
	frac, err := onNode(b.mem, node)
	if err != nil {
		return BWPoint{}, fmt.Errorf("checking where the pages bound to node %d are: %w", node, err)
	}
	if frac < 0.99 {
		return BWPoint{}, fmt.Errorf("binding %s to node %d: only %.1f%% of its pages are there: %w",
			units.Bytes(int64(len(b.mem))), node, 100*frac, ErrCannotBind)
	}
	return bwPoint(ctx, k, OpRead, cpus, b.mem, window)
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
