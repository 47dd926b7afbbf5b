package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// LockDir takes an exclusive lock on dir (flock) until unlock: numalab
// processes that load or open a database file in one directory take
// turns, so the second finds the first's finished load, not a half-written
// file. While another holds the lock it waits, saying so through say at
// once and then every 5 s.
func LockDir(ctx context.Context, dir string, say func(string)) (unlock func(), err error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("locking %s against another numalab loading there: %w", dir, err)
	}
	start := time.Now()
	var said time.Time
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { unix.Close(fd) }, nil // closing releases the lock
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			unix.Close(fd)
			return nil, fmt.Errorf("locking %s against another numalab loading there: %w", dir, err)
		}
		if said.IsZero() || time.Since(said) >= 5*time.Second {
			said = time.Now()
			say(fmt.Sprintf(
				"waiting for another numalab process that is loading or opening a database in %s (%v so far; Ctrl-C stops)",
				dir, time.Since(start).Round(time.Second)))
		}
		select {
		case <-ctx.Done():
			unix.Close(fd)
			return nil, fmt.Errorf("waiting for another numalab process loading in %s: %w", dir, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
