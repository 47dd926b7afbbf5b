// Package version says which numalab this is and which engine libraries it
// was built with, so a stored run can name what produced it.
package version

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is numalab's own version; releases set it with
// -ldflags "-X github.com/numalab/numalab/internal/version.Version=v1.2.3".
var Version = "v0.1.0-dev"

// engines are the modules whose versions a user needs to interpret a run.
var engines = []string{
	"github.com/mattn/go-sqlite3",
	"github.com/duckdb/duckdb-go/v2",
	"github.com/jackc/pgx/v5",
	"github.com/go-sql-driver/mysql",
}

// Module returns the version of a dependency compiled into this binary, or
// "" when it is not.
func Module(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
}

// Write prints numalab's version, the Go version and the engine libraries'.
func Write(w io.Writer) {
	fmt.Fprintf(w, "numalab %s\n", Version)
	fmt.Fprintf(w, "go      %s %s/%s\n", strings.TrimPrefix(runtime.Version(), "go"), runtime.GOOS, runtime.GOARCH)
	for _, m := range engines {
		v := Module(m)
		if v == "" {
			v = "(not built in)"
		}
		fmt.Fprintf(w, "%-34s %s\n", m, v)
	}
}
