package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/iobench"
	"github.com/numalab/numalab/internal/result"
)

func probeIO(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, args: append([]string{"probe", "io"}, args...)}
	err := cmdProbeIO(context.Background(), e, args)
	return out.String(), errb.String(), err
}

func TestProbeIOHelp(t *testing.T) {
	out, _, err := probeIO(t, "--help")
	if err != nil || !strings.Contains(out, "Examples:") || !strings.Contains(out, "--path") ||
		!strings.Contains(out, "4.2") {
		t.Errorf("--help: %v\n%s", err, out)
	}
	// The flag list shows each value's own type and default, not the
	// wrappers cliflag.ParseChecked parses with.
	for _, want := range []string{"-seq sizes", "(default 64KiB,256KiB,1MiB)", "-size size",
		"-duration window", "-quick\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "panic") ||
		strings.Contains(out, "-size size\n    \ttest file size, e.g. 512MiB, 4GiB (default 0B)") {
		t.Errorf("--help shows a zero default or a panic:\n%s", out)
	}
}

func TestProbeIOBadFlagsAllAtOnce(t *testing.T) {
	_, _, err := probeIO(t, "--size", "lots", "--qd", "0,4", "--duration", "1ms", "--seq", "3000", "--mix-read",
		"120", "--seq-qd", "x", "--buffered", "--json=maybe")
	if err == nil {
		t.Fatal("bad flags accepted")
	}
	for _, want := range []string{"-size", "-qd", "-duration", "-seq", "-mix-read", "-seq-qd", "-json"} {
		if !strings.Contains(err.Error(), want+": ") {
			t.Errorf("error does not name %s:\n%v", want, err)
		}
	}
	if _, stderr, err := probeIO(t, "--bogus", "--size", "lots"); !errors.Is(err, cliflag.ErrUsage) ||
		!strings.Contains(stderr, "-bogus") {
		t.Errorf("an unknown flag: %v, stderr %q; want a usage error naming it", err, stderr)
	}
}

func TestProbeIODurationRange(t *testing.T) {
	for _, d := range []string{"0s", "50ms", "2h", "-1s"} {
		_, _, err := probeIO(t, "--path", t.TempDir(), "--duration", d, "--mix-qd", "2000")
		want := `-duration: "` + d + `" is not valid: want a duration from 100ms to 1h0m0s`
		if err == nil || !strings.Contains(err.Error(), want) ||
			!strings.Contains(err.Error(), `-mix-qd: "2000" is not valid`) {
			t.Errorf("--duration %s --mix-qd 2000: %v, want %q and the mix-qd refused too", d, err, want)
		}
	}
}

func TestProbeIOSizeNotWholeMiB(t *testing.T) {
	_, _, err := probeIO(t, "--size", "5000000", "--seq", "64KiB,1.5MiB")
	for _, want := range []string{"-size: 4.77MiB (5000000 bytes) is not a whole number of MiB",
		"-seq: 1.5MiB (1572864 bytes) is not a block size"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--size 5000000 --seq 64KiB,1.5MiB: %v, want %q", err, want)
		}
	}
}

func TestProbeIOBadPathStoresNothing(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "runs.db")
	_, _, err := probeIO(t, "--path", filepath.Join(dir, "nope"), "--store", db)
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing --path: %v", err)
	}
	_, _, err = probeIO(t, "--path", dir, "--size", "1TiB", "--store", db)
	if !errors.Is(err, iobench.ErrNoSpace) {
		t.Errorf("--size 1TiB: %v, want a free-space error", err)
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bad input created the store (stat: %v)", err)
	}
}

func TestProbeIOStoresRunOnHost(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(t.TempDir(), "runs.db")
	out, stderr, err := probeIO(t, "--path", dir, "--size", "8MiB", "--duration", "100ms", "--qd", "1,2",
		"--seq", "1MiB", "--mix-qd", "2", "--readers", "2", "--span", "32MiB", "--store", db, "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var r result.IOProbe
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	// Random reads at QD 1 and 2, sequential at QD 1 and 2 and by 2
	// readers, the mix; the ratio at QD 1 and 2, and for 1 and 2 readers.
	if len(r.Patterns) != 6 || r.Ratio == nil || len(r.Ratios) != 4 || r.Ratios[3].Readers != 2 || r.Span != 32<<20 {
		t.Errorf(
			"%d patterns, ratio %v, ratios %+v, span %d; want 6, a ratio, 4 ratios (the last of 2 readers), a 32 MiB span",
			len(r.Patterns), r.Ratio, r.Ratios, r.Span)
	}
	if _, err := os.Stat(r.File); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("test file %s left behind", r.File)
	}
	run := onlyRun(t, db)
	if run.Kind != "probe-io" || run.Status != result.StatusComplete || !strings.Contains(run.Headline, "IOPS") {
		t.Errorf("stored run: kind %q status %q headline %q", run.Kind, run.Status, run.Headline)
	}
	var kinds []string
	for _, it := range run.Results {
		kinds = append(kinds, it.Kind)
	}
	if strings.Join(kinds, ",") != "preflight.Report,"+strings.Repeat("result.IOPattern,", 6)+"result.IOProbe" {
		t.Errorf("stored items %v", kinds)
	}
	text, _, err := probeIO(t, "--path", dir, "--size", "8MiB", "--duration", "100ms", "--qd", "1", "--seq", "1MiB",
		"--mix-qd", "0", "--store", db)
	if err != nil || !strings.Contains(text, "random read") ||
		!strings.Contains(text, "sequential pages per random read") {
		t.Errorf("text output: %v\n%s", err, text)
	}
}

// TestProbeIOInterruptedOnHost: Ctrl-C in the first pattern, or while the
// test file is still being written (a busy machine once took the 300 ms
// to get there), says it interrupted the probe and how far it got.
func TestProbeIOInterruptedOnHost(t *testing.T) {
	for _, after := range []time.Duration{300 * time.Millisecond, time.Millisecond} {
		t.Run(after.String(), func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(t.TempDir(), "runs.db")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out, errb bytes.Buffer
			args := []string{"--path", dir, "--size", "8MiB", "--duration", "2s", "--qd", "1,2", "--store", db}
			e := &env{stdout: &out, stderr: &errb, args: append([]string{"probe", "io"}, args...)}
			time.AfterFunc(after, cancel)
			err := cmdProbeIO(ctx, e, args)
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted after 0 of 9 patterns") {
				t.Fatalf("cmdProbeIO after Ctrl-C = %v", err)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, "numalab-iobench-*")); len(m) > 0 {
				t.Errorf("test file left behind: %v", m)
			}
			if r := onlyRun(t, db); r.Status != result.StatusInterrupted {
				t.Errorf("stored run %s, want interrupted", r.Status)
			}
		})
	}
}
