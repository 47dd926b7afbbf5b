// Package sysfs reads the files Linux publishes under /sys and /proc, below
// a root directory: "/" on the machine itself, or a captured machine's tree
// in tests and for `numalab topo --sysfs DIR`.
//
// Every read of /sys or /proc in numalab goes through it. It knows the
// file formats (CPU lists, hex CPU masks, cache sizes, meminfo, mounts,
// cgroup, cgroup limits, cpuinfo, stat, interrupts, diskstats, virtio
// features; a process's io, smaps, stat, name, command line, executable,
// threads and children) and nothing about what the files mean together;
// packages topo, preflight, sysmon, memlat, place, perfctr and engine use
// them. Readers take a path relative to the root; parsers
// take bytes or an io.Reader and are tested without files. A missing file
// is an error that satisfies errors.Is(err, fs.ErrNotExist), so callers
// can treat optional files as optional.
package sysfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ErrFormat is wrapped by every error about a file's contents (as opposed
// to the file's absence).
var ErrFormat = errors.New("unexpected format")

// FS reads files below a root directory.
type FS struct {
	root string
	rec  *Recorder
}

// New returns an FS rooted at root ("/" for the running machine).
func New(root string) FS {
	if root == "" {
		root = "/"
	}
	return FS{root: root}
}

// Root is the directory the FS reads below.
func (f FS) Root() string { return f.root }

// Path joins rel (e.g. "sys/devices/system/cpu/online") to the root.
func (f FS) Path(rel string) string {
	return filepath.Join(f.root, filepath.FromSlash(strings.TrimPrefix(rel, "/")))
}

// Bytes returns the contents of rel.
func (f FS) Bytes(rel string) ([]byte, error) {
	b, err := os.ReadFile(f.Path(rel))
	if err == nil && f.rec != nil {
		f.rec.file(rel, b)
	}
	return b, err
}

// Parse reads rel below f's root and parses it with parse; errors name
// the file.
func Parse[T any](f FS, rel string, parse func(io.Reader) (T, error)) (T, error) {
	var zero T
	b, err := f.Bytes(rel)
	if err != nil {
		return zero, fmt.Errorf("reading %s: %w", rel, err)
	}
	v, err := parse(bytes.NewReader(b))
	if err != nil {
		return zero, fmt.Errorf("reading %s under %s: %w", rel, f.root, err)
	}
	return v, nil
}

// ReadDir lists directory rel.
func (f FS) ReadDir(rel string) ([]fs.DirEntry, error) {
	return os.ReadDir(f.Path(rel))
}

// Glob returns the paths below the root, relative to it, that match
// pattern (path.Match syntax, relative to the root).
func (f FS) Glob(pattern string) ([]string, error) {
	full, err := filepath.Glob(f.Path(pattern))
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(full))
	for _, p := range full {
		rel, err := filepath.Rel(f.root, p)
		if err != nil {
			return nil, err
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out, nil
}

// Recording returns an FS that reads like f and also notes in r every file
// it reads and every numbered directory it lists, so exactly what a reader
// used can be captured.
func (f FS) Recording(r *Recorder) FS {
	f.rec = r
	return f
}

// Recorder collects what a recording FS read.
type Recorder struct {
	mu    sync.Mutex
	files map[string][]byte
	dirs  map[string]bool
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{files: make(map[string][]byte), dirs: make(map[string]bool)}
}

func clean(rel string) string {
	return path.Clean(strings.TrimPrefix(filepath.ToSlash(rel), "/"))
}

func (r *Recorder) file(rel string, b []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.files[clean(rel)] = slices.Clone(b)
}

func (r *Recorder) dir(rel string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dirs[clean(rel)] = true
}

// Files returns the files read, by path relative to the root.
func (r *Recorder) Files() map[string][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.files)
}

// Dirs returns the numbered directories listed (cpu3, node0, ...), sorted.
func (r *Recorder) Dirs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.dirs))
}

// String returns the contents of rel with surrounding white space removed.
func (f FS) String(rel string) (string, error) {
	b, err := f.Bytes(rel)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// ProcStat returns the state and start time of process pid
// (proc/PID/stat). A process that does not exist is an error satisfying
// errors.Is(err, fs.ErrNotExist).
func (f FS) ProcStat(pid int) (ProcStat, error) {
	b, err := f.Bytes(fmt.Sprintf("proc/%d/stat", pid))
	if err != nil {
		return ProcStat{}, err
	}
	return ParseProcStat(b)
}

// Int returns the decimal integer in rel.
func (f FS) Int(rel string) (int, error) {
	s, err := f.String(rel)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %q is not an integer: %w", rel, s, ErrFormat)
	}
	return n, nil
}

// CPUList returns the CPUs in a list file such as cpu/online ("0-3,8").
func (f FS) CPUList(rel string) ([]int, error) {
	b, err := f.Bytes(rel)
	if err != nil {
		return nil, err
	}
	cpus, err := ParseCPUList(b)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	return cpus, nil
}

// CPUMask returns the CPUs in a hex mask file such as
// topology/thread_siblings ("00000000,0000000f").
func (f FS) CPUMask(rel string) ([]int, error) {
	b, err := f.Bytes(rel)
	if err != nil {
		return nil, err
	}
	cpus, err := ParseCPUMask(b)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	return cpus, nil
}

// CPUs reads a CPU set from a mask file (shared_cpu_map, cpumap,
// thread_siblings) if it exists, otherwise from the list file beside it
// (shared_cpu_list, cpulist, thread_siblings_list). The mask comes first,
// as hwloc reads it: the kernel has always written masks, and where a
// capture's two disagree, hwloc's answer follows the mask.
func (f FS) CPUs(mask, list string) ([]int, error) {
	cpus, err := f.CPUMask(mask)
	if err == nil || !errors.Is(err, os.ErrNotExist) || list == "" {
		return cpus, err
	}
	return f.CPUList(list)
}

// Exists reports whether rel exists (following symbolic links).
func (f FS) Exists(rel string) bool {
	_, err := os.Stat(f.Path(rel))
	return err == nil
}

// Numbered lists the entries of directory rel named prefix followed by a
// decimal number ("cpu12", "node3", "index0") and returns the numbers,
// sorted. Entries whose symbolic link leads nowhere are skipped. A missing
// directory yields no numbers and the error.
func (f FS) Numbered(rel, prefix string) ([]int, error) {
	ents, err := os.ReadDir(f.Path(rel))
	if err != nil {
		return nil, err
	}
	var ns []int
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || rest == "" {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 {
			continue
		}
		if !f.Exists(rel + "/" + e.Name()) {
			continue
		}
		if f.rec != nil {
			f.rec.dir(rel + "/" + e.Name())
		}
		ns = append(ns, n)
	}
	sortInts(ns)
	return ns, nil
}
