package cliflag

import (
	"bytes"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestStore: --store defaults to $NUMALAB_STORE, and --help shows it
// without its password while the command gets it whole.
func TestStore(t *testing.T) {
	t.Setenv("NUMALAB_STORE", "postgres://me:secret@db/r")
	var out bytes.Buffer
	fs := New(io.Discard, "x", "Usage: x")
	p := Store(fs)
	if *p != "postgres://me:secret@db/r" {
		t.Errorf("default %q; want $NUMALAB_STORE", *p)
	}
	if done, err := Parse(&out, fs, []string{"--help"}); !done || err != nil ||
		strings.Contains(out.String(), "secret") || !strings.Contains(out.String(), "postgres://me:xxxxx@db/r") {
		t.Errorf("--help: %v, %v\n%s", done, err, out.String())
	}
	t.Setenv("NUMALAB_STORE", "")
	if DefaultStore() != "numalab.db" {
		t.Errorf("DefaultStore without $NUMALAB_STORE: %q", DefaultStore())
	}
}

// TestStores: --store once a store, in order; an empty one refused.
func TestStores(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	p := Stores(fs, "")
	if err := fs.Parse([]string{"--store", "a.db", "--store", "b.db"}); err != nil ||
		!slices.Equal(*p, []string{"a.db", "b.db"}) {
		t.Errorf("stores %q, %v", *p, err)
	}
	if err := fs.Parse([]string{"--store", ""}); err == nil || !strings.Contains(err.Error(), "empty store") {
		t.Errorf("an empty --store: %v", err)
	}
}
