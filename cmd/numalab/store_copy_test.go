package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

// hostsStore writes a store with runs of two hosts and two kinds, an hour
// apart from 2026-11-21 06:00 UTC.
func hostsStore(t *testing.T, path string) {
	t.Helper()
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	for i, hk := range [][2]string{{"db1", result.RunOLTP}, {"db2", result.RunOLTP}, {"db1", result.RunProbeMem}} {
		r := &result.Run{Kind: hk[1], Command: "numalab " + hk[1], Version: "test", Host: hk[0],
			Started: t0.Add(time.Duration(i) * time.Hour)}
		if err := st.Begin(r); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Add(r.ID, result.KindCell.Of(result.Cell{})); err != nil {
			t.Fatal(err)
		}
		if err := st.Finish(r.ID, r.Started.Add(time.Minute), result.StatusComplete, hk[0]+" "+hk[1], ""); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStoreCopyAndFilters: store copy copies once however often it runs;
// runs filters the copy by host, kind and time, and shows a run by its
// UID; NUMALAB_STORE names the store when --store does not.
func TestStoreCopyAndFilters(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	hostsStore(t, a)
	for _, want := range []string{"copied 3 runs (3 items)", "copied 0 runs (0 items)"} {
		out, _, err := runCLI(t, "store", "copy", a, b)
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("store copy: %v %q, want %q", err, out, want)
		}
	}
	for _, c := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"--host", "db1"}, []string{"db1 oltp", "db1 probe-mem"}, []string{"db2"}},
		{[]string{"--host", "db1", "--kind", "oltp"}, []string{"db1 oltp"}, []string{"probe-mem", "db2"}},
		{[]string{"--since", "2026-11-21T07:00"}, []string{"db2 oltp", "db1 probe-mem"}, []string{"db1 oltp"}},
		{[]string{"--until", "2026-11-21T07:00:00Z"}, []string{"db1 oltp"}, []string{"db2", "probe-mem"}},
		{[]string{"--since", "2026-11-21", "--until", "2026-11-22", "--kind", "probe-mem"},
			[]string{"db1 probe-mem"}, []string{"oltp"}},
		{[]string{"--host", "db9"}, []string{"no runs in " + b + " match"}, []string{"oltp"}},
	} {
		out, _, err := runCLI(t, append([]string{"runs", "--store", b}, c.args...)...)
		for _, w := range c.want {
			if err != nil || !strings.Contains(out, w) {
				t.Errorf("runs %v: %v, want %q in\n%s", c.args, err, w, out)
			}
		}
		for _, n := range c.not {
			if strings.Contains(out, n) {
				t.Errorf("runs %v lists %q:\n%s", c.args, n, out)
			}
		}
	}
	_, _, err := runCLI(t, "runs", "--store", b, "--since", "yesterday", "--until", "2026-13-01")
	if err == nil || !strings.Contains(err.Error(), "-since") || !strings.Contains(err.Error(), "-until") {
		t.Errorf("bad --since and --until: %v, want both named", err)
	}
	_, _, err = runCLI(t, "runs", "--store", b, "--since", "2026-11-22", "--until", "2026-11-21")
	if err == nil || !strings.Contains(err.Error(), "not before") {
		t.Errorf("--since after --until: %v", err)
	}

	// The UID is what a copy keeps: show finds the run by it in both stores.
	out, _, err := runCLI(t, "runs", "show", "--store", a, "2")
	_, uid, ok := strings.Cut(out, "uid: ")
	if err != nil || !ok || len(uid) < 36 {
		t.Fatalf("runs show 2: %v, no uid in\n%s", err, out)
	}
	uid = uid[:36]
	for _, st := range []string{a, b} {
		out, _, err := runCLI(t, "runs", "show", "--store", st, uid[:8])
		if err != nil || !strings.Contains(out, "host      db2") || !strings.Contains(out, uid) {
			t.Errorf("runs show %s in %s: %v\n%s", uid[:8], st, err, out)
		}
	}

	t.Setenv("NUMALAB_STORE", b)
	if out, _, err := runCLI(t, "runs", "--kind", "probe-mem"); err != nil || !strings.Contains(out, "db1 probe-mem") {
		t.Errorf("runs with NUMALAB_STORE: %v\n%s", err, out)
	}
}

