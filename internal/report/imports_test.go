package report

import (
	gobuild "go/build"
	"path/filepath"
	"strings"
	"testing"
)

// TestRendersOnly: report renders what it is given (issue #50). Neither it
// nor anything it imports calibrates the model (calib), takes the
// purchase decision (decide), or runs an engine or a sweep: the walk
// follows the module's packages that report's non-test files import,
// transitively, as the build would.
func TestRendersOnly(t *testing.T) {
	const module = "github.com/numalab/numalab/"
	banned := map[string]bool{"internal/calib": true, "internal/decide": true, "internal/engine": true,
		"internal/sweep": true}
	via := map[string]string{"internal/report": ""} // package → the package that imports it
	todo := []string{"internal/report"}
	for len(todo) > 0 {
		pkg := todo[0]
		todo = todo[1:]
		p, err := gobuild.Default.ImportDir(filepath.Join("..", "..", pkg), 0)
		if err != nil {
			t.Fatalf("reading package %s: %v", pkg, err)
		}
		for _, imp := range p.Imports {
			rel, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if _, seen := via[rel]; seen {
				continue
			}
			via[rel] = pkg
			if banned[rel] {
				t.Errorf("%s → %s: report must not import it", chain(via, pkg), rel)
			}
			todo = append(todo, rel)
		}
	}
	if len(via) < 5 {
		t.Fatalf("the walk found %d packages: it did not follow report's imports", len(via))
	}
}

// chain is the import path from report down to pkg.
func chain(via map[string]string, pkg string) string {
	path := []string{pkg}
	for via[pkg] != "" {
		pkg = via[pkg]
		path = append([]string{pkg}, path...)
	}
	return strings.Join(path, " → ")
}
