package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// mountTmpfs mounts a tmpfs with opts on a new directory, or skips the
// test with the reason it cannot.
func mountTmpfs(t *testing.T, opts string) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		t.Skipf("cannot mount a tmpfs here (needs root in a mount namespace that allows it): %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}

// TestFullDiskIsNamed: a store on a full file system is refused as a
// full file system, never as "not a numalab store", by every opening
// (writing, reading), whether the disk filled before the store's header
// was written or after.
func TestFullDiskIsNamed(t *testing.T) {
	for _, room := range []int{0, 4 << 10, 12 << 10} {
		dir := mountTmpfs(t, "size=64k")
		if err := os.WriteFile(filepath.Join(dir, "fill"), make([]byte, 64<<10-room), 0o644); err != nil &&
			!errors.Is(err, unix.ENOSPC) {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "s.db")
		for _, o := range []struct {
			name string
			open func(string) (*Store, error)
		}{{"Open", Open}, {"Open again", Open}, {"OpenReadOnly", OpenReadOnly}} {
			name, open := o.name, o.open
			s, err := open(path)
			if err == nil {
				s.Close()
				if name == "OpenReadOnly" {
					continue // nothing was written: nothing to refuse
				}
				t.Fatalf("%d bytes free: %s succeeded on a full file system", room, name)
			}
			if errors.Is(err, ErrNoStore) {
				continue // nothing was stored, and reading says so
			}
			if errors.Is(err, ErrNotStore) || !strings.Contains(err.Error(), "is full") {
				t.Errorf("%d bytes free: %s = %v, want the full file system named", room, name, err)
			}
		}
	}
}

// TestUnwritableDirIsNamed: a store in a directory numalab cannot write is
// refused naming the directory and why, not as "no such file or directory".
func TestUnwritableDirIsNamed(t *testing.T) {
	dir := mountTmpfs(t, "ro,size=64k")
	_, err := Open(filepath.Join(dir, "s.db"))
	if err == nil || !errors.Is(err, unix.EROFS) || !strings.Contains(err.Error(), "directory "+dir+" cannot be written") {
		t.Errorf("Open in a read-only directory = %v, want the directory named as read-only", err)
	}
	_, err = Open(filepath.Join(t.TempDir(), "missing", "s.db"))
	if err == nil || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "its directory") {
		t.Errorf("Open in a missing directory = %v, want the directory named as missing", err)
	}
}

// fsImmutableFL is FS_IMMUTABLE_FL of linux/fs.h, the flag chattr +i
// sets (golang.org/x/sys does not name it).
const fsImmutableFL = 0x10

// setImmutable sets or clears path's immutable flag (chattr +i), or skips
// the test with the reason it cannot.
func setImmutable(t *testing.T, path string, on bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags, err := unix.IoctlGetInt(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err == nil {
		if on {
			flags |= fsImmutableFL
		} else {
			flags &^= fsImmutableFL
		}
		err = unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, flags)
	}
	if err != nil && on {
		t.Skipf("cannot make %s immutable here (needs CAP_LINUX_IMMUTABLE and a file system with the flag): %v", path, err)
	}
	if err != nil {
		t.Errorf("making %s mutable again: %v", path, err)
	}
}

// TestStoreStopsAcceptingWrites: a store whose WAL index is made
// immutable during a run (a write through SQLite's shared mapping of it
// would end the process with SIGBUS) refuses the next item and its close
// with an error naming the file, and what was stored before stays.
func TestStoreStopsAcceptingWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r := newRun("probe-mem")
	if err := s.Begin(r); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(r.ID, pointKind.Of(map[string]int{"i": 1})); err != nil {
		t.Fatal(err)
	}
	setImmutable(t, path+"-shm", true)
	defer setImmutable(t, path+"-shm", false)
	if _, err := s.Add(r.ID, pointKind.Of(map[string]int{"i": 2})); err == nil ||
		!strings.Contains(err.Error(), "stopped accepting writes: s.db-shm") {
		t.Errorf("Add to an immutable store: %v; want it refused, naming s.db-shm", err)
	}
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "stopped accepting writes") {
		t.Errorf("Close of an immutable store: %v; want it refused", err)
	}
	setImmutable(t, path+"-shm", false)
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	got, err := ro.Get(r.ID)
	if err != nil || len(got.Results) != 1 {
		t.Fatalf("the run after: %v, %d items; want the one stored before", err, len(got.Results))
	}
}
