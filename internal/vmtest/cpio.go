package vmtest

import (
	"fmt"
	"io"
	"path"
	"strings"
)

// cpioWriter writes the "newc" cpio format the kernel unpacks as an
// initramfs. Several archives concatenated are one initramfs, later files
// replacing earlier ones; each archive names the directories its files
// need, since the kernel does not create missing parents.
type cpioWriter struct {
	w    io.Writer
	ino  int
	dirs map[string]bool
	err  error
}

func newCpio(w io.Writer) *cpioWriter {
	return &cpioWriter{w: w, ino: 1, dirs: map[string]bool{".": true, "/": true}}
}

const (
	modeDir     = 0o040000
	modeFile    = 0o100000
	modeSymlink = 0o120000
)

// entry writes one header, the name and the data, each padded to 4 bytes.
func (c *cpioWriter) entry(name string, mode int, data []byte) {
	if c.err != nil {
		return
	}
	name = strings.TrimPrefix(name, "/")
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
	c.ino++
	buf := append([]byte(hdr), name...)
	buf = append(buf, 0)
	buf = pad4(buf)
	buf = append(buf, data...)
	buf = pad4(buf)
	_, c.err = c.w.Write(buf)
}

func pad4(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// Dir adds a directory and its missing parents.
func (c *cpioWriter) Dir(name string, perm int) {
	name = path.Clean("/" + name)
	if c.dirs[name] {
		return
	}
	c.Dir(path.Dir(name), 0o755)
	c.dirs[name] = true
	c.entry(name, modeDir|perm, nil)
}

// File adds a regular file, and its missing parent directories.
func (c *cpioWriter) File(name string, perm int, data []byte) {
	name = path.Clean("/" + name)
	c.Dir(path.Dir(name), 0o755)
	c.entry(name, modeFile|perm, data)
}

// Symlink adds a symbolic link name → target.
func (c *cpioWriter) Symlink(name, target string) {
	name = path.Clean("/" + name)
	c.Dir(path.Dir(name), 0o755)
	c.entry(name, modeSymlink|0o777, []byte(target))
}

// Close writes the trailer and returns the first error.
func (c *cpioWriter) Close() error {
	c.entry("TRAILER!!!", 0, nil)
	return c.err
}
