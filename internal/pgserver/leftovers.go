package pgserver

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/managed"
	"github.com/numalab/numalab/internal/sysfs"
)

// removeSegments removes the shared memory a dead server in dir left: the
// POSIX segments its DSM control segment lists as in use, the control
// segment itself, and the SysV segment postmaster.pid names, if nothing is
// attached to it.
func removeSegments(proc sysfs.FS, dir string, m managed.Marker) error {
	var errs []error
	data := filepath.Join(dir, "data")
	if m.Segment != "" {
		ctl := proc.Path("dev/shm/" + m.Segment)
		if b, err := os.ReadFile(ctl); err == nil {
			for _, h := range dsmHandles(b, dataMajor(data)) {
				p := proc.Path(fmt.Sprintf("dev/shm/PostgreSQL.%d", h))
				if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
					errs = append(errs, err)
				}
			}
		}
		if err := os.Remove(ctl); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if key, id, ok := sysvSegment(data); ok {
		var d unix.SysvShmDesc
		if _, err := unix.SysvShmCtl(id, unix.IPC_STAT, &d); err == nil && uint32(d.Perm.Key) == key && d.Nattch == 0 {
			if _, err := unix.SysvShmCtl(id, unix.IPC_RMID, nil); err != nil {
				errs = append(errs, fmt.Errorf("removing SysV shared memory %d: %w", id, err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("removing the shared memory of the server in %s: %w", dir, err)
	}
	return nil
}

// dsmHandles returns the handles of the segments a PostgreSQL dynamic
// shared memory control segment lists with a reference count, on a 64-bit
// build: a header of magic, nitems and maxitems (12 bytes, padded to 16),
// then items of handle, refcnt, [first_page, npages (PostgreSQL 14 and
// later)], a pointer and a bool.
func dsmHandles(b []byte, major int) []uint32 {
	const magic, header = 0x9a503d32, 16
	u32 := binary.NativeEndian.Uint32
	if len(b) < header || u32(b) != magic {
		return nil
	}
	stride := 24
	if major >= 14 {
		stride = 40
	}
	var hs []uint32
	for i, n := 0, int(u32(b[4:])); i < n; i++ {
		off := header + i*stride
		if off+8 > len(b) {
			break
		}
		if h, refs := u32(b[off:]), u32(b[off+4:]); h != 0 && refs > 0 {
			hs = append(hs, h)
		}
	}
	return hs
}

// dataMajor is the major version in a data directory's PG_VERSION, 0 if
// unreadable.
func dataMajor(data string) int {
	b, err := os.ReadFile(filepath.Join(data, "PG_VERSION"))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// sysvSegment reads the SysV shared memory key and id from line 7 of
// postmaster.pid.
func sysvSegment(data string) (key uint32, id int, ok bool) {
	b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		return 0, 0, false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 7 {
		return 0, 0, false
	}
	f := strings.Fields(lines[6])
	if len(f) != 2 {
		return 0, 0, false
	}
	k, err1 := strconv.ParseUint(f[0], 10, 32)
	i, err2 := strconv.Atoi(f[1])
	return uint32(k), i, err1 == nil && err2 == nil
}

// dsmControl finds the DSM control segment the postmaster pid maps (the
// only /dev/shm/PostgreSQL.* segment a postmaster maps), "" if none.
func dsmControl(proc sysfs.FS, pid int) string {
	b, err := proc.Bytes(fmt.Sprintf("proc/%d/maps", pid))
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 6 && strings.HasPrefix(f[5], "/dev/shm/PostgreSQL.") {
			return strings.TrimPrefix(f[5], "/dev/shm/")
		}
	}
	return ""
}
