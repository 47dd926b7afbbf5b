package pages

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/hugepages"
	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/pgserver"
)

// smapsText is smaps of one mapping per entry: its size, Rss, hugetlb and
// transparent huge pages in kB, and its kernel page size.
func smapsText(maps ...[5]int) string {
	var b strings.Builder
	for i, m := range maps {
		fmt.Fprintf(&b, "7f%02x000000-7f%02x100000 rw-s 00000000 00:01 1 /anon\n", i, i)
		fmt.Fprintf(&b, "Size: %d kB\nKernelPageSize: %d kB\nRss: %d kB\nShared_Hugetlb: %d kB\nPrivate_Hugetlb: 0 kB\n",
			m[0], m[4], m[1], m[2])
		fmt.Fprintf(&b, "AnonHugePages: %d kB\nShmemPmdMapped: 0 kB\nVmFlags: rd wr\n", m[3])
	}
	return b.String()
}

// TestDataMapping: of the mappings of at least 64 MiB, the one most in
// memory is the data's, and its share in 2 MiB pages is all of it from the
// kernel's pool (hugetlb), else its transparent huge pages over its Rss.
func TestDataMapping(t *testing.T) {
	for _, c := range []struct {
		name string
		maps [][5]int // size, rss, hugetlb, anon huge, kernel page
		want float64
	}{
		{"PostgreSQL huge_pages=on: shared memory from the pool",
			[][5]int{{8192, 4000, 0, 0, 4}, {270336, 0, 120000, 0, 2048}}, 1},
		{"MariaDB large pages: a reservation of 284 MiB untouched, a chunk from the pool",
			[][5]int{{290816, 20, 0, 0, 4}, {126976, 0, 100000, 0, 2048}, {65404, 25000, 0, 0, 4}}, 1},
		{"4 KiB pages: a chunk in memory, none huge", [][5]int{{290816, 20, 0, 0, 4}, {126976, 100000, 0, 0, 4}}, 0},
		{"transparent huge pages on half", [][5]int{{131072, 100000, 0, 50000, 4}}, 0.5},
	} {
		m, err := dataMapping(strings.NewReader(smapsText(c.maps...)))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := m.hugeShare(); got != c.want {
			t.Errorf("%s: share %v of %+v, want %v", c.name, got, m, c.want)
		}
	}
	if _, err := dataMapping(strings.NewReader(smapsText([5]int{8192, 8000, 0, 0, 4}))); !errors.Is(err, errNoMapping) {
		t.Errorf("no mapping of 64 MiB: %v", err)
	}
}

// TestServerSidesHost starts each server engine installed here in both
// page sizes and checks that its data memory is in 4 KiB pages on one side
// and in 2 MiB pages from the kernel's pool on the other (as root, which
// reserving them needs); the pool is as it was after.
func TestServerSidesHost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and loads two servers of each engine")
	}
	if os.Geteuid() != 0 {
		t.Skip("reserving 2 MiB pages needs root")
	}
	for _, name := range []string{"postgres", "mariadb"} {
		t.Run(name, func(t *testing.T) {
			sd, err := serverSides(context.Background(), RunConfig{Engine: name, CPU: 0}, io.Discard)
			if errors.Is(err, pgserver.ErrNoBinaries) || errors.Is(err, mariaserver.ErrNoBinaries) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			small, huge := sd.s[0].dataHuge, sd.s[1].dataHuge
			sd.release()
			if small > 0.1 || huge < 0.9 {
				t.Errorf("%s: data %.0f%% in 2 MiB pages with them off, %.0f%% with them on; want none and all",
					name, 100*small, 100*huge)
			}
			// Released: no marker of this process (the pool itself is shared with
			// the evals and servers other tests run meanwhile).
			if held, err := hugepages.HeldBy("/", os.Getpid()); err != nil || held != 0 {
				t.Errorf("after the run this process still holds %d 2 MiB pages (%v)", held, err)
			}
		})
	}
}

// TestCheckEngine: a server engine takes no --db; DuckDB and unknown
// engines are refused, saying why.
func TestCheckEngine(t *testing.T) {
	c := DefaultRunConfig()
	c.Engine, c.DB = "postgres", ""
	if err := c.Check(); err != nil {
		t.Errorf("postgres without --db: %v", err)
	}
	for _, bad := range []struct{ engine, db, want string }{
		{"postgres", "x.db", `-db: "x.db" names a SQLite file`},
		{"duckdb", "", "DuckDB has no setting that maps its buffer manager's memory in 2 MiB pages"},
		{"oracle", "", `-engine: "oracle" is not an engine whose data can be mapped in both page sizes (expected one of mariadb, postgres, sqlite)`},
	} {
		c.Engine, c.DB = bad.engine, bad.db
		if err := c.Check(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("--engine %s --db %q: %v; want %q", bad.engine, bad.db, err, bad.want)
		}
	}
}
