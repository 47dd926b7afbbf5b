package cliflag

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestParseCheckedReportsAll: every refused value is named by its flag,
// all in one list; a refused value leaves its flag's default; Missing
// names the flags not given with what each wants.
func TestParseCheckedReportsAll(t *testing.T) {
	fs := New(&bytes.Buffer{}, "x", "Usage: x")
	n := RangedInt(fs, "n", 4, 1, 8, "")
	least := LeastInt(fs, "least", 2, 2, "")
	d := RangedDuration(fs, "d", time.Second, time.Millisecond, time.Minute, "")
	ghz := Number(fs, "ghz", 0, Above(0), "want GHz above 0", "")
	frac := Number(fs, "frac", 0.5, Between(0, 1), "want a fraction from 0 to 1", "")
	ns := Number(fs, "ns", 1, AtLeast(0), "want 0 or more ns", "")
	b := fs.Bool("b", false, "")
	done, bad, err := ParseChecked(&bytes.Buffer{}, fs,
		[]string{"-n", "9", "-least", "1", "-d", "2m", "-frac", "NaN", "-ns", "0", "-b"})
	if done || err != nil {
		t.Fatalf("done %v, err %v", done, err)
	}
	bad.Missing(fs, "ghz", "ns")
	want := []string{
		`-n: "9" is not valid: want a whole number from 1 to 8`,
		`-least: "1" is not valid: want a whole number, 2 or more`,
		`-d: "2m" is not valid: want a duration from 1ms to 1m0s`,
		`-frac: "NaN" is not valid: want a fraction from 0 to 1`,
		`-ghz: missing: want GHz above 0`,
	}
	if len(bad) != len(want) {
		t.Fatalf("bad %q\nwant %q", bad, want)
	}
	for i := range want {
		if bad[i].Error() != want[i] {
			t.Errorf("error %d: %q, want %q", i, bad[i], want[i])
		}
	}
	if *n != 4 || *least != 2 || *d != time.Second || *frac != 0.5 || *ns != 0 || *ghz != 0 || !*b {
		t.Errorf("values n %d least %d d %v frac %v ns %v ghz %v b %v; want the defaults kept, ns 0 and b set",
			*n, *least, *d, *frac, *ns, *ghz, *b)
	}
}

// TestParseHelpAndStray: --help prints the usage once, to stdout, with
// the defaults as their own types print them; an unknown flag prints the
// error and the usage once to stderr; a stray argument is refused.
func TestParseHelpAndStray(t *testing.T) {
	var out, errb bytes.Buffer
	fs := New(&errb, "x", "Usage: x [flags]\n\nExample: x -n 2")
	RangedInt(fs, "n", 4, 1, 8, "count")
	done, _, err := ParseChecked(&out, fs, []string{"--help"})
	if !done || err != nil || errb.Len() > 0 || strings.Count(out.String(), "Usage: x") != 1 ||
		!strings.Contains(out.String(), "count (default 4)") {
		t.Errorf("--help: done %v err %v\nstdout %q\nstderr %q", done, err, out.String(), errb.String())
	}
	out.Reset()
	fs = New(&errb, "x", "Usage: x")
	if done, err := ParseNoArgs(&out, fs, []string{"--bogus"}); !done || !errors.Is(err, ErrUsage) || out.Len() > 0 ||
		!strings.Contains(errb.String(), "bogus") || strings.Count(errb.String(), "Flags:") != 1 {
		t.Errorf("unknown flag: done %v err %v\nstdout %q\nstderr %q", done, err, out.String(), errb.String())
	}
	fs = New(&errb, "x", "Usage: x")
	if done, err := ParseNoArgs(&out, fs, []string{"extra"}); !done || err == nil ||
		!strings.Contains(err.Error(), `unexpected argument "extra"`) {
		t.Errorf("stray argument: done %v err %v", done, err)
	}
}

// TestParseInts: a list round-trips through FormatInts; a bad one is
// refused by its flag's name with an example.
func TestParseInts(t *testing.T) {
	v, err := ParseInts("streams", "1, 2,4", 1)
	if err != nil || FormatInts(v) != "1,2,4" {
		t.Errorf("ParseInts: %v, %v", v, err)
	}
	for _, s := range []string{"0", "1,,2", "x", ""} {
		if _, err := ParseInts("streams", s, 1); err == nil ||
			!strings.HasPrefix(err.Error(), `-streams: "`+s+`" is not a list`) {
			t.Errorf("ParseInts(%q): %v", s, err)
		}
	}
}
