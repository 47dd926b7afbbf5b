// Package hugepages reserves 2 MiB pages from the kernel's pool
// (proc/sys/vm/nr_hugepages) for a server that maps its memory in them
// (PostgreSQL's huge_pages=on, MariaDB's large pages), and gives them back.
// It raises the pool by the pages asked for and lowers it by the same
// count when released, so that pages another program reserved meanwhile
// stay reserved. It refuses, saying why, where it cannot: not root, or
// the kernel gave fewer pages than asked (memory short or fragmented);
// it then gives back what it got. It reads and writes only below the root
// it is given ("/" but in tests).
//
// A reservation is marked in /run/numalab-hugepages with the process that
// made it, until released. A numalab killed before it could release
// (SIGKILL; SIGINT and SIGTERM end its work, which releases) leaves its
// pages reserved, and the next Reserve gives them back: those of each
// marker whose process is gone (package owner). Reserve, Release and
// that reclaiming hold a lock on the directory, so numalab processes
// change the pool one at a time.
package hugepages

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PageBytes is the size of the pages this package reserves.
const PageBytes = 2 << 20

// ErrCannot is wrapped when pages cannot be reserved here.
var ErrCannot = errors.New("2 MiB pages cannot be reserved")

// Reservation is pages reserved by Reserve, to Release.
type Reservation struct {
	root, marker string
	// Pages is how many pages were reserved; Before the pool's size
	// before.
	Pages, Before int
}

// Pages is how many 2 MiB pages hold bytes.
func Pages(bytes int64) int { return int((bytes + PageBytes - 1) / PageBytes) }

const poolFile = "proc/sys/vm/nr_hugepages"

// Reserve makes n more pages free in the pool under root. Pages other
// programs hold beyond the pool (surplus, overcommitted) count in the
// kernel's pool size: writing a size converts them first, so the size
// written is what the pool holds, surplus included, plus n. The kernel
// may give fewer than asked; then what it gave is given back and the
// error says how many it had.
// What killed numalab processes reserved is given back first (see the
// package documentation).
func Reserve(root string, n int) (r *Reservation, err error) {
	if n <= 0 {
		return nil, fmt.Errorf("reserving %d 2 MiB pages: not a positive count", n)
	}
	err = lockPool(root, func(dir string) error {
		if err := reclaim(root, dir); err != nil {
			return err
		}
		r, err = reserve(root, n)
		if err == nil {
			if err = r.writeMarker(dir); err != nil {
				err = errors.Join(err, r.release())
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// reserve raises the pool under root by n pages, as Reserve describes.
func reserve(root string, n int) (*Reservation, error) {
	before, err := readPool(root)
	if err != nil {
		return nil, err
	}
	m, err := readMeminfo(root)
	if err != nil {
		return nil, err
	}
	target := max(before, m.total) + n
	if err := writePool(root, target); err != nil {
		return nil, err
	}
	r := &Reservation{root: root, Before: before, Pages: target - before}
	after, err := readMeminfo(root)
	if err != nil {
		return nil, errors.Join(err, r.release())
	}
	if got := after.available() - m.available(); got < n {
		return nil, errors.Join(fmt.Errorf(
			"%w: the kernel made %d of the %d 2 MiB pages asked for free (%d MiB of memory free: short or fragmented)",
			ErrCannot, max(got, 0), n, after.freeKB>>10), r.release())
	}
	return r, nil
}

// Release gives the reserved pages back: the pool is lowered by as many
// as were reserved, and the reservation's marker removed. Safe to call
// twice.
func (r *Reservation) Release() error {
	if r == nil || r.Pages == 0 {
		return nil
	}
	return lockPool(r.root, func(string) error { return r.release() })
}

// release lowers the pool by r's pages and removes its marker, holding
// the lock.
func (r *Reservation) release() error {
	if err := lower(r.root, r.Pages); err != nil {
		return err
	}
	r.Pages = 0
	if r.marker == "" {
		return nil
	}
	if err := os.Remove(r.marker); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the reservation's marker: %w", err)
	}
	r.marker = ""
	return nil
}

// lower lowers the pool under root by n pages, to no fewer than none.
func lower(root string, n int) error {
	now, err := readPool(root)
	if err != nil {
		return err
	}
	return writePool(root, max(now-n, 0))
}

func readPool(root string) (int, error) {
	b, err := os.ReadFile(filepath.Join(root, poolFile))
	if err != nil {
		return 0, fmt.Errorf("%w: reading /%s: %w", ErrCannot, poolFile, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("reading /%s: %q is not a count", poolFile, strings.TrimSpace(string(b)))
	}
	return n, nil
}

// needsRoot says why a reservation needs root.
const needsRoot = "needs root: numalab reserves the pages itself and gives them back after, so run it as root " +
	"(pages reserved beforehand are not taken: they may be another program's)"

func writePool(root string, n int) error {
	err := os.WriteFile(filepath.Join(root, poolFile), []byte(strconv.Itoa(n)+"\n"), 0o644)
	switch {
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%w: writing /%s %s", ErrCannot, poolFile, needsRoot)
	case err != nil:
		return fmt.Errorf("%w: writing /%s: %w", ErrCannot, poolFile, err)
	}
	return nil
}

// meminfo is what Reserve reads of proc/meminfo: the pool's pages (with
// surplus ones), those free and those free but promised, and MemFree.
type meminfo struct {
	total, free, rsvd int
	freeKB            int64
}

// available are the pool's pages free and promised to no mapping.
func (m meminfo) available() int { return m.free - m.rsvd }

func readMeminfo(root string) (meminfo, error) {
	f, err := os.Open(filepath.Join(root, "proc/meminfo"))
	if err != nil {
		return meminfo{}, fmt.Errorf("%w: %w", ErrCannot, err)
	}
	defer f.Close()
	return parseMeminfo(f)
}

// parseMeminfo reads the pool's counts and MemFree from meminfo text.
func parseMeminfo(r io.Reader) (meminfo, error) {
	var m meminfo
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "HugePages_Total:":
			m.total = int(v)
		case "HugePages_Free:":
			m.free = int(v)
		case "HugePages_Rsvd:":
			m.rsvd = int(v)
		case "MemFree:":
			m.freeKB = v
		}
	}
	return m, sc.Err()
}
