package managed

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/numalab/numalab/internal/owner"
	"github.com/numalab/numalab/internal/sysfs"
)

// markerName is the file in a managed server's temporary directory that
// names the numalab process owning it and the server.
const markerName = "numalab-owner.json"

// Marker is what a server's directory says of who owns it.
type Marker struct {
	Owner  owner.Process `json:"owner"`
	Server owner.Process `json:"server"`
	// Segment names what the server keeps outside the directory, for
	// Kind.Release (PostgreSQL: its DSM control segment in /dev/shm).
	Segment string `json:"segment,omitempty"`
}

// WriteMarker writes m into dir, replacing the file whole.
func WriteMarker(dir string, m Marker) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, markerName+".new")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("writing the owner marker: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, markerName)); err != nil {
		return fmt.Errorf("writing the owner marker: %w", err)
	}
	return nil
}

// ReadMarker reads the marker in dir.
func ReadMarker(dir string) (Marker, error) {
	var m Marker
	b, err := os.ReadFile(filepath.Join(dir, markerName))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("reading %s: %w", filepath.Join(dir, markerName), err)
	}
	return m, nil
}

// Reclaim removes what managed servers of kind k that killed numalab
// processes left: each k.Prefix* directory in tmp whose marker names an
// owner and a server that are both gone (owner.Process.Gone: never one
// that lives, even if its PID was reused), with what k.Release removes
// outside it. A directory without a marker (being created) is left alone.
// Start calls it before it creates its own directory. It returns the
// directories it removed; an error names the ones it could not remove.
func Reclaim(proc sysfs.FS, tmp string, k Kind) ([]string, error) {
	dirs, err := filepath.Glob(filepath.Join(tmp, k.Prefix+"*"))
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, dir := range dirs {
		m, err := ReadMarker(dir)
		if err != nil || !m.Owner.Gone(proc) || m.Server.PID != 0 && !m.Server.Gone(proc) {
			continue
		}
		if k.Release != nil {
			if err := k.Release(proc, dir, m); err != nil {
				errs = append(errs, err)
			}
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("removing %s, left by numalab process %d: %w", dir, m.Owner.PID, err))
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}
