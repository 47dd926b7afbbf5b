package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress prints what a long command is doing to stderr: on a terminal one
// line that rewrites itself, elsewhere (CI, a pipe) a plain line at most
// once per second, so logs stay short. Packages never print; they take a
// func(string) and the command passes progress.Say.
type progress struct {
	mu   sync.Mutex
	w    io.Writer
	tty  bool
	last time.Time
	wide int
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, tty: isTerminal(w)}
}

// Say reports the current step. Safe for concurrent use.
func (p *progress) Say(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.tty {
		pad := max(p.wide-len(msg), 0)
		fmt.Fprintf(p.w, "\r%s%*s", msg, pad, "")
		p.wide = len(msg)
		return
	}
	if now.Sub(p.last) < time.Second {
		return
	}
	p.last = now
	fmt.Fprintln(p.w, msg)
}

// Note prints a line worth keeping, ending the progress line first.
func (p *progress) Note(line string) {
	p.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, line)
}

// Done ends the progress line so that the next output starts clean.
func (p *progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.wide > 0 {
		fmt.Fprintf(p.w, "\r%*s\r", p.wide, "")
		p.wide = 0
	}
}
