package insert

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

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
	if n := c.Native(); n.Postgres != nil {
		// A stream's loader speaks on the socket itself and only drops
		// it; so does this. Through pgx the drop would fail its read, and
		// pgx then sends a cancel request, after which the backend ends at
		// once (a CI run saw it gone 20 ms after the drop).
		id = int32(c.BackendPID())
		conn, fe, err := engine.TakeOver(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		fe.Send(&pgproto3.Query{String: "SELECT pg_sleep(60)"})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(10 * time.Second); !sleeping(t, eng, id); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("backend %d did not start pg_sleep within 10 s", id)
			}
		}
		conn.Close()
	} else {
		if err := n.MariaDB.Conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		n.MariaDB.Conn.ExecContext(short, "SELECT SLEEP(60)")
	}
	if !alive(t, eng, id) {
		t.Fatalf("session %d ended with its client; want it still sleeping on the server, as a batch read before the client left is still run", id)
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
	if err := eng.DB().QueryRow("SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query = 'SELECT pg_sleep(60)'", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}
