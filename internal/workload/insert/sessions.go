package insert

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/engine"
)

// sessionGrace is how long a cell's server sessions may take to end
// after their connections closed, before Begin ends them itself; killWait
// how long they may then take to go.
const (
	sessionGrace = 10 * time.Second
	killWait     = 10 * time.Second
)

// endSessions waits until the server sessions ids (PostgreSQL backends,
// MariaDB connection ids) of the last cell have ended. A stream whose
// window closed mid-batch closes its connection at once, but the server
// finishes the statement it had read: such a batch committed after the
// next cell emptied the table and counted in that cell (a fresh-clone CI
// run found 200 rows, one batch, twice in a cell's table). Sessions still
// there after grace are ended (they are numalab's own), and an error says
// which outlived killWait more. Every query has a deadline: a server that
// stops answering fails this, it does not hang it.
func endSessions(ctx context.Context, eng engine.Engine, ids []int32, grace time.Duration) error {
	if len(ids) == 0 {
		return nil
	}
	sql := engine.SQLOf(eng.Name())
	if sql == nil || sql.SessionCount(0) == "" {
		return nil
	}
	count := func(id int32) string { return sql.SessionCount(int(id)) }
	kill := func(id int32) string { return sql.KillSession(int(id)) }
	ctx, cancel := context.WithTimeout(ctx, grace+killWait+5*time.Second)
	defer cancel()
	left := func() ([]int32, error) {
		var alive []int32
		for _, id := range ids {
			var n int
			if err := eng.DB().QueryRowContext(ctx, count(id)).Scan(&n); err != nil {
				return nil, fmt.Errorf("checking that the last cell's server session %d ended: %w", id, err)
			}
			if n > 0 {
				alive = append(alive, id)
			}
		}
		return alive, nil
	}
	wait := func(d time.Duration) ([]int32, error) {
		end := time.Now().Add(d)
		for {
			alive, err := left()
			if err != nil || len(alive) == 0 || time.Now().After(end) {
				return alive, err
			}
			select {
			case <-ctx.Done():
				return alive, ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	alive, err := wait(grace)
	if err != nil || len(alive) == 0 {
		return err
	}
	var errs []error
	for _, id := range alive {
		if _, err := eng.DB().ExecContext(ctx, kill(id)); err != nil && !strings.Contains(err.Error(), "Unknown thread id") {
			errs = append(errs, fmt.Errorf("ending the last cell's server session %d: %w", id, err))
		}
	}
	if alive, err = wait(killWait); err != nil || len(alive) == 0 {
		return errors.Join(append(errs, err)...)
	}
	return errors.Join(append(errs,
		fmt.Errorf("the last cell's server sessions %s still run %v after their connections closed and %v after "+
			"numalab ended them: the server does not end them; stop it, or restart numalab", join(alive), grace, killWait))...)
}

func itoa(id int32) string { return strconv.Itoa(int(id)) }

func join(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = itoa(id)
	}
	return strings.Join(s, ", ")
}
