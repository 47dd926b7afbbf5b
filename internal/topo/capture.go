package topo

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/outfile"
	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

// Capture reads the topology under root as FromSysfs does, and the
// settings as preflight.Read does, and writes every file they read, every cpuN/nodeN directory it listed, and the few
// neighbouring files hwloc also reads (whole topology/ and cache/ directories,
// node cpumaps, /proc/meminfo), into w as a gzip-compressed tar whose
// entries sit below the directory top (e.g.
// "myhost/sys/devices/system/cpu/online"). Extracting it and calling
// FromSysfs on <dir>/<top> gives the same topology, so a user can send
// numalab a machine; HWLOC_FSROOT=<dir>/<top> lstopo reads it too. Nothing
// else is read: no serial numbers, no process list; /proc/mounts and
// /proc/self/cgroup keep only their cgroup, cpuset, cpu and memory lines,
// /proc/stat its CPU time and context switch lines, and /proc/interrupts
// its header and free page reporting queues. Go's library writes
// no bzip2, hence gzip; Extract reads both.
func Capture(w io.Writer, root, top string) (*result.Topology, error) {
	top = strings.Trim(path.Clean("/"+filepath.ToSlash(top)), "/")
	if top == "" || top == "." || strings.Contains(top, "/") {
		return nil, fmt.Errorf("capturing the topology: top directory %q must be one plain name, such as the host name", top)
	}
	rec := sysfs.NewRecorder()
	f := sysfs.New(root).Recording(rec)
	t, err := fromFS(f)
	if err != nil {
		return nil, fmt.Errorf("capturing the topology: %w", err)
	}
	preflight.Read(f, t) // only for the files it reads
	addNeighbours(f, rec.Dirs())
	files := rec.Files()
	for p, keep := range captureKeepLines {
		if b, ok := files[p]; ok {
			files[p] = keepLines(b, keep)
		}
	}
	dirs := map[string]bool{top: true}
	addParents := func(p string) {
		for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
			dirs[path.Join(top, d)] = true
		}
	}
	for p := range files {
		addParents(p)
	}
	for _, d := range rec.Dirs() {
		dirs[path.Join(top, d)] = true
		addParents(d)
	}
	gz := gzip.NewWriter(w)
	gz.Comment = outfile.CaptureComment // the mark that lets a later capture replace this one
	tw := tar.NewWriter(gz)
	mtime := time.Unix(0, 0)
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		if err := tw.WriteHeader(
			&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return nil, fmt.Errorf("capturing the topology: %w", err)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		b := files[p]
		h := &tar.Header{Typeflag: tar.TypeReg, Name: path.Join(top, p), Mode: 0o444, Size: int64(len(b)), ModTime: mtime,
			Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("capturing the topology: %w", err)
		}
		if _, err := tw.Write(b); err != nil {
			return nil, fmt.Errorf("capturing the topology: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("capturing the topology: %w", err)
	}
	if err := gz.Close(); err != nil {
		return nil, fmt.Errorf("capturing the topology: %w", err)
	}
	return t, nil
}

// Files beside those FromSysfs reads that hwloc reads too, so that
// HWLOC_FSROOT=<dir> lstopo shows the same machine from a capture.
var (
	captureExtras = []string{
		"proc/cpuinfo", "proc/meminfo",
		"sys/devices/system/cpu/online", "sys/devices/system/cpu/offline", "sys/devices/system/cpu/possible",
		"sys/devices/system/cpu/present", "sys/devices/system/cpu/kernel_max",
		"sys/devices/system/node/online", "sys/devices/system/node/possible", "sys/devices/system/node/has_cpu",
		"sys/devices/system/node/has_memory", "sys/devices/system/node/has_normal_memory",
	}
	cpuDirFiles  = []string{"topology", "cache/index*"}
	nodeDirFiles = []string{"cpumap", "cpulist", "meminfo", "distance"}
)

// captureKeepLines cuts files that say more about the system than a
// topology and its preflight need down to the lines they use: cgroup
// mounts; the process's cpuset, cpu, memory and cgroup v2 memberships;
// CPU times and context switches; the interrupt header and the free page
// reporting queue.
var captureKeepLines = map[string]func(line string) bool{
	"proc/mounts": func(l string) bool {
		f := strings.Fields(l)
		return len(f) > 2 && (f[2] == "cgroup" || f[2] == "cgroup2")
	},
	"proc/self/cgroup": func(l string) bool {
		f := strings.SplitN(l, ":", 3)
		return len(f) == 3 &&
			(f[0] == "0" && f[1] == "" || slices.ContainsFunc(strings.Split(f[1], ","), func(c string) bool {
				return c == "cpuset" || c == "cpu" || c == "memory"
			}))
	},
	"proc/stat": func(l string) bool {
		return strings.HasPrefix(l, "cpu") || strings.HasPrefix(l, "ctxt ")
	},
	"proc/interrupts": func(l string) bool {
		return strings.HasPrefix(strings.TrimSpace(l), "CPU") || strings.HasSuffix(l, "-reporting_vq")
	},
}

func keepLines(b []byte, keep func(string) bool) []byte {
	var out bytes.Buffer
	for line := range strings.Lines(string(b)) {
		if keep(strings.TrimRight(line, "\n")) {
			out.WriteString(line)
		}
	}
	return out.Bytes()
}

// addNeighbours reads (and so records) the extra files: whole topology and
// cache directories of every listed CPU, the basic files of every node.
func addNeighbours(f sysfs.FS, dirs []string) {
	for _, p := range captureExtras {
		f.Bytes(p)
	}
	for _, d := range dirs {
		base := path.Base(d)
		switch {
		case strings.HasPrefix(base, "cpu"):
			for _, pat := range cpuDirFiles {
				subs, _ := f.Glob(d + "/" + pat)
				for _, sub := range subs {
					ents, _ := f.ReadDir(sub)
					for _, e := range ents {
						if e.Type().IsRegular() {
							f.Bytes(sub + "/" + e.Name())
						}
					}
				}
			}
		case strings.HasPrefix(base, "node"):
			for _, n := range nodeDirFiles {
				f.Bytes(d + "/" + n)
			}
		}
	}
}

// maxExtract bounds what Extract writes, so a hostile archive cannot fill
// the disk.
const maxExtract = 1 << 30

// ErrNotCapture is wrapped by Extract's errors about the archive itself.
var ErrNotCapture = errors.New("not a topology capture")

// Extract unpacks a capture (tar, tar.gz or tar.bz2, as Capture writes or
// hwloc's test suite keeps them) into dir and returns the root to pass to
// FromSysfs: the archive's single top-level directory. Entries that would
// land outside dir, and symbolic links that point outside it, are refused.
func Extract(r io.Reader, dir string) (string, error) {
	br := bufio.NewReader(r)
	magic, _ := br.Peek(3)
	var src io.Reader = br
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		gz, err := gzip.NewReader(br)
		if err != nil {
			return "", fmt.Errorf("extracting a capture: %w", err)
		}
		defer gz.Close()
		src = gz
	case bytes.HasPrefix(magic, []byte("BZh")):
		src = bzip2.NewReader(br)
	}
	tr := tar.NewReader(src)
	tops := make(map[string]bool)
	var written int64
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf(
				"extracting a capture: %w (%w: want a .tar, .tar.gz or .tar.bz2 from numalab topo --capture)", err, ErrNotCapture)
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if name == "." {
			continue
		}
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return "", fmt.Errorf("extracting a capture: entry %q leaves the directory: %w", h.Name, ErrNotCapture)
		}
		tops[strings.SplitN(name, "/", 2)[0]] = true
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if err := noLinkedParent(dir, name); err != nil {
			return "", fmt.Errorf("extracting a capture: entry %q: %w", h.Name, err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return "", fmt.Errorf("extracting a capture: %w", err)
			}
		case tar.TypeReg:
			if written += h.Size; written > maxExtract {
				return "", fmt.Errorf("extracting a capture: more than %d bytes: %w", maxExtract, ErrNotCapture)
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return "", fmt.Errorf("extracting a capture: %w", err)
			}
			if err := writeFile(dst, tr, h.Size); err != nil {
				return "", fmt.Errorf("extracting a capture: %w", err)
			}
		case tar.TypeSymlink, tar.TypeLink:
			target := h.Linkname
			if h.Typeflag == tar.TypeSymlink {
				target = path.Join(path.Dir(name), h.Linkname)
			}
			target = path.Clean(target)
			if path.IsAbs(h.Linkname) || target == ".." || strings.HasPrefix(target, "../") {
				return "", fmt.Errorf("extracting a capture: link %q -> %q leaves the directory: %w",
					h.Name, h.Linkname, ErrNotCapture)
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return "", fmt.Errorf("extracting a capture: %w", err)
			}
			if h.Typeflag == tar.TypeSymlink {
				err = os.Symlink(h.Linkname, dst)
			} else {
				err = os.Link(filepath.Join(dir, filepath.FromSlash(target)), dst)
			}
			if err != nil {
				return "", fmt.Errorf("extracting a capture: %w", err)
			}
		}
	}
	if len(tops) != 1 {
		return "", fmt.Errorf("extracting a capture: %d top-level entries, want one directory holding sys/ and proc/: %w",
			len(tops), ErrNotCapture)
	}
	for top := range tops {
		return filepath.Join(dir, top), nil
	}
	panic("unreachable")
}

// noLinkedParent refuses an entry whose parent directories include a
// symbolic link written earlier: writing through it could leave dir.
func noLinkedParent(dir, name string) error {
	p := dir
	parts := strings.Split(name, "/")
	for _, part := range parts[:len(parts)-1] {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil {
			return nil // not created yet: MkdirAll makes a real directory
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("its parent %q is a symbolic link: %w", p, ErrNotCapture)
		}
	}
	return nil
}

func writeFile(dst string, r io.Reader, size int64) error {
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(f, r, size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
