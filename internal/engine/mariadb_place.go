package engine

// Where a managed MariaDB server's buffer pool lies. mariadbd allocates
// the pool as anonymous memory mappings of innodb_buffer_pool_chunk_size
// each (one mapping when the pool is smaller than a chunk), whose pages
// are placed when first touched: by the server thread that reads a page
// into its frame, under the server's memory policy (Options.MariaDB
// .MemPolicy, a bind to --data-node) or, without one, on the node of the
// CPU it runs on. Prewarm reads the data through a connection whose
// server thread is pinned to the calling thread's CPUs, and then sums the
// pool's mappings in /proc/<mariadbd>/numa_maps per node: unlike
// PostgreSQL's shared memory, mariadbd is one process, so its numa_maps
// counts every page of the pool whoever touched it.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/place"
)

// bufferPoolPlacement is the buffer pool's present pages per node: the
// anonymous mappings of mariadbd (pid) at least chunk bytes long.
func bufferPoolPlacement(root string, pid int, chunk int64) (place.NumaUsage, error) {
	pool, err := anonMappings(root, pid, chunk)
	if err != nil {
		return place.NumaUsage{}, err
	}
	ms, err := place.ReadNumaMaps(root, pid)
	if err != nil {
		return place.NumaUsage{}, err
	}
	var keep []place.NumaMapping
	for _, m := range ms {
		if pool[m.Addr] {
			keep = append(keep, m)
		}
	}
	if len(keep) == 0 {
		return place.NumaUsage{}, fmt.Errorf(
			"finding mariadbd's buffer pool: no anonymous mapping of %d bytes or more in /proc/%d/maps", chunk, pid)
	}
	return place.SumNumaMaps(keep), nil
}

// anonMappings are the start addresses of mariadbd's (pid) anonymous
// mappings in runs of at least min bytes: contiguous mappings count as
// one run, since the kernel splits a chunk's mapping where parts of it
// were advised apart, and a chunk in large pages is a mapping of the
// kernel's pool (/anon_hugepage).
func anonMappings(root string, pid int, min int64) (map[uint64]bool, error) {
	path := filepath.Join(root, "proc", strconv.Itoa(pid), "maps")
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading mariadbd's mappings: %w", err)
	}
	defer f.Close()
	out := map[uint64]bool{}
	var run []uint64 // starts of the current run of contiguous mappings
	var runStart, runEnd uint64
	end := func() {
		if len(run) > 0 && int64(runEnd-runStart) >= min {
			for _, a := range run {
				out[a] = true
			}
		}
		run = nil
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || len(fields) > 5 && fields[5] != "/anon_hugepage" {
			end()
			continue // a file, [heap], [stack] or another named mapping
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil {
			end()
			continue
		}
		if len(run) == 0 || a != runEnd {
			end()
			runStart = a
		}
		run, runEnd = append(run, a), b
	}
	end()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return out, nil
}

// poolPlacement is the managed server's buffer pool placement, or nil
// with a user's server (whose process numalab does not read).
func (e *myEngine) poolPlacement(ctx context.Context) (*place.NumaUsage, error) {
	if e.server == nil {
		return nil, nil
	}
	var pool, chunk int64
	if err := e.db.QueryRowContext(ctx,
		"SELECT @@innodb_buffer_pool_size, @@innodb_buffer_pool_chunk_size").Scan(&pool, &chunk); err != nil {
		return nil, fmt.Errorf("reading the buffer pool's size: %w", err)
	}
	if chunk <= 0 || chunk > pool {
		chunk = pool
	}
	u, err := bufferPoolPlacement("/", e.server.PID(), chunk)
	if err != nil {
		return nil, err
	}
	return &u, nil
}
