package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/units"
)

const probeHelp = `Usage:
  numalab probe mem [flags]   what a dependent memory access costs, from L1 to DRAM
  numalab probe io [flags]    what the storage delivers (see 'numalab probe io --help')

Probes measure the machine, not a database. 'probe mem' chases pointers
through random cycles of cache lines (mmap'd outside the Go heap, on one
pinned thread) and reports:

  - a latency ladder from --min to --max (4 sizes per doubling), in ns and
    in core cycles, for a TLB-local chain (inside 256 KiB windows, like
    multichase) and a fully random one (every access may miss the TLB), with
    4 KiB and/or 2 MiB transparent huge pages (--pages); the page size
    actually obtained is read back from /proc/self/smaps;
  - the plateaus L1, L2, L3 and DRAM found in the ladder, with their knees
    against the cache sizes the topology reports;
  - the core clock, measured with a dependent chain of one-cycle adds;
  - memory-level parallelism: 1..16 interleaved chains, misses in flight;
  - sequential-read bandwidth on 1..all cores, and latency while the other
    cores stream;
  - the NUMA latency matrix: a thread on each node to memory bound to each
    node (1x1 on a one-node machine); when remote reads are no slower than
    local (under 1.05x, as on emulated or interleaved nodes) it is flagged
    "no NUMA effect measured" and is no latency ratio.

Every point is the median of short windows (--window, default 50 ms) in
which the thread was not preempted, with min-max. The largest working set
gets 10 windows (6 with --quick) and is measured again in fresh mappings
later in the probe (--repeats, default 3, 1 with --quick): its DRAM latency
is the lowest clean window of all,
as multichase reports its best sample, since busy neighbours only ever add
latency; the median of each mapping is printed beside it. The run is stored
(--store) with a "memlat.Summary" item that 'numalab model --from-run' reads.
The default probe takes about 70 s here; --quick about 10 s (2 sizes per
doubling from 8 KiB to 512 MiB, the 2 MiB-page TLB-local ladder only, the
other chains at --max only). On a machine shared with busy neighbours the
wall-clock time grows with their load: windows are timed in thread CPU time,
so the numbers hold up better than the duration.

Examples:
  numalab probe mem                       # full probe, stored in ./numalab.db
  numalab probe mem --quick               # the short probe eval uses
  numalab probe mem --pages 2m --max 256m # huge pages only, smaller ladder
  numalab probe mem --nodes 0,1 --json    # matrix over nodes 0 and 1, JSON out
`

func cmdProbe(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprint(e.stdout, probeHelp)
			return nil
		}
		fmt.Fprint(e.stderr, probeHelp)
		return errUsage
	}
	switch args[0] {
	case "mem":
		return cmdProbeMem(ctx, e, args[1:])
	case "io":
		return cmdProbeIO(ctx, e, args[1:])
	}
	fmt.Fprintf(e.stderr, "numalab probe: unknown probe %q (want mem or io)\n\n", args[0])
	fmt.Fprint(e.stderr, probeHelp)
	return errUsage
}

const probeMemHelp = probeHelp + `
Usage of probe mem:
  numalab probe mem [--quick] [--max SIZE] [--pages 4k|2m|both] [--repeats N] [--nodes LIST] [--json] [--store PATH]
`

func cmdProbeMem(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "probe mem", probeMemHelp)
	quick := fs.Bool("quick", false, "short probe (about 10 s): 2 sizes per doubling up to 512m, fewer extras")
	var maxB, minB units.Bytes
	fs.Var(&maxB, "max", "largest working set `size`, e.g. 256m; must pass 4x the last-level cache to reach DRAM (default 1g, 512m with --quick)")
	fs.Var(&minB, "min", "smallest working set `size` (default 4k, 8k with --quick)")
	pages := fs.String("pages", "both", "page size: 4k, 2m (transparent huge pages via madvise) or both")
	nodes := fs.String("nodes", "", "NUMA nodes for the matrix, e.g. 0,1 (default all)")
	samples := rangedInt(fs, "samples", 3, 1, 100, "clean windows per point, 1 to 100")
	window := rangedInt(fs, "window", 50, 1, 10000, "length of one timed window in ms, 1 to 10000")
	repeats := rangedInt(fs, "repeats", 0, 1, 100, "times the largest working set is measured, each after the first in a fresh mapping, 1 to 100 (default 3, 1 with --quick)")
	perDoubling := rangedInt(fs, "per-doubling", 0, 1, 16, "ladder sizes per doubling, 1 to 16 (default 4, 2 with --quick)")
	jsonOut := fs.Bool("json", false, "print the whole report as JSON instead of tables")
	storePath := storeFlag(fs)
	noStore := fs.Bool("no-store", false, "do not store the run")
	done, errs, err := parseChecked(e, fs, args)
	if done {
		return err
	}
	cfg := memlat.DefaultConfig(*quick)
	if maxB != 0 {
		cfg.MaxBytes = int64(maxB)
	}
	if minB != 0 {
		cfg.MinBytes = int64(minB)
	}
	switch *pages {
	case "4k", "2m":
		cfg.Pages = []string{*pages}
	case "both":
	default:
		errs = append(errs, badFlag("pages", *pages, "is not a page size (want 4k, 2m or both)"))
	}
	if *nodes != "" {
		for _, f := range strings.Split(*nodes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 0 {
				errs = append(errs, badFlag("nodes", *nodes, "is not a list of node numbers (want e.g. 0,1)"))
				break
			}
			cfg.Nodes = append(cfg.Nodes, n)
		}
	}
	cfg.Tries += *samples - cfg.Samples // keep the same number of spare windows
	cfg.Samples = *samples
	cfg.WindowMS = *window
	if *repeats > 0 { // 0: not given
		cfg.Repeats = *repeats
	}
	if *perDoubling > 0 { // 0: not given
		cfg.PerDoubling = *perDoubling
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}

	t, err := topo.FromSysfs("/")
	if err != nil {
		return fmt.Errorf("probing memory: %w", err)
	}
	mi, err := memlat.ReadMeminfo("/")
	if err != nil {
		return fmt.Errorf("probing memory: %w", err)
	}
	if err := cfg.Validate(t, mi); err != nil {
		return fmt.Errorf("probing memory: %w", err)
	}

	var rec *recorder
	emit := func(result.Entry) error { return nil }
	if !*noStore {
		rec, err = startRun(ctx, e, *storePath, result.RunProbeMem, cfg)
		if err != nil {
			return err
		}
		emit = rec.Add
	}
	prog := newProgress(e.stderr)
	rep, perr := memlat.Probe(ctx, cfg, t, prog.Say, emit)
	prog.Done()
	if rec != nil {
		if ferr := rec.Finish(perr, rep.Headline()); ferr != nil && perr == nil {
			perr = ferr
		}
	}
	if rep != nil && (perr == nil || len(rep.Ladders) > 0) {
		var werr error
		if *jsonOut {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			werr = enc.Encode(rep)
		} else {
			werr = memlat.WriteText(e.stdout, rep)
		}
		if perr == nil {
			perr = werr
		}
	}
	if perr != nil {
		return fmt.Errorf("probing memory: %w", perr)
	}
	return nil
}
