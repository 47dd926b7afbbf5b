package engine

import (
	"cmp"
	"context"
	"fmt"
	"time"
)

// DefaultConnectTimeout bounds connecting to a server when
// Options.ConnectTimeout is 0: a server on this machine or the next
// answers in milliseconds, one that accepts and never answers (a wrong
// port, a hung server) would otherwise be waited for forever.
const DefaultConnectTimeout = 10 * time.Second

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
	Err   error // the driver's error, for errors.Is and errors.As
}

func (e *ConnectTimeoutError) Error() string {
	return fmt.Sprintf("no answer within %v (--connect-timeout; is a server of this engine listening there, and answering?)", e.Bound)
}

func (e *ConnectTimeoutError) Unwrap() error { return e.Err }
