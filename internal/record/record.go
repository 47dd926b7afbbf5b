// Package record stores one run in the results store as it is measured:
// the run with this machine's topology and the command's configuration at
// the start, then this machine's preflight, then each item as soon as it
// exists, and the outcome at the end. What was measured before a failure
// or Ctrl-C stays in the store.
package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/sysfs"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/version"
)

// Run is one run being recorded. It is a sweep.Recorder.
type Run struct {
	ctx    context.Context
	log    io.Writer
	stored func(kind string, id int64)
	st     *store.Store
	run    *result.Run
}

// Start opens the store at storePath and records a new run of kind, begun
// by command (stored with any password hidden), with config as its
// configuration. Warnings and where the run went are printed to log;
// stored, when not nil, hears the run's kind and ID once it is finished.
func Start(ctx context.Context, storePath, kind, command string, config any, log io.Writer,
	stored func(kind string, id int64)) (*Run, error) {
	cfg, err := json.Marshal(config)
	if err != nil {
		return nil, fmt.Errorf("recording configuration: %w", err)
	}
	machine, err := topo.FromSysfs("/")
	if err != nil {
		fmt.Fprintf(log, "numalab: warning: run stored without topology: %v\n", err)
		machine = nil
	}
	host, _ := os.Hostname()
	st, err := store.Open(storePath)
	if err != nil {
		return nil, err
	}
	run := &result.Run{
		Kind:    kind,
		Command: result.Redact(command),
		Config:  cfg,
		Version: version.Version,
		Host:    host,
		Machine: machine,
		Started: time.Now(),
	}
	if err := st.Begin(run); err != nil {
		st.Close()
		return nil, err
	}
	r := &Run{ctx: ctx, log: log, stored: stored, st: st, run: run}
	if machine != nil {
		if err := r.Add(preflight.Kind.Of(*preflight.Read(sysfs.New("/"), machine))); err != nil {
			return nil, errors.Join(err, st.Close())
		}
	}
	return r, nil
}

// ID is the run's ID in the store.
func (r *Run) ID() int64 { return r.run.ID }

// Add stores one measured item of the run, made by its kind's Of
// (result.KindCell.Of(cell)); the store hides any password in it.
func (r *Run) Add(e result.Entry) error {
	_, err := r.st.Add(r.run.ID, e)
	return err
}

// Finish records how the run ended (complete, interrupted by Ctrl-C, or
// failed with err), closes the store and says where the run went.
func (r *Run) Finish(err error, headline string) error {
	status, msg := result.StatusComplete, ""
	switch {
	case errors.Is(err, context.Canceled) || r.ctx.Err() != nil:
		status = result.StatusInterrupted
	case err != nil:
		status, msg = result.StatusFailed, result.Redact(err.Error())
	}
	ferr := r.st.Finish(r.run.ID, time.Now(), status, headline, msg)
	cerr := r.st.Close()
	if r.stored != nil {
		r.stored(r.run.Kind, r.run.ID)
	}
	if ferr == nil && cerr == nil {
		fmt.Fprintf(r.log, "numalab: stored as run %d (%s) in %s\n", r.run.ID, status, r.st.Path())
	}
	return errors.Join(ferr, cerr)
}
