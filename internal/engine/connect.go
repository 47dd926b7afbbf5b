package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/numalab/numalab/internal/managed"
)

// DefaultConnectTimeout bounds connecting to a --dsn server when
// Options.ConnectTimeout is 0: a server on this machine or the next
// answers in milliseconds, one that accepts and never answers (a wrong
// port, a hung server) would otherwise be waited for forever.
const DefaultConnectTimeout = 10 * time.Second

// OwnServerConnectTimeout bounds connecting to numalab's own server when
// Options.ConnectTimeout is 0. That server answered when it started, so a
// connection that takes long is the machine stalling more likely than a
// server that never answers: CI once waited over 10 s for a stream's
// connection to the own PostgreSQL server, right after the load (the
// cause was not seen; here, beside the emulated machines' tests, 9,000
// connections in six runs took 3.1 to 4.8 ms at the median, 38 ms at
// most). A minute still ends a run whose server hangs.
const OwnServerConnectTimeout = time.Minute

// connectBound is the bound on connecting to a server: d when set, else
// the default for numalab's own server (own) or a --dsn one.
func connectBound(d time.Duration, own bool) time.Duration {
	if d == 0 && own {
		return OwnServerConnectTimeout
	}
	return cmp.Or(d, DefaultConnectTimeout)
}

// ConnectBound runs connect with ctx bounded by d (DefaultConnectTimeout
// when 0). An error that came because the bound passed, and not because
// ctx itself ended, says so: a *ConnectTimeoutError.
func ConnectBound[T any](ctx context.Context, d time.Duration, connect func(context.Context) (T, error)) (T, error) {
	d = cmp.Or(d, DefaultConnectTimeout)
	bctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	v, err := connect(bctx)
	if err != nil && ctx.Err() == nil && bctx.Err() != nil {
		err = &ConnectTimeoutError{Bound: d, Err: err}
	}
	return v, err
}

// ConnectTimeoutError is a connection that got no answer within its bound.
type ConnectTimeoutError struct {
	Bound time.Duration
	// Log is, for numalab's own server, the end of its log ("" for a
	// --dsn server: ownServerTimeout sets it).
	Log string
	Err error // the driver's error, for errors.Is and errors.As
}

func (e *ConnectTimeoutError) Error() string {
	if e.Log != "" {
		return fmt.Sprintf("no answer within %v from numalab's own server, which answered when it started "+
			"(--connect-timeout: raise it if this machine stalls that long)%s", e.Bound, e.Log)
	}
	return fmt.Sprintf(
		"no answer within %v (--connect-timeout; is a server of this engine listening there, and answering?)", e.Bound)
}

func (e *ConnectTimeoutError) Unwrap() error { return e.Err }

// ownServerTimeout adds to err, when it is a ConnectTimeoutError, the end
// of the log at logPath, numalab's own server's ("" for a --dsn server:
// nothing is added), where the server says what kept it.
func ownServerTimeout(err error, logPath string) error {
	var te *ConnectTimeoutError
	if logPath != "" && errors.As(err, &te) {
		te.Log = managed.LogTail(logPath)
		if te.Log == "" {
			te.Log = fmt.Sprintf("; its log %s is empty", logPath)
		}
	}
	return err
}
