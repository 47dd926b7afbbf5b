package topo

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/numalab/numalab/internal/outfile"
	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

// Load reads this machine (both arguments empty), a captured tree or
// capture archive (sysfsRoot), or an hwloc XML file (hwlocFile), with the
// preflight of the settings it holds (nil for an XML file, which has
// none).
func Load(sysfsRoot, hwlocFile string) (*result.Topology, *preflight.Report, error) {
	switch {
	case hwlocFile != "":
		f, err := os.Open(hwlocFile)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the topology: %w", err)
		}
		defer f.Close()
		t, err := FromHwlocXML(f)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", hwlocFile, err)
		}
		t.Source = "hwloc:" + hwlocFile
		return t, nil, nil
	case sysfsRoot == "":
		return withPreflight("/")
	}
	st, err := os.Stat(sysfsRoot)
	if err != nil {
		return nil, nil, fmt.Errorf(
			"reading the topology: %w (want a directory holding sys/ and proc/, or a capture from 'numalab topo --capture')",
			err)
	}
	if st.IsDir() {
		return withPreflight(sysfsRoot)
	}
	f, err := os.Open(sysfsRoot)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the topology: %w", err)
	}
	defer f.Close()
	dir, err := TempDir("numalab-topo-")
	if err != nil {
		return nil, nil, fmt.Errorf("reading the topology: %w", err)
	}
	defer os.RemoveAll(dir)
	root, err := Extract(f, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", sysfsRoot, err)
	}
	t, pf, err := withPreflight(root)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", sysfsRoot, err)
	}
	t.Source = "capture:" + sysfsRoot
	return t, pf, nil
}

// TempDir makes a new directory to unpack a capture into, as os.MkdirTemp
// does, on the memory filesystem /dev/shm where the machine has one that
// can be written, else in the system's temporary directory. A capture is
// thousands of small files: a 64-CPU machine's (7,773 entries) took 9.6 s
// of system time to unpack and remove on the disk of the machine numalab
// is built on, 0.18 s on /dev/shm.
func TempDir(pattern string) (string, error) {
	if dir, err := os.MkdirTemp("/dev/shm", pattern); err == nil {
		return dir, nil
	}
	return os.MkdirTemp("", pattern)
}

// withPreflight reads the topology below root and judges its settings.
func withPreflight(root string) (*result.Topology, *preflight.Report, error) {
	t, err := FromSysfs(root)
	if err != nil {
		return nil, nil, err
	}
	return t, preflight.Read(sysfs.New(root), t), nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// CaptureFile captures the machine below root ("" for this one) into the
// archive path, named after the file as hwloc names its captures, and
// returns the topology read and the archive's top directory. It writes
// through outfile (opt says what it may replace), so a failed capture
// leaves no half archive and an existing file is replaced only if it is a
// capture.
func CaptureFile(root, path string, opt outfile.Options) (*result.Topology, string, error) {
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
	var t *result.Topology
	err := outfile.Write(path, outfile.Capture, opt, func(w io.Writer) (err error) {
		t, err = Capture(w, root, top)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return t, top, nil
}
