package insert

import (
	"context"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/engine"
)

// checkEndSessions leaves a server session running a long sleep after
// its client dropped it mid-statement, as a stream whose window closes
// mid-batch does, and checks that endSessions waits the grace, ends the
// session, and returns once the server has no such session. On MariaDB
// the driver drops the connection when the statement's context ends.
func checkEndSessions(t *testing.T, eng engine.Engine) {
	ctx := context.Background()
	c, err := eng.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var id int32
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if eng.Name() == "postgres" {
		// A stream's loader speaks on the socket itself and only drops
		// it (its context's end shuts the socket); so does this. Through
		// pgx the drop would fail its read, and pgx then sends a cancel
		// request, after which the backend ends at once (a CI run saw it
		// gone 20 ms after the drop).
		id = int32(c.BackendPID())
		rep, err := c.(engine.Repeater).Repeat(ctx, "SELECT pg_sleep(60)", false)
		if err != nil {
			t.Fatal(err)
		}
		drop, stop := context.WithCancel(ctx)
		called := make(chan error, 1)
		go func() { called <- rep.Call(drop) }()
		for end := time.Now().Add(10 * time.Second); !sleeping(t, eng, id); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("backend %d did not start pg_sleep within 10 s", id)
			}
		}
		stop()
		if err := <-called; err == nil {
			t.Fatal("the call of pg_sleep(60) returned no error when its context ended")
		}
	} else {
		err := c.Query(ctx, "SELECT CONNECTION_ID()", nil, func(v []any) error {
			n, _ := v[0].(int64)
			id = int32(n)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		c.Exec(short, "SELECT SLEEP(60)")
	}
	if !alive(t, eng, id) {
		t.Fatalf("session %d ended with its client; want it still sleeping on the server, as a batch read before "+
			"the client left is still run", id)
	}
	if err := endSessions(ctx, eng, []int32{id}, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if alive(t, eng, id) {
		t.Errorf("session %d still on the server after endSessions", id)
	}
}

func alive(t *testing.T, eng engine.Engine, id int32) bool {
	q := "SELECT count(*) FROM pg_stat_activity WHERE pid = $1"
	if eng.Name() == "mariadb" {
		q = "SELECT count(*) FROM information_schema.processlist WHERE id = ?"
	}
	var n int
	if err := eng.DB().QueryRow(q, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// sleeping says that PostgreSQL's backend id runs the sleep. Its state
// alone is not enough: it can read active for the statement before
// (a CI run closed the socket then, and the idle backend ended at once).
func sleeping(t *testing.T, eng engine.Engine, id int32) bool {
	var n int
	if err := eng.DB().QueryRow(
		"SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query = 'SELECT pg_sleep(60)'",
		id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}
