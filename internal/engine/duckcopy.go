package engine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// UnheldDuckDB is the DuckDB file to open for path: path itself, or where
// DuckDB may still hold it in this process (DuckHeld: an earlier parallel
// query was interrupted, and opening path again would be refused) a copy
// of it (and its .wal) beside it, which done removes; note then says so.
func UnheldDuckDB(path string) (use, note string, done func(), err error) {
	why := DuckHeld(path)
	if why == "" {
		return path, "", func() {}, nil
	}
	dir, base := filepath.Split(path)
	f, err := os.CreateTemp(dir, strings.TrimSuffix(base, ".duckdb")+"-copy-*.duckdb")
	if err != nil {
		return "", "", nil, fmt.Errorf("copying %s, which DuckDB may still hold in this process (%s): %w", path, why, err)
	}
	cp := f.Name()
	f.Close()
	done = func() { os.Remove(cp); os.Remove(cp + ".wal") }
	for _, ext := range []string{"", ".wal"} {
		if err := copyFile(path+ext, cp+ext); err != nil && !(ext != "" && errors.Is(err, fs.ErrNotExist)) {
			done()
			return "", "", nil, fmt.Errorf("copying %s, which DuckDB may still hold in this process (%s): %w",
				path+ext, why, err)
		}
	}
	return cp, fmt.Sprintf("DuckDB may still hold %s in this process (%s): this step reads a copy, %s, removed after it",
		path, why, cp), done, nil
}

// copyFile copies the file from to the file to, which it creates or
// truncates.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