// TestStoreCopyBadInput: a missing source, the same store twice and an
// unreachable server are refused, creating nothing and showing no
// password.
func TestStoreCopyBadInput(t *testing.T) {
	dir := t.TempDir()
	missing, to := filepath.Join(dir, "missing.db"), filepath.Join(dir, "to.db")
	if _, _, err := runCLI(t, "store", "copy", missing, to); err == nil || !strings.Contains(err.Error(), "no store at") {
		t.Errorf("copy from a missing store: %v", err)
	}
	if _, _, err := runCLI(t, "store", "copy", to, to); err == nil {
		t.Error("copy of a store onto itself succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused copies created %v", entries)
	}
	const secret = "s3cret-pw"
	gone := "postgres://numalab:" + secret + "@127.0.0.1:1/lab?connect_timeout=3"
	hostsStore(t, to)
	for _, args := range [][]string{{"store", "copy", gone, to}, {"store", "copy", to, gone}, {"runs", "--store", gone}} {
		out, errOut, err := runCLI(t, args...)
		if err == nil || !strings.Contains(err.Error(), "cannot reach") {
			t.Errorf("%v: %v, want 'cannot reach'", args, err)
		}
		if err != nil && strings.Contains(err.Error()+out+errOut, secret) {
			t.Errorf("%v shows the password: %v %s %s", args, err, out, errOut)
		}
	}
	if _, _, err := runCLI(t, "store", "copy", to); err == nil || !strings.Contains(err.Error(), "want two stores") {
		t.Errorf("store copy with one store: %v", err)
	}
}

// TestStoreOnPostgres: a measuring command, runs, runs show and store copy
// (both ways) on a PostgreSQL store given as a URL with a password, which
// no output shows; the stored command line hides it too.
func TestStoreOnPostgres(t *testing.T) {
	ctx := context.Background()
	s, err := pgserver.Start(ctx, pgserver.Config{SharedBuffers: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	cfg, err := pgx.ParseConfig(s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	const secret = "s3cret-pw"
	pg := fmt.Sprintf("postgres://%s:%s@/%s?host=%s&port=%d",
		cfg.User, secret, cfg.Database, url.QueryEscape(cfg.Host), cfg.Port)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	hostsStore(t, a)

	var seen strings.Builder
	cli := func(args ...string) string {
		t.Helper()
		out, errOut, err := runCLI(t, args...)
		seen.WriteString(out + errOut)
		if err != nil {
			seen.WriteString(err.Error())
			t.Fatalf("%v: %v\n%s", args, err, errOut)
		}
		return out
	}
	cli("probe",
		"mem", "--store", pg, "--max", "16m", "--per-doubling", "1", "--samples", "1", "--window", "5", "--pages", "4k")
	for _, want := range []string{"copied 3 runs (3 items)", "copied 0 runs (0 items)"} {
		if out := cli("store", "copy", a, pg); !strings.Contains(out, want) {
			t.Errorf("store copy to PostgreSQL: %q, want %q", out, want)
		}
	}
	if out := cli("runs", "--store", pg, "--kind", "probe-mem"); !strings.Contains(out, "db1 probe-mem") ||
		!strings.Contains(out, "DRAM") {
		t.Errorf("runs --kind probe-mem on PostgreSQL:\n%s", out)
	}
	out := cli("runs", "show", "--store", pg, "1")
	_, uid, _ := strings.Cut(out, "uid: ")
	if !strings.Contains(out, "status    complete") || len(uid) < 36 {
		t.Fatalf("runs show 1 on PostgreSQL:\n%s", out)
	}
	if out := cli("runs", "show", "--store", pg, uid[:8]); !strings.Contains(out, "probe-mem") {
		t.Errorf("runs show by UID on PostgreSQL:\n%s", out)
	}
	for _, want := range []string{"copied 4 runs", "copied 0 runs"} {
		if out := cli("store", "copy", pg, b); !strings.Contains(out, want) {
			t.Errorf("store copy from PostgreSQL: %q, want %q", out, want)
		}
	}
	t.Setenv("NUMALAB_STORE", pg)
	cli("runs", "--help")
	if out := cli("runs", "--json", "--host", "db2"); !strings.Contains(out, `"host": "db2"`) ||
		strings.Contains(out, `"host": "db1"`) {
		t.Errorf("runs --json --host db2 with NUMALAB_STORE:\n%s", out)
	}
	if out := cli("runs", "show", "--json", "1"); !strings.Contains(out, "--store 'postgres://") {
		t.Errorf("the stored command line does not name the store:\n%s", out)
	}
	if strings.Contains(seen.String(), secret) {
		t.Errorf("the password shows:\n%s", seen.String())
	}
}
