package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoRoot is the repository's top directory, seen from this package.
const repoRoot = "../.."

var (
	// docsPath matches a mention of a page under docs/ in code, help or
	// output: "docs/model.md", "docs/workloads/tpcc-ro.md".
	docsPath = regexp.MustCompile(`\bdocs/[A-Za-z0-9_./-]+\.md\b`)
	// mdLink matches the target of a Markdown link: [text](target).
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// outside are citations of files a clone does not have (spelled in
	// two parts so that this file does not match itself).
	outside = []string{"DESIGN" + ".md", "../" + "shared"}
)

// checkCitations reports, for text from where, every docs/ page it names
// that does not exist and every citation of a file outside the repository.
func checkCitations(t *testing.T, where, text string) {
	t.Helper()
	for _, p := range docsPath.FindAllString(text, -1) {
		if _, err := os.Stat(filepath.Join(repoRoot, p)); err != nil {
			t.Errorf("%s names %s, which the repository does not have", where, p)
		}
	}
	for _, o := range outside {
		if strings.Contains(text, o) {
			t.Errorf("%s cites %s, which a clone does not have (cite a page under docs/)", where, o)
		}
	}
}

// TestReadmeDocsLinks checks that the README, the pages under docs/ and
// every source file, template and help text (help/*.txt) cite only files a
// clone has: every relative Markdown link resolves, every docs/ page named
// exists.
func TestReadmeDocsLinks(t *testing.T) {
	var pages, helps int
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != repoRoot && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(path)
		helpText := ext == ".txt" && filepath.Base(filepath.Dir(path)) == "help"
		if ext != ".go" && ext != ".md" && ext != ".tmpl" && !helpText {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		checkCitations(t, rel, string(b))
		if helpText {
			helps++
		}
		if ext != ".md" {
			return nil
		}
		pages++
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", rel, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pages < 2 {
		t.Fatalf("found %d Markdown files: want the README and the pages under docs/", pages)
	}
	if helps == 0 {
		t.Fatal("found no help/*.txt file: want the embedded --help texts checked too")
	}
	// Every page under docs/ is reachable from its index.
	index, err := os.ReadFile(filepath.Join(repoRoot, "docs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".md" || d.Name() == "README.md" {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(repoRoot, "docs"), path)
		if !strings.Contains(string(index), "("+filepath.ToSlash(rel)+")") {
			t.Errorf("docs/README.md does not link to %s", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHelpCitesDocs checks that every --help text cites only docs/ pages
// that exist, and nothing a clone does not have.
func TestHelpCitesDocs(t *testing.T) {
	helps := [][]string{{"--help"}}
	for _, c := range commands {
		helps = append(helps, []string{c.name, "--help"})
	}
	for _, sub := range [][]string{
		{"run", "oltp"}, {"run", "report"}, {"run", "insert"}, {"run", "null"}, {"run", "tpch"}, {"run", "sql"},
		{"probe", "mem"}, {"probe", "io"},
		{"model", "dram"}, {"model", "tier"}, {"model", "size"}, {"model", "dop"}, {"model", "fit"}, {"model", "buy"},
		{"model", "validate"}, {"store", "copy"},
	} {
		helps = append(helps, append(sub, "--help"))
	}
	cited := 0
	for _, args := range helps {
		out, errOut, err := runCLI(t, args...)
		if err != nil {
			t.Errorf("numalab %s: %v", strings.Join(args, " "), err)
			continue
		}
		text := out + errOut
		cited += len(docsPath.FindAllString(text, -1))
		checkCitations(t, "numalab "+strings.Join(args, " "), text)
	}
	if cited == 0 {
		t.Error("no --help text cites a page under docs/: want at least the model's and the workloads'")
	}
}
