package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readmeCommands returns the two commands the README opens with, without
// their comments: the main job and the test suite.
func readmeCommands(t *testing.T) (mainJob, tests string) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```sh\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("README.md does not open with a ```sh block")
	}
	var cmds []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	if len(cmds) != 2 {
		t.Fatalf("README opens with %d commands, want 2 (main job, test suite)", len(cmds))
	}
	return cmds[0], cmds[1]
}

// TestReadmeTestCommandIsCI keeps .ci/run and the README's test command the same.
func TestReadmeTestCommandIsCI(t *testing.T) {
	_, tests := readmeCommands(t)
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(ci)), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != tests {
		t.Errorf(".ci/run ends with %q, README's test command is %q", last, tests)
	}
}

// TestReadmeMainJob runs the README's main-job command (eval at its
// default budget, minutes long) in a child process of this test binary
// that runs it in-process and nothing else, so that runChecked's leak
// check sees the main job alone. TestMain starts that child before the
// package's other tests (startChildren), which run beside it, and this
// test, parallel so that it waits for the child only once they have run,
// checks what it did: the main job spends its budget on cells of fixed
// length, and the suite no longer waits for it after the other tests.
func TestReadmeMainJob(t *testing.T) {
	mainJob, _ := readmeCommands(t)
	args, ok := strings.CutPrefix(mainJob, "go run ./cmd/numalab ")
	if !ok {
		t.Fatalf("main job %q does not start with 'go run ./cmd/numalab '", mainJob)
	}
	if testing.Short() && strings.HasPrefix(args, "eval") {
		t.Skip("-short: the main job takes minutes")
	}
	if dir, ok := inChild(t.Name()); ok {
		// The child: the main job in-process, with its working directory
		// dir, which the parent checks.
		t.Chdir(dir)
		var out, errb bytes.Buffer
		if err := runChecked(t, context.Background(), strings.Fields(args), &out, &errb); err != nil {
			t.Fatalf("%s: %v\n%s\n%s", mainJob, err, out.String(), errb.String())
		}
		fmt.Print(out.String())
		return
	}
	// The child runs already; the package's other tests run first.
	t.Parallel()
	j := takeChild(t.Name())
	<-j.done
	t.Cleanup(func() { os.RemoveAll(j.dir) })
	t.Logf("%s took %v in a child process (started %v before this test)\n%s",
		mainJob, j.took.Round(time.Second), time.Since(j.start).Round(time.Second), j.out)
	if j.err != nil {
		t.Fatalf("%s: the child that ran it: %v", mainJob, j.err)
	}
	if !strings.Contains(j.out, "report: numalab-eval/numalab-report.html") {
		t.Errorf("%s did not say where its report is", mainJob)
	}
	if st, err := os.Stat(filepath.Join(j.dir, "numalab-eval", "numalab-report.html")); err != nil || st.Size() == 0 {
		t.Errorf("no report written: %v", err)
	}
	// Everything else it wrote is in numalab-eval too.
	if ents, err := os.ReadDir(j.dir); err != nil || len(ents) != 1 {
		t.Errorf("eval left %d entries in the working directory, want only numalab-eval (%v)", len(ents), err)
	}
}

// flagSet says whether the flag name has a value other than "".
func flagSet(name string) bool {
	f := flag.Lookup(name)
	return f != nil && f.Value.String() != ""
}

// willRun says whether this test binary's -test.run and -test.skip
// select the top-level test name.
func willRun(name string) bool {
	match := func(flagName string, empty bool) bool {
		if !flagSet(flagName) {
			return empty
		}
		top, _, _ := strings.Cut(flag.Lookup(flagName).Value.String(), "/")
		re, err := regexp.Compile(top)
		return err == nil && re.MatchString(name)
	}
	return match("test.run", true) && !match("test.skip", false)
}

// TestReadmeExamples runs every console example in the README ("$ numalab
// ..." followed by its output) and compares the output.
func TestReadmeExamples(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(b), "```console\n")[1:]
	if len(blocks) == 0 {
		t.Fatal("README has no console examples")
	}
	for _, blk := range blocks {
		blk, _, _ = strings.Cut(blk, "```")
		cmdline, want, _ := strings.Cut(blk, "\n")
		args, ok := strings.CutPrefix(cmdline, "$ numalab ")
		if !ok {
			t.Errorf("console block does not start with '$ numalab ': %q", cmdline)
			continue
		}
		var out, errb bytes.Buffer
		if err := runChecked(t, context.Background(), strings.Fields(args), &out, &errb); err != nil {
			t.Errorf("%s: %v\n%s", cmdline, err, errb.String())
			continue
		}
		if out.String() != want {
			t.Errorf("%s: output differs from the README\n got:\n%s\nwant:\n%s", cmdline, out.String(), want)
		}
	}
}
