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
// at offset 8).
func FileEngine(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("telling the engine of %s: %w", path, err)
	}
	defer f.Close()
	b := make([]byte, 16)
	n, _ := io.ReadFull(f, b)
	switch {
	case n == 16 && string(b) == "SQLite format 3\x00":
		return "sqlite", nil
	case n >= 12 && string(b[8:12]) == "DUCK":
		return "duckdb", nil
	}
	return "", fmt.Errorf("telling the engine of %s: %w", path, ErrUnknownFile)
}
