package main

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/topo"
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

// rows prints a row per cell of a sweep as it is stored, with write.
type rows[M any] struct {
	*progress
	table io.Writer
	write func(io.Writer, sweep.Cell, M)
}

func (r *rows[M]) Measured(c sweep.Cell, m M) {
	r.Done()
	r.write(r.table, c, m)
}

// newRows prints a row per cell with write on stdout or, when stdout is
// for --json, on stderr.
func newRows[M any](e *env, asJSON bool, write func(io.Writer, sweep.Cell, M)) *rows[M] {
	r := &rows[M]{progress: newProgress(e.stderr), table: e.stdout, write: write}
	if asJSON {
		r.table = e.stderr
	}
	return r
}

// sweepOut says how startSweep plans a sweep and where it prints.
type sweepOut struct {
	asJSON  bool // stdout is for --json: the rows go to stderr
	spread  bool // stream i pinned to the i-th CPU of its placement alone
	machine bool // print what this machine cannot compare (sweep.MachineNotes) first
	hog     int  // --hog, refused when more than a cell's placement has (cliflag.CheckHog)
}

// startSweep is how a sweep command starts: this machine's topology, the
// cells of specs on it (numbered in order across them), and the printer of
// a row per cell, on stdout or, when stdout is for --json, on stderr,
// which has printed the planner's notes; an error when out.hog is more
// than a cell's placement has. The caller calls its Done.
func startSweep[M any](e *env, out sweepOut, write func(io.Writer, sweep.Cell, M), specs ...sweep.Spec) (*result.Topology, []sweep.Cell, *rows[M], error) {
	machine, err := topo.FromSysfs("/")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading this machine's topology: %w", err)
	}
	var cells []sweep.Cell
	var notes []string
	if out.machine {
		notes = sweep.MachineNotes(machine)
	}
	for _, spec := range specs {
		more, n, err := sweep.Resolve(machine, spec, out.spread)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, c := range more {
			c.Index = len(cells)
			cells = append(cells, c)
		}
		notes = append(notes, n...)
	}
	r := newRows(e, out.asJSON, write)
	for _, n := range notes {
		r.Note("note: " + n)
	}
	if err := cliflag.CheckHog(out.hog, cells); err != nil {
		return nil, nil, nil, err
	}
	return machine, cells, r, nil
}

// finishRun ends a sweep command: the run stored as ended by err, with
// its headline for 'numalab runs', then, for --json, out printed on
// stdout. It returns err with whatever else failed.
func finishRun(e *env, rec *recorder, err error, headline string, asJSON bool, out any) error {
	if ferr := rec.Finish(err, headline); ferr != nil {
		return errors.Join(err, ferr)
	}
	if asJSON {
		if jerr := writeJSON(e.stdout, out); jerr != nil {
			return errors.Join(err, jerr)
		}
	}
	return err
}
