package engine

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrUnknownFile is wrapped by FileEngine for a file that is neither an
// SQLite nor a DuckDB database.
var ErrUnknownFile = errors.New("neither SQLite nor DuckDB")

// FileEngine tells a database file's engine, "sqlite" or "duckdb", by its
// first bytes (SQLite's "SQLite format 3\0" header, DuckDB's "DUCK" magic
// at offset 8). A file it cannot read (a directory) is that error, not
// ErrUnknownFile.
func FileEngine(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("telling the engine of %s: %w", path, err)
	}
	defer f.Close()
	b := make([]byte, 16)
	n, err := io.ReadFull(f, b)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return "", fmt.Errorf("telling the engine of %s: %w", path, err) // unreadable (a directory): no verdict
	}
	if name := HeaderEngine(b[:n]); name != "" {
		return name, nil
	}
	return "", fmt.Errorf("telling the engine of %s: %w", path, ErrUnknownFile)
}

// HeaderEngine is the engine whose database file begins with b (a file's
// first 16 bytes or more), "" for none.
func HeaderEngine(b []byte) string {
	switch {
	case len(b) >= 16 && string(b[:16]) == "SQLite format 3\x00":
		return "sqlite"
	case len(b) >= 12 && string(b[8:12]) == "DUCK":
		return "duckdb"
	}
	return ""
}
