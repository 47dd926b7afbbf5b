package main

import (
	"bytes"
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/cliflag"
)

// An advice is a command line numalab tells its user to run, without the
// leading "numalab", and where it was found.
type advice struct {
	where, line string
}

var (
	// quotedAdvice is a command numalab quotes in text it prints: 'numalab
	// run oltp --curve'. In a Go string a quote may be closed by another
	// string ("'numalab run null --engine " + name + "'"): the end of the
	// string closes it, the missing value stands as x.
	quotedAdvice = regexp.MustCompile(`'numalab ([^'` + "`" + `]{0,300}?)('|$)`)
	// formatVerb is a fmt verb in a format string's advice.
	formatVerb = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)
	// exampleLine is a help text's example.
	exampleLine = regexp.MustCompile(`^ {2,4}numalab `)
	// placeholder is a word the user replaces (ID, FILE, DIR, N, A B).
	placeholder = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
)

// quotedIn adds to out every command quoted in text; open says whether a
// quote that text leaves open counts (a Go string closed by another).
func quotedIn(where, text string, open bool, out *[]advice) {
	for _, m := range quotedAdvice.FindAllStringSubmatch(text, -1) {
		line := strings.Join(strings.Fields(m[1]), " ")
		if strings.ContainsAny(line, "[]<>|") || strings.Contains(line, "...") || strings.HasPrefix(line, "%") {
			continue // a synopsis, or a command named at run time
		}
		if m[2] == "" {
			if !open {
				continue
			}
			line += " x"
		}
		*out = append(*out, advice{where, line})
	}
}

