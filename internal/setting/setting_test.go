package setting

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// TestError: an Error reads as the flag package's own errors do, naming
// the flag by the setting's name, and keeps what it wraps.
func TestError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{Errorf("smt-gain", "%q is not a number", "x"), `-smt-gain: "x" is not a number`},
		{New("think", "not with --rate"), "-think: not with --rate"},
		{Wrap("run", fs.ErrNotExist), "-run: file does not exist"},
		{fmt.Errorf("model fit: %w", Wrap("run", fs.ErrNotExist)), "model fit: -run: file does not exist"},
		{Together([]string{"db", "dsn"}, "give one database, not both"), "-db and -dsn: give one database, not both"},
		{Together([]string{"a", "b", "c"}, "%d of them", 3), "-a, -b and -c: 3 of them"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
		var e *Error
		if !errors.As(c.err, &e) || e.Name == "" {
			t.Errorf("%v: no setting named", c.err)
		}
	}
	if !errors.Is(Wrap("run", fs.ErrNotExist), fs.ErrNotExist) {
		t.Error("Wrap lost the error it wraps")
	}
}
