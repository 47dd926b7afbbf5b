package hugepages

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/numalab/numalab/internal/owner"
	"github.com/numalab/numalab/internal/sysfs"
)

// markerDir holds a marker per reservation not yet released, below the
// root: the process that made it and its pages. A numalab killed before it
// released (SIGKILL) leaves its marker, and the next Reserve gives its
// pages back. It is in /run, which a reboot empties as it empties the pool.
const markerDir = "run/numalab-hugepages"

// marker is what a reservation's file says.
type marker struct {
	Owner owner.Process `json:"owner"`
	Pages int           `json:"pages"`
}

// lockPool runs f holding the lock on markerDir under root, so that
// numalab processes change the pool and the markers one at a time.
func lockPool(root string, f func(dir string) error) error {
	dir := filepath.Join(root, markerDir)
	switch err := os.MkdirAll(dir, 0o755); {
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%w: making /%s %s", ErrCannot, markerDir, needsRoot)
	case err != nil:
		return fmt.Errorf("%w: %w", ErrCannot, err)
	}
	l, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCannot, err)
	}
	defer l.Close()
	if err := syscall.Flock(int(l.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("%w: locking %s: %w", ErrCannot, dir, err)
	}
	defer syscall.Flock(int(l.Fd()), syscall.LOCK_UN)
	return f(dir)
}

// writeMarker writes r's marker into dir, naming this process.
func (r *Reservation) writeMarker(dir string) error {
	self, err := owner.Self(sysfs.New("/"))
	if err != nil {
		return err
	}
	b, err := json.Marshal(marker{Owner: self, Pages: r.Pages})
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "reservation-*.json")
	if err != nil {
		return fmt.Errorf("writing the reservation's marker: %w", err)
	}
	r.marker = f.Name()
	_, err = f.Write(b)
	if err := errors.Join(err, f.Close()); err != nil {
		return fmt.Errorf("writing the reservation's marker %s: %w", f.Name(), err)
	}
	return nil
}

// reclaim gives back the pages of each reservation in dir whose owner is
// gone (owner.Process.Gone: never one that lives), lowering the pool under
// root by its pages, and removes its marker.
func reclaim(root, dir string) error {
	names, err := filepath.Glob(filepath.Join(dir, "reservation-*.json"))
	if err != nil {
		return err
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			continue // removed meanwhile
		}
		var m marker
		if err := json.Unmarshal(b, &m); err != nil || m.Pages <= 0 {
			continue // being written, or not ours to judge
		}
		if !m.Owner.Gone(sysfs.New("/")) {
			continue
		}
		if err := lower(root, m.Pages); err != nil {
			return err
		}
		if err := os.Remove(name); err != nil {
			return fmt.Errorf("removing %s, whose %d pages were given back: %w", name, m.Pages, err)
		}
	}
	return nil
}

// HeldBy is the pages the reservations process pid made under root hold,
// by their markers: what it has not released. (The pool's size says
// nothing of one process's reservations while other numalab processes
// change it.)
func HeldBy(root string, pid int) (int, error) {
	names, err := filepath.Glob(filepath.Join(root, markerDir, "reservation-*.json"))
	if err != nil {
		return 0, err
	}
	held := 0
	for _, name := range names {
		b, err := os.ReadFile(name)
		if errors.Is(err, os.ErrNotExist) {
			continue // released meanwhile
		}
		if err != nil {
			return 0, err
		}
		var m marker
		if err := json.Unmarshal(b, &m); err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		if m.Owner.PID == pid {
			held += m.Pages
		}
	}
	return held, nil
}
