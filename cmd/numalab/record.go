package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/sysfs"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/version"
)

// storeFlag adds --store to a command that reads or writes runs. Its
// default is $NUMALAB_STORE, else numalab.db; --help shows it without its
// password.
func storeFlag(fs *flag.FlagSet) *string {
	v := storeValue(os.Getenv("NUMALAB_STORE"))
	if v == "" {
		v = "numalab.db"
	}
	fs.Var(&v, "store", "results `store`: an SQLite file (created if missing) or a postgres:// URL that many hosts share (schema numalab_results); $NUMALAB_STORE sets the default")
	return (*string)(&v)
}

// storeValue is a store flag's value, printed without its password.
type storeValue string

func (v *storeValue) String() string {
	if v == nil {
		return ""
	}
	return result.Redact(string(*v))
}

func (v *storeValue) Set(s string) error {
	*v = storeValue(s)
	return nil
}

// recorder stores one run as it is measured: Begin at start, each item as
// soon as it exists, the outcome at the end. What was measured before a
// failure or Ctrl-C stays in the store.
type recorder struct {
	ctx context.Context
	e   *env
	st  *store.Store
	run *result.Run
}

// startRun opens the store and records a new run of the given kind with
// this machine's topology, the command's configuration and, as its first
// item, the preflight of this machine's settings.
func startRun(ctx context.Context, e *env, storePath, kind string, config any) (*recorder, error) {
	cfg, err := json.Marshal(config)
	if err != nil {
		return nil, fmt.Errorf("recording configuration: %w", err)
	}
	machine, err := topo.FromSysfs("/")
	if err != nil {
		fmt.Fprintf(e.stderr, "numalab: warning: run stored without topology: %v\n", err)
		machine = nil
	}
	host, _ := os.Hostname()
	st, err := store.Open(storePath)
	if err != nil {
		return nil, err
	}
	run := &result.Run{
		Kind:    kind,
		Command: result.Redact("numalab " + shellJoin(e.args)),
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
	rec := &recorder{ctx: ctx, e: e, st: st, run: run}
	if machine != nil {
		if err := rec.Add(preflight.Kind.Of(*preflight.Read(sysfs.New("/"), machine))); err != nil {
			return nil, errors.Join(err, st.Close())
		}
	}
	return rec, nil
}

// withArgs is e with the command line a run stores replaced by args.
func (e *env) withArgs(args []string) *env {
	sub := *e
	sub.args = args
	return &sub
}

// shellJoin quotes each argument for a POSIX shell where it needs it, so
// that a stored command can be pasted back.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if a == "" || strings.ContainsFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@%+", r))
		}) {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// Add stores one measured item of the run, made by its kind's Of
// (result.KindCell.Of(cell)); the store hides any password in it.
func (r *recorder) Add(e result.Entry) error {
	_, err := r.st.Add(r.run.ID, e)
	return err
}

// Finish records how the run ended (complete, interrupted by Ctrl-C, or
// failed with err), closes the store and says where the run went.
func (r *recorder) Finish(err error, headline string) error {
	status, msg := result.StatusComplete, ""
	switch {
	case errors.Is(err, context.Canceled) || r.ctx.Err() != nil:
		status = result.StatusInterrupted
	case err != nil:
		status, msg = result.StatusFailed, result.Redact(err.Error())
	}
	ferr := r.st.Finish(r.run.ID, time.Now(), status, headline, msg)
	cerr := r.st.Close()
	if r.e.stored != nil {
		r.e.stored(r.run.Kind, r.run.ID)
	}
	if ferr == nil && cerr == nil {
		fmt.Fprintf(r.e.stderr, "numalab: stored as run %d (%s) in %s\n", r.run.ID, status, r.st.Path())
	}
	return errors.Join(ferr, cerr)
}