// examplesIn adds to out every example command of a help text: a line
// indented by two to four spaces (prose of a flag's help is indented
// further) and starting with "numalab ", cut at a comment, a pipe or a
// redirection, each command of a "&&" chain, a line ending in "\" joined
// with the next. Synopses ("[flags]", "<command>", "A|B") are not
// examples.
func examplesIn(where, text string, out *[]advice) {
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		for strings.HasSuffix(l, `\`) && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, `\`) + " " + lines[i]
		}
		t := strings.TrimSpace(l)
		if !exampleLine.MatchString(l) {
			continue
		}
		for _, cmd := range shellCommands(t) {
			if strings.ContainsAny(cmd, "[]<>()|") || strings.Contains(cmd, "...") {
				continue // a synopsis, or a line that says more than a command
			}
			if rest, ok := strings.CutPrefix(cmd, "numalab "); ok {
				*out = append(*out, advice{where, rest})
			}
		}
	}
}

// shellCommands splits a shell line into its commands at "&&", "|", ";"
// and "#" outside quotes, dropping a redirection and what follows it.
func shellCommands(line string) []string {
	var cmds []string
	var cur strings.Builder
	var quote byte
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			cmds = append(cmds, s)
		}
		cur.Reset()
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || line[i-1] == ' '):
			flush()
			return cmds
		case c == '>':
			flush()
			return cmds
		case c == '&' && i+1 < len(line) && line[i+1] == '&', c == '|' && (i+1 >= len(line) || line[i+1] == ' '), c == ';':
			flush()
			if c == '&' {
				i++
			}
			continue
		}
		cur.WriteByte(c)
	}
	flush()
	return cmds
}

// shellWords splits a command line into words as the shell would, quotes
// removed.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	var quote byte
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// adviceCommands collects every command numalab prints as advice: those
// quoted in the string literals of its Go source, those its help texts
// quote or give as examples, those quoted in its rendered outputs (the
// golden files and test data under testdata/) and templates.
func adviceCommands(t *testing.T, root string) []advice {
	t.Helper()
	var out []advice
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		inTestdata := slices.Contains(strings.Split(filepath.ToSlash(rel), "/"), "testdata")
		switch ext := filepath.Ext(path); {
		case ext == ".go" && !inTestdata && !strings.HasSuffix(path, "_test.go"):
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						quotedIn(rel, s, true, &out)
					}
				}
				return true
			})
		case ext == ".txt" && filepath.Base(filepath.Dir(path)) == "help":
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			quotedIn(rel, string(b), false, &out)
			examplesIn(rel, string(b), &out)
		case ext == ".tmpl" ||
			inTestdata && slices.Contains([]string{".txt", ".html", ".json", ".csv", ".svg", ".golden"}, ext):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if ext == ".json" {
				b = bytes.ReplaceAll(b, []byte(`\u0027`), []byte("'"))
			}
			quotedIn(rel, html.UnescapeString(string(b)), false, &out)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// adviceSentinel is a flag no command has: the parse reaching it means
// every word before it parsed.
const adviceSentinel = "--numalab-advice-check"

// takesArgs are the commands that take arguments after their flags (run
// IDs, stores).
var takesArgs = []string{"compare", "fleet", "report", "runs show", "store copy"}

// checkAdvice parses the command line with numalab's own command table
// and flag sets, and says what is wrong with it: an unknown command or
// subcommand, an unknown flag, a value its flag refuses as it parses (a
// command that reports its bad values together, cliflag.ParseChecked,
// judges them after the parse, which the sentinel ends first). The
// sentinel is given twice after the flags (before the arguments of a
// command that takes them): the first may be taken as the value of a
// flag the advice names without one ('numalab model --from-run'); the
// parse then stops at the second with an error that names it, before
// anything runs. ctx is cancelled, so that a command the sentinel does not
// stop (a word taken as an argument) ends at once.
func checkAdvice(ctx context.Context, line string) error {
	line = formatVerb.ReplaceAllStringFunc(line, func(v string) string {
		if strings.ContainsAny(v[len(v)-1:], "dvxf") {
			return "1"
		}
		return "x"
	})
	words := shellWords(line)
	for i, w := range words {
		if placeholder.MatchString(w) {
			words[i] = "1"
		}
	}
	if len(words) == 0 {
		return errors.New("no command")
	}
	cmd := strings.Join(words[:min(2, len(words))], " ")
	tryAt := []int{len(words)}
	if slices.ContainsFunc(takesArgs, func(c string) bool { return c == cmd || c == words[0] }) {
		for i := len(words) - 1; i > 0 && !strings.HasPrefix(words[i], "-"); i-- {
			tryAt = append(tryAt, i)
		}
	}
	var last string
	for _, at := range tryAt {
		args := slices.Concat(words[:at], []string{adviceSentinel, adviceSentinel}, words[at:])
		var stdout, stderr bytes.Buffer
		err := run(ctx, args, &stdout, &stderr)
		reached := strings.Contains(stderr.String(), "flag provided but not defined: "+adviceSentinel[1:]) ||
			strings.Contains(stderr.String(), `invalid value "`+adviceSentinel+`" for flag`)
		if reached && errors.Is(err, cliflag.ErrUsage) {
			return nil
		}
		if help := slices.Index(args, "--help"); help >= 0 && help < at && err == nil && stdout.Len() > 0 {
			return nil // advice to read a help: it printed
		}
		last = strings.TrimSpace(strings.SplitN(stderr.String()+"\n", "\n", 2)[0])
		if err != nil && !errors.Is(err, cliflag.ErrUsage) {
			last = err.Error()
		}
	}
	return errors.New(last)
}

// TestAdviceParses: every command numalab prints as advice, in an error,
// a report, a help text or a golden output, parses with numalab's own
// command table and flag sets: no unknown command, subcommand or flag
// ('numalab model measure', 'numalab run oltp --placements ...' were
// printed once).
func TestAdviceParses(t *testing.T) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	all := adviceCommands(t, root)
	if len(all) < 50 {
		t.Fatalf("found %d commands given as advice, want the hundreds numalab prints: is the collector broken?", len(all))
	}
	dir := t.TempDir()
	t.Chdir(dir) // a command the sentinel does not stop finds nothing here
	t.Setenv("NUMALAB_STORE", filepath.Join(dir, "s.db"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	seen := map[string]bool{}
	for _, a := range all {
		if seen[a.line] {
			continue
		}
		seen[a.line] = true
		if err := checkAdvice(ctx, a.line); err != nil {
			t.Errorf("%s advises 'numalab %s', which numalab refuses: %v", a.where, a.line, err)
		}
	}
	t.Logf("%d commands given as advice (%d different) checked", len(all), len(seen))
}

// TestCheckAdvice: the check refuses what does not run and passes what
// does, arguments and flags named without a value included.
func TestCheckAdvice(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("NUMALAB_STORE", filepath.Join(t.TempDir(), "s.db"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for line, ok := range map[string]bool{
		"run oltp --placement 'smt=on;smt=off' --repeat 3": true,
		"runs show --json ID":                              true,
		"compare --store fleet.db %d %d":                   true,
		"store copy FROM TO":                               true,
		"model --from-run":                                 true,
		"model --buffer-ns":                                true,
		"topo --select":                                    true,
		"model buy --run ID --candidates FILE":             true,
		"run tpch --help":                                  true,
		"run oltp --placements smt=on,smt=off":             false,
		"model measure":                                    false,
		"model fit --run ID --bogus":                       false,
		"runs show --bogus 3":                              false,
		"run oltp smt=on":                                  false,
		"runs --json=maybe":                                false, // a value its flag refuses as it parses
		"eval --budget":                                    true,
		"frobnicate":                                       false,
	} {
		if err := checkAdvice(ctx, line); (err == nil) != ok {
			t.Errorf("checkAdvice(%q) = %v, want ok %v", line, err, ok)
		}
	}
}
