package managedtest

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
)

// Shared is one managed server of type S for a package's tests, started
// on first use (packages pgtest and mytest name it for their server).
type Shared[S interface{ Stop() error }] struct {
	title      string
	noBinaries error
	start      func() (S, error)

	once    sync.Once
	s       S
	started bool
	err     error
}

// NewShared returns a server that Server starts with start. A start
// error that is noBinaries skips the test that asked, naming the server
// by title ("PostgreSQL"); any other fails it.
func NewShared[S interface{ Stop() error }](title string, noBinaries error, start func() (S, error)) *Shared[S] {
	return &Shared[S]{title: title, noBinaries: noBinaries, start: start}
}

// Server returns the server, starting it on the first call.
func (p *Shared[S]) Server(tb testing.TB) S {
	tb.Helper()
	p.once.Do(func() {
		p.s, p.err = p.start()
		p.started = p.err == nil
	})
	switch {
	case errors.Is(p.err, p.noBinaries):
		tb.Skipf("no %s server for this test: %v", p.title, p.err)
	case p.err != nil:
		tb.Fatal(p.err)
	}
	return p.s
}

// Stop stops the server if one started; it is safe to call more than once.
func (p *Shared[S]) Stop() error {
	if !p.started {
		return nil
	}
	return p.s.Stop()
}

// Main runs the tests, then each cleanup (say, closing the engines that
// use the server), then stops the server, and returns the exit code for
// os.Exit: m.Run's, or 1 when stopping fails (said on stderr).
func (p *Shared[S]) Main(m *testing.M, cleanup ...func()) int {
	code := m.Run()
	for _, f := range cleanup {
		f()
	}
	if err := p.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	return code
}
