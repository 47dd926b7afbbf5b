package mariaserver

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

type marker struct {
	Owner  owner.Process `json:"owner"`
	Server owner.Process `json:"server"`
}

// writeMarker writes m into dir, replacing the file whole.
func writeMarker(dir string, m marker) error {
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

func readMarker(dir string) (marker, error) {
	var m marker
	b, err := os.ReadFile(filepath.Join(dir, markerName))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("reading %s: %w", filepath.Join(dir, markerName), err)
	}
	return m, nil
}

// Reclaim removes what managed servers of killed numalab processes left:
// each numalab-mariadb-* directory in tmp whose marker names an owner and
// a server that are both gone (owner.Process.Gone: never one that lives,
// even if its PID was reused). A directory without a marker (being
// created) is left alone. Start calls it before it creates its own
// directory. It returns the directories it removed; an error names the
// ones it could not remove.
func Reclaim(proc sysfs.FS, tmp string) ([]string, error) {
	dirs, err := filepath.Glob(filepath.Join(tmp, "numalab-mariadb-*"))
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, dir := range dirs {
		m, err := readMarker(dir)
		if err != nil || !m.Owner.Gone(proc) || m.Server.PID != 0 && !m.Server.Gone(proc) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("removing %s, left by numalab process %d: %w", dir, m.Owner.PID, err))
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}
