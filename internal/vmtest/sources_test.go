package vmtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// consultSources stats every file of the module but .git's. The guests
// carry binaries that a go command builds from the whole module, which go
// test's cache does not see: the cache keys a test's result on the files
// the test itself consults, so without this a change to, say, eval would
// leave an earlier guest run's result cached.
func consultSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case d.Type().IsRegular():
			_, err := os.Stat(p)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the module's files: %v", err)
	}
}
