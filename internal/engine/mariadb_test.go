package engine

import (
	"context"
	"errors"
	"net"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/mariaserver/mytest"
	"github.com/numalab/numalab/internal/place"
)

// my is the managed MariaDB server the tests of this package share; they
// reach it through its DSN, as a user's server.
var my = mytest.New(mariaserver.Config{BufferPool: 64 << 20})

func TestMariaDB(t *testing.T) {
	s := my.Server(t)
	ctx := context.Background()
	e, err := Open(ctx, "mariadb", Options{DSN: s.DSN(), Schema: "numalab_engine_test", PinBackends: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if strings.Contains(e.(*myEngine).where, s.Password()) {
		t.Errorf("where %q shows the password", e.(*myEngine).where)
	}
	if _, err := e.DB().ExecContext(ctx, "DROP TABLE IF EXISTS t"); err != nil { // left by an earlier -count round
		t.Fatal(err)
	}
	if _, err := e.DB().ExecContext(ctx, "CREATE TABLE t (id int PRIMARY KEY, name varchar(20), price decimal(10,2), "+
		"n decimal(10,0), f double, d date)"); err != nil {
		t.Fatal(err)
	}
	b, err := e.Bulk(ctx, "t", []string{"id", "name", "price", "n", "f", "d"})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(1998, 12, 1, 0, 0, 0, 0, time.UTC)
	const rows = 2500 // more than one INSERT of myBulkRows, and a remainder
	for i := range rows {
		if err := b.Append(i, "row", 1.25, i, 0.5, day); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil || b.Rows() != rows {
		t.Fatalf("bulk load: %v, %d rows; want %d", err, b.Rows(), rows)
	}

	// A stream's connection: its server thread is pinned to this thread's
	// CPUs, and Query normalises values as the other engines do.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpus, err := place.ProcessCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if err := place.Pin(cpus[len(cpus)-1:]); err != nil {
		t.Fatal(err)
	}
	defer place.Pin(cpus)
	c, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := place.AffinityPID(c.BackendPID()); err != nil || !slices.Equal(got, cpus[len(cpus)-1:]) {
		t.Errorf("server thread %d runs on CPUs %v (%v), want %v", c.BackendPID(), got, err, cpus[len(cpus)-1:])
	}
	if mc, ok := c.(*myConn); !ok || mc.sock == nil || mc.tid != c.BackendPID() {
		t.Errorf("connection %+v, want its socket and thread", c)
	}
	var got [][]any
	err = c.Query(ctx, "SELECT count(*), sum(id), min(name), min(price), min(n), min(f), min(d) FROM t",
		nil, func(v []any) error {
			got = append(got, slices.Clone(v))
			return nil
		})
	want := []any{int64(rows), int64(rows * (rows - 1) / 2), "row", 1.25, int64(0), 0.5, day}
	if err != nil || len(got) != 1 || !slices.Equal(got[0], want) {
		t.Errorf("Query = %#v, %v; want %#v", got, err, want)
	}

	if err := e.SetDOP(ctx, 1); err != nil {
		t.Errorf("SetDOP(1): %v", err)
	}
	if err := e.SetDOP(ctx, 2); err == nil && runtime.NumCPU() >= 2 {
		t.Error("SetDOP(2) accepted: MariaDB runs a query on one thread")
	}
	in, err := e.Describe(ctx)
	if err != nil || in.Version != s.Version() || in.Settings["innodb_buffer_pool_size"] != "67108864" {
		t.Errorf("Describe = %+v, %v", in, err)
	}
	plan, err := e.Explain(ctx, "SELECT name FROM t WHERE id = ?", 7)
	if err != nil || !strings.Contains(plan, "key=PRIMARY") || strings.Contains(plan, "rows=") {
		t.Errorf("Explain = %q, %v; want the primary key and no row estimate", plan, err)
	}
	st, err := e.Prewarm(ctx)
	if err != nil || st.Objects != 1 || st.Bytes <= 0 {
		t.Errorf("Prewarm = %+v, %v; want the one index of t", st, err)
	}

	// Another engine on the same database: numalab's own, so accepted.
	e2, err := Open(ctx, "mariadb", Options{DSN: s.DSN(), Schema: "numalab_engine_test"})
	if err != nil {
		t.Errorf("opening numalab's own database again: %v", err)
	} else {
		e2.Close()
	}
}

// TestMariaDBRefusesOtherDatabase: a database numalab did not create is
// neither used nor dropped.
func TestMariaDBRefusesOtherDatabase(t *testing.T) {
	s := my.Server(t)
	ctx := context.Background()
	e, err := Open(ctx, "mariadb", Options{DSN: s.DSN(), Schema: "numalab_engine_test_setup"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.DB().ExecContext(ctx, "DROP DATABASE IF EXISTS users_own") // left by an earlier -count round
	if err == nil {
		_, err = e.DB().ExecContext(ctx, "CREATE DATABASE users_own")
	}
	e.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, "mariadb", Options{DSN: s.DSN(), Schema: "users_own"})
	if !errors.Is(err, ErrNotOurSchema) {
		t.Errorf("opening a database numalab did not create: %v, want ErrNotOurSchema", err)
	}
}

func TestMariaDBConnectErrorsHidePassword(t *testing.T) {
	s := my.Server(t)
	const secret = "s3cret-pw"
	_, err := Open(context.Background(), "mariadb", Options{DSN: "numalab:" + secret + "@unix(" + s.Socket() + ")/"})
	if err == nil || strings.Contains(err.Error(), secret) ||
		!strings.Contains(err.Error(), "check the user name and password") {
		t.Errorf("wrong password: %v; want access denied, said without the password", err)
	}
}

// TestMariaDBConnClosedByCancel: a stream's connection whose call was
// cancelled in flight, as at a cell's window end, closes without an error
// even after a later call found it dropped (the driver closes the socket
// on cancel; database/sql then closes the Conn on driver.ErrBadConn, and
// a Close after that said "connection is already closed", which failed a
// sweep in CI).
func TestMariaDBConnClosedByCancel(t *testing.T) {
	s := my.Server(t)
	ctx := context.Background()
	e, err := Open(ctx, "mariadb", Options{DSN: s.DSN(), Schema: "numalab_engine_test"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err = c.Exec(cctx, "SELECT SLEEP(10)")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call cancelled in flight returned %v, want the context's deadline", err)
	}
	if err := c.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("a call after the cancel succeeded: the driver kept the cancelled connection, so this test shows nothing")
	}
	if err := c.Close(); err != nil {
		t.Errorf("closing the dropped connection: %v, want nil", err)
	}
}

// TestMariaDBServerClosesAtOnce: a server that accepts the connection and
// closes it before the handshake is said to have done so, not with the
// driver's bare "invalid connection" (PostgreSQL's driver says what
// happened: an unexpected EOF).
func TestMariaDBServerClosesAtOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener here: %v", err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e, err := Open(ctx, "mariadb", Options{DSN: "numalab:secret@tcp(" + ln.Addr().String() + ")/"})
	if err == nil {
		e.Close()
		t.Fatal("opened a server that closes every connection at once")
	}
	if msg := err.Error(); !strings.Contains(msg, "the server closed the connection at once, "+
		"before it answered the handshake") || strings.Contains(msg, "secret") {
		t.Errorf("error %q: want it to say the server closed the connection at once, without the password", msg)
	}
}
