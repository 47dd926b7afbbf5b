package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/units"
)

// ErrNoRoom is wrapped by a refusal to load what the target filesystem
// cannot take: more than the whole filesystem, or so much that less than
// MinFreePercent of it would be left free.
var ErrNoRoom = errors.New("not enough room")

// MinFreePercent is the share of a filesystem a load must leave free.
const MinFreePercent = 5

// Room is the size and free space of the filesystem holding Dir.
type Room struct {
	Dir   string
	Total int64 // bytes
	Free  int64 // bytes an unprivileged writer may still use
}

// RoomAt reads the filesystem holding dir.
func RoomAt(dir string) (Room, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return Room{}, fmt.Errorf("checking free space in %s: %w", dir, err)
	}
	return Room{Dir: dir, Total: int64(st.Blocks) * st.Bsize, Free: int64(st.Bavail) * st.Bsize}, nil
}

// Holds refuses need bytes that are more than the whole filesystem: a
// count no machine with this filesystem could hold.
func (r Room) Holds(need int64) error {
	if need > r.Total {
		return fmt.Errorf("%w: about %s, more than the whole filesystem of %s holds (%s)",
			ErrNoRoom, units.Bytes(need), r.Dir, units.Bytes(r.Total))
	}
	return nil
}

// Check refuses need bytes that the filesystem does not hold, or that
// would leave less than MinFreePercent of it free.
func (r Room) Check(need int64) error {
	if err := r.Holds(need); err != nil {
		return err
	}
	if r.Free-need < r.Total*MinFreePercent/100 {
		return fmt.Errorf("%w: about %s to write in %s, which has %s free of %s: that would leave less than %d%% free "+
			"(free some space, load less, or load elsewhere)",
			ErrNoRoom, units.Bytes(need), r.Dir, units.Bytes(r.Free), units.Bytes(r.Total), MinFreePercent)
	}
	return nil
}

// StorageDir is the directory whose filesystem e writes to: the file's
// directory (SQLite, DuckDB), the managed server's data directory, or ""
// for a server reached by DSN, whose disks numalab cannot see.
func StorageDir(e Engine) string {
	switch e := e.(type) {
	case *pgEngine:
		if e.server == nil {
			return ""
		}
		return e.server.DataDir()
	case *myEngine:
		if e.server == nil {
			return ""
		}
		return e.server.DataDir()
	default:
		if e.Path() == "" {
			return ""
		}
		return filepath.Dir(e.Path())
	}
}

// CheckRoom refuses, before a load, to write need bytes into e when its
// filesystem (StorageDir) would be left with less than MinFreePercent
// free. A server reached by DSN is not checked.
func CheckRoom(e Engine, need int64) error {
	dir := StorageDir(e)
	if dir == "" {
		return nil
	}
	r, err := RoomAt(dir)
	if err != nil {
		return err
	}
	return r.Check(need)
}

// HoldsLoad refuses, before any work, a load of need bytes that could
// never fit where it would go: more than the whole filesystem of the
// file's directory (SQLite, DuckDB) or of a managed server's $TMPDIR
// (a server engine, PostgreSQL or MariaDB, without a DSN). A server
// reached by DSN, or a directory that cannot be read, is not judged here.
func HoldsLoad(server bool, where Options, need int64) error {
	var dir string
	switch {
	case server && where.DSN == "":
		dir = os.TempDir()
	case !server && where.Path != "":
		dir = filepath.Dir(where.Path)
	default:
		return nil
	}
	r, err := RoomAt(dir)
	if err != nil {
		return nil
	}
	return r.Holds(need)
}
