package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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

// TestReadmeMainJob runs the README's main-job command in-process.
func TestReadmeMainJob(t *testing.T) {
	mainJob, _ := readmeCommands(t)
	args, ok := strings.CutPrefix(mainJob, "go run ./cmd/numalab ")
	if !ok {
		t.Fatalf("main job %q does not start with 'go run ./cmd/numalab '", mainJob)
	}
	if testing.Short() && strings.HasPrefix(args, "eval") {
		t.Skip("-short: the main job takes minutes")
	}
	dir := t.TempDir()
	t.Chdir(dir) // eval writes its store, databases and report under it
	var out, errb bytes.Buffer
	start := time.Now()
	if err := runChecked(t, context.Background(), strings.Fields(args), &out, &errb); err != nil {
		t.Fatalf("%s: %v\n%s\n%s", mainJob, err, out.String(), errb.String())
	}
	t.Logf("%s took %v", mainJob, time.Since(start).Round(time.Second))
	if !strings.Contains(out.String(), "report: numalab-eval/numalab-report.html") {
		t.Errorf("%s did not say where its report is:\n%s", mainJob, out.String())
	}
	if st, err := os.Stat(filepath.Join(dir, "numalab-eval", "numalab-report.html")); err != nil || st.Size() == 0 {
		t.Errorf("no report written: %v", err)
	}
	// Everything else it wrote is in numalab-eval too.
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 1 {
		t.Errorf("eval left %d entries in the working directory, want only numalab-eval (%v)", len(ents), err)
	}
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
