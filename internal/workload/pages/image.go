package pages

import (
	"context"
	"fmt"
	"io"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/sysfs"
)

// image is a database image in anonymous memory of one page size.
type image struct {
	raw, mem []byte
	// HugeShare is the share of the image the kernel backs with huge
	// pages (AnonHugePages in proc/self/smaps), as checked after the copy.
	HugeShare float64
}

const twoMiB = 2 << 20

// newImage maps db's bytes into memory aligned to 2 MiB, advised for huge
// pages or against them before the copy faults the pages in; procRoot is
// where proc/self/smaps is read ("/" but in tests).
func newImage(procRoot string, db []byte, huge bool) (*image, error) {
	size := (len(db) + twoMiB - 1) / twoMiB * twoMiB
	raw, err := unix.Mmap(-1, 0, size+twoMiB, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mapping %d bytes for the database image: %w", size, err)
	}
	off := (twoMiB - int(uintptr(unsafe.Pointer(unsafe.SliceData(raw)))%twoMiB)) % twoMiB
	im := &image{raw: raw, mem: raw[off : off+size]}
	adv := unix.MADV_NOHUGEPAGE
	if huge {
		adv = unix.MADV_HUGEPAGE
	}
	if err := unix.Madvise(im.mem, adv); err != nil {
		im.free()
		return nil, fmt.Errorf("advising the database image's page size: %w", err)
	}
	copy(im.mem, db)
	im.HugeShare = hugeShare(procRoot, uintptr(unsafe.Pointer(unsafe.SliceData(im.mem))), size)
	return im, nil
}

func (im *image) free() { unix.Munmap(im.raw) }

// hugeShare is the share of the mapping at addr, size bytes, backed by
// huge pages (sysfs.ParseSmaps); 0 when it cannot be read.
func hugeShare(procRoot string, addr uintptr, size int) float64 {
	m, err := sysfs.Parse(sysfs.New(procRoot), "proc/self/smaps",
		func(r io.Reader) (sysfs.Mapping, error) { return sysfs.ParseSmaps(r, addr) })
	if err != nil {
		return 0
	}
	return float64(m.AnonHugePages) / float64(size)
}

// imageSides reads cfg.DB into memory twice, once in each page size
// (newImage), each opened by SQLite in place with a tpcc-ro stream
// (openImageConn) or a client of cfg's scripts (scriptImageConn).
func imageSides(ctx context.Context, cfg RunConfig) (*sides, error) {
	db, err := os.ReadFile(cfg.DB)
	if err != nil {
		return nil, fmt.Errorf("reading the database for the page-size points: %w", err)
	}
	sd := &sides{engine: "sqlite", title: "SQLite", workload: cfg.workload(),
		what:  "tpcc-ro (Order-Status and Stock-Level, W=1)",
		where: "the database image read in place in memory of two page sizes"}
	open := openImageConn
	if cfg.Script != nil {
		sd.what = "your scripts (" + sd.workload + ", read-only)"
		if open, err = scriptImageConn(*cfg.Script); err != nil {
			return nil, err
		}
	}
	var undo []func()
	sd.release = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	for i, kind := range pageMemory {
		im, err := newImage("/", db, kind.huge)
		if err != nil {
			sd.release()
			return nil, err
		}
		undo = append(undo, im.free)
		conn, err := open(ctx, im, cfg.CPU)
		if err != nil {
			sd.release()
			return nil, fmt.Errorf("%s: %w", cfg.DB, err)
		}
		undo = append(undo, conn.close)
		sd.s[i] = side{name: kind.name, pages: kind.pages, dataHuge: im.HugeShare, dataBytes: int64(len(im.mem)), conn: conn}
	}
	return sd, nil
}
