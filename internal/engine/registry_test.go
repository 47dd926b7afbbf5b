package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRegistryNamesOpen checks that every engine the registry lists is
// one Open knows, and that Open refuses a name the registry lacks with
// the registry's list.
func TestRegistryNamesOpen(t *testing.T) {
	if !slices.Equal(Engines, Names(nil)) {
		t.Errorf("Engines %v, registry %v", Engines, Names(nil))
	}
	_, err := Open(t.Context(), "oracle", Options{})
	if err == nil || !strings.Contains(err.Error(), List(nil)) {
		t.Errorf("Open(oracle) = %v; want a refusal listing %s", err, List(nil))
	}
	for _, s := range Specs() {
		if s.Title == "" || s.Article == "" || !strings.HasSuffix(s.Article, s.Title) {
			t.Errorf("%s: title %q, article %q", s.Name, s.Title, s.Article)
		}
		if s.Server == (s.FileExt != "") {
			t.Errorf("%s: server %v with file extension %q", s.Name, s.Server, s.FileExt)
		}
		if s.Server != (s.Placement.ServerMemory != "") || s.Server != s.Threads.Own {
			t.Errorf("%s: server %v, server memory %q, own threads %v",
				s.Name, s.Server, s.Placement.ServerMemory, s.Threads.Own)
		}
		if s.Inspect.Catalog == NoCatalog || s.SQL == nil || s.Storage == 0 || s.BulkMethod == "" {
			t.Errorf("%s: catalog %v, SQL %v, storage %v, bulk method %q",
				s.Name, s.Inspect.Catalog, s.SQL, s.Storage, s.BulkMethod)
		}
		if s.Parallel.Query == (s.Parallel.Refusal != "") {
			t.Errorf("%s: parallel query %v with refusal %q", s.Name, s.Parallel.Query, s.Parallel.Refusal)
		}
	}
	if _, err := Parse("oracle"); err == nil ||
		!strings.HasPrefix(err.Error(), `-engine: "oracle" is not an engine: want sqlite, duckdb, postgres or mariadb`) {
		t.Errorf("Parse(oracle) = %v", err)
	}
	if got := List(IsServer); got != "postgres or mariadb" {
		t.Errorf("List(IsServer) = %q", got)
	}
	if got := Titles(IsServer); got != "PostgreSQL and MariaDB" {
		t.Errorf("Titles(IsServer) = %q", got)
	}
}

// TestRegistryFiles makes a real file of each embedded engine and checks
// that FileEngine tells it as the registry names it, with its extension.
func TestRegistryFiles(t *testing.T) {
	for _, s := range Specs() {
		if s.Server {
			continue
		}
		path := filepath.Join(t.TempDir(), "x."+s.FileExt)
		e, err := Open(t.Context(), s.Name, Options{Path: path, Create: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.DB().Exec("CREATE TABLE t (a INTEGER)"); err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := FileEngine(path)
		if err != nil || got != s.Name {
			t.Errorf("%s file: FileEngine = %q, %v", s.Name, got, err)
		}
		b, _ := os.ReadFile(path)
		if HeaderEngine(b[:min(len(b), 16)]) != s.Name {
			t.Errorf("%s file: HeaderEngine of its first bytes is %q", s.Name, HeaderEngine(b[:min(len(b), 16)]))
		}
	}
}

// TestCheckDOP checks that a DOP above 1 is refused, with the reason, on
// the engines that run a query on one thread, and above the machine's
// CPUs on every engine.
func TestCheckDOP(t *testing.T) {
	for _, name := range Engines {
		spec, _ := Lookup(name)
		if err := spec.CheckDOP([]int{1}, 2); err != nil {
			t.Errorf("%s DOP 1: %v", name, err)
		}
		err := spec.CheckDOP([]int{1, 2}, 2)
		switch {
		case spec.Parallel.Query && err != nil:
			t.Errorf("%s DOP 1,2 on 2 CPUs: %v", name, err)
		case !spec.Parallel.Query && (err == nil || !strings.Contains(err.Error(), spec.Parallel.Refusal)):
			t.Errorf("%s DOP 1,2: %v; want a refusal saying %q", name, err, spec.Parallel.Refusal)
		}
		if err := spec.CheckDOP([]int{3}, 2); err == nil || !strings.Contains(err.Error(), "3") {
			t.Errorf("%s DOP 3 on 2 CPUs: %v; want a refusal", name, err)
		}
	}
}
