package topo

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/numalab/numalab/internal/result"
)

// Load reads this machine (both arguments empty), a captured tree or
// capture archive (sysfsRoot), or an hwloc XML file (hwlocFile).
func Load(sysfsRoot, hwlocFile string) (*result.Topology, error) {
	switch {
	case hwlocFile != "":
		f, err := os.Open(hwlocFile)
		if err != nil {
			return nil, fmt.Errorf("reading the topology: %w", err)
		}
		defer f.Close()
		t, err := FromHwlocXML(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", hwlocFile, err)
		}
		t.Source = "hwloc:" + hwlocFile
		return t, nil
	case sysfsRoot == "":
		return FromSysfs("/")
	}
	st, err := os.Stat(sysfsRoot)
	if err != nil {
		return nil, fmt.Errorf("reading the topology: %w (want a directory holding sys/ and proc/, or a capture from 'numalab topo --capture')", err)
	}
	if st.IsDir() {
		return FromSysfs(sysfsRoot)
	}
	f, err := os.Open(sysfsRoot)
	if err != nil {
		return nil, fmt.Errorf("reading the topology: %w", err)
	}
	defer f.Close()
	dir, err := os.MkdirTemp("", "numalab-topo-")
	if err != nil {
		return nil, fmt.Errorf("reading the topology: %w", err)
	}
	defer os.RemoveAll(dir)
	root, err := Extract(f, dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sysfsRoot, err)
	}
	t, err := FromSysfs(root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sysfsRoot, err)
	}
	t.Source = "capture:" + sysfsRoot
	return t, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// CaptureFile captures the machine below root ("" for this one) into the
// archive path, named after the file as hwloc names its captures, and
// returns the topology read and the archive's top directory. It writes a
// temporary file beside path and renames it into place, so a failed
// capture leaves no half archive.
func CaptureFile(root, path string) (*result.Topology, string, error) {
	if root == "" {
		root = "/"
	}
	// The archive's name is its top directory, as in hwloc's captures.
	top := filepath.Base(path)
	top = strings.TrimSuffix(strings.TrimSuffix(top, ".tgz"), ".tar.gz")
	top = strings.Trim(unsafeName.ReplaceAllString(top, "-"), ".-")
	if top == "" {
		top = "machine"
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".numalab-capture-*")
	if err != nil {
		return nil, "", fmt.Errorf("capturing the topology: %w", err)
	}
	defer os.Remove(f.Name())
	t, err := Capture(f, root, top)
	if err == nil {
		err = f.Chmod(0o644) // a capture is meant to be passed around
	}
	if err == nil {
		err = f.Close()
	} else {
		f.Close()
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return nil, "", fmt.Errorf("capturing the topology into %s: %w", path, err)
	}
	return t, top, nil
}
