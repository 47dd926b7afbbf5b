// Package outfile writes the files a user asks numalab for (a report's
// --out, a topology --capture) without harming anything numalab did not
// make.
//
// A file is written to a temporary file beside it, synced and renamed into
// place, so a reader sees the old file or the whole new one, and a failed
// write leaves nothing behind. An existing file is replaced only when
// numalab wrote it, as its content shows (each Kind knows the mark its
// files carry), or when the user passes --force. Some files are never
// replaced, even with --force: the results store (by identity with the
// paths given in Options.Keep) and SQLite or DuckDB databases, journals
// and write-ahead logs (by content). Directories and other non-regular
// files (devices, pipes) are refused too.
//
// It does not render anything: callers pass a function that writes the
// bytes. It does not follow a symbolic link to write its target: the
// link's target decides what may be replaced, and the rename replaces the
// link itself.
package outfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrRefused is what every refusal wraps: the path was not written and is
// left as it was.
var ErrRefused = errors.New("refused")

// Options says what a write may replace.
type Options struct {
	// Flag names the flag that chose the path ("out", "capture"), for
	// messages that say what to do.
	Flag string
	// Force allows replacing a regular file numalab did not write. It
	// never allows replacing a database, the store or a directory.
	Force bool
	// Keep are paths that must never be written: the results store.
	Keep []string
}

// refuse builds a refusal that names the path, what is wrong and what to do.
func refuse(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, a...))
}

// Check says whether path may be written as a file of kind k, without
// writing anything: commands call it before long work, so that a bad --out
// fails at once rather than after the measurement.
func Check(path string, k Kind, opt Options) error {
	if path == "" {
		return refuse("--%s is empty; give a file name", opt.Flag)
	}
	for _, keep := range opt.Keep {
		if keep != "" && (sameFile(path, keep) || isSidecar(path, keep)) {
			return refuse("%s is the results store (--store %s) or one of its files; choose another --%s", path, keep, opt.Flag)
		}
	}
	if dir, err := os.Stat(filepath.Dir(path)); err != nil || !dir.IsDir() {
		return refuse("%s: directory %s does not exist; create it or choose another --%s", path, filepath.Dir(path), opt.Flag)
	}
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking %s: %w", path, err)
	}
	if fi.IsDir() {
		return refuse("%s is a directory; give a file name in it, such as %s", path, filepath.Join(path, k.example))
	}
	if !fi.Mode().IsRegular() {
		return refuse("%s is not a regular file (%s); choose another --%s", path, fi.Mode().Type(), opt.Flag)
	}
	head, err := readHead(path)
	if err != nil {
		return fmt.Errorf("checking %s: %w", path, err)
	}
	if what := database(head); what != "" {
		return refuse("%s is %s; numalab never writes over a database, even with --force: choose another --%s",
			path, what, opt.Flag)
	}
	if k.ours(head) || opt.Force {
		return nil
	}
	return refuse("%s exists and was not written by numalab (it is not a numalab %s); choose another --%s or "+
		"pass --force to replace it", path, k.name, opt.Flag)
}

// Write writes path as a file of kind k: it checks it as Check does, then
// lets write fill a temporary file in the same directory, syncs it, makes
// it readable by all (0644) and renames it over path. On any error the
// temporary file is removed and path is left as it was.
func Write(path string, k Kind, opt Options, write func(io.Writer) error) (err error) {
	if err := Check(path, k, opt); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".numalab-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := write(f); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// headSize is how much of an existing file its kind is recognised by.
const headSize = 64 << 10

func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, headSize)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:n], nil
}

// database names the database file head is the start of, or "".
func database(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("SQLite format 3\x00")):
		return "a SQLite database"
	case len(head) >= 12 && string(head[8:12]) == "DUCK":
		return "a DuckDB database"
	case bytes.HasPrefix(head, []byte{0x37, 0x7f, 0x06, 0x82}), bytes.HasPrefix(head, []byte{0x37, 0x7f, 0x06, 0x83}):
		return "a SQLite write-ahead log"
	case bytes.HasPrefix(head, []byte{0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}):
		return "a SQLite journal"
	}
	return ""
}

// sameFile says whether a and b name one file: the same inode when both
// exist, the same absolute path otherwise.
func sameFile(a, b string) bool {
	fa, ea := os.Stat(a)
	fb, eb := os.Stat(b)
	if ea == nil && eb == nil {
		return os.SameFile(fa, fb)
	}
	return absPath(a) == absPath(b)
}

// isSidecar says whether path is one of the files SQLite keeps beside the
// store: its write-ahead log, shared-memory index or journal.
func isSidecar(path, store string) bool {
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if sameFile(path, store+suffix) {
			return true
		}
	}
	return false
}

// absPath is path made absolute with its directory's symbolic links
// resolved, so that two spellings of one file compare equal.
func absPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}
