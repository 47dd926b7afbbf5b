package units

import (
	"errors"
	"flag"
	"io"
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Bytes{
		"4096": 4096, "0": 0, "512B": 512, "64k": 64 << 10, "32KiB": 32 << 10, "8 KiB": 8 << 10, "30720K\n": 30 << 20,
		"2MB": 2 << 20, "1.5m": 3 << 19, "1.25MiB": 5 << 18, "1g": 1 << 30, "4 GiB": 4 << 30, "1.5G": 1536 << 20,
		"2TB": 2 << 40, "1pib": 1 << 50, ".5K": 512, "8191P": 8191 << 50,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", " ", "K", "abc", "1XB", "12X", "-5M", "+5M", "0.3", "1.2.3K", "1e3", "1 k i b",
		"8192P", "9223372036854775808"} {
		if got, err := Parse(in); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %d, %v; want an ErrSyntax error", in, got, err)
		}
	}
}

func TestString(t *testing.T) {
	for b, want := range map[Bytes]string{
		0: "0B", 100: "100B", 1023: "1023B", 1024: "1KiB", 4096: "4KiB", 3 << 19: "1.5MiB", 5 << 18: "1.25MiB",
		1 << 30: "1GiB", 33265098342: "30.98GiB", 1<<20 - 1: "1MiB", 1<<40 + 1<<39: "1.5TiB", 3 << 50: "3PiB",
		1 << 60: "1024PiB", -1536: "-1.5KiB",
	} {
		if got := b.String(); got != want {
			t.Errorf("Bytes(%d).String() = %q, want %q", int64(b), got, want)
		}
	}
}

// TestRoundTrip: what String prints, Parse reads back, exactly when no
// more than two decimals were dropped.
func TestRoundTrip(t *testing.T) {
	for _, b := range []Bytes{0, 1, 1000, 4096, 5 << 18, 3 << 19, 1 << 30, 7 << 40, 3 << 50,
		math.MaxInt64 / 1024 / 1024 * 1024 * 1024} {
		if b >= 1<<50 && b%(1<<50) != 0 {
			continue // more than two decimals of PiB
		}
		got, err := Parse(b.String())
		if err != nil || got != b {
			t.Errorf("Parse(%q) = %d, %v; want %d", b.String(), got, err, int64(b))
		}
	}
}

func TestFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	size := Bytes(1 << 30)
	seq := List{64 << 10, 1 << 20}
	fs.Var(&size, "size", "")
	fs.Var(&seq, "seq", "")
	if d := fs.Lookup("size").DefValue; d != "1GiB" {
		t.Errorf("default shown as %q, want 1GiB", d)
	}
	if d := fs.Lookup("seq").DefValue; d != "64KiB,1MiB" {
		t.Errorf("default list shown as %q, want 64KiB,1MiB", d)
	}
	if err := fs.Parse([]string{"--size", "4g", "--seq", "8k, 256KiB"}); err != nil {
		t.Fatal(err)
	}
	if size != 4<<30 || seq.String() != "8KiB,256KiB" {
		t.Errorf("parsed --size %d --seq %v", size, seq)
	}
	if err := fs.Parse([]string{"--size", "lots"}); err == nil || size != 4<<30 {
		t.Errorf("--size lots: %v, size now %d; want an error and the size unchanged", err, size)
	}
	if err := fs.Parse([]string{"--seq", "8k,,1m"}); err == nil || seq.String() != "8KiB,256KiB" {
		t.Errorf("--seq 8k,,1m: %v, list now %v; want an error and the list unchanged", err, seq)
	}
}
