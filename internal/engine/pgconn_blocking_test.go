package engine

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// blockingPair returns a blockingConn dialed to a unix socket and the
// server side of it.
// blockingPair is a blocking conn and its peer over network, unix or tcp
// (loopback).
func blockingPair(t *testing.T, network string) (net.Conn, net.Conn) {
	t.Helper()
	addr := filepath.Join(t.TempDir(), "s")
	if network == "tcp" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		acc <- c
	}()
	c, err := dialBlocking(context.Background(), network, l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-acc
	t.Cleanup(func() { c.Close(); s.Close() })
	return c, s
}

func TestBlockingConnReadsWritesAndWaitsLong(t *testing.T) {
	c, s := blockingPair(t, "unix")
	go func() {
		time.Sleep(100 * time.Millisecond) // longer than rawWait: the polite path
		s.Write([]byte("hello"))
	}()
	buf := make([]byte, 16)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("Read = %q, %v", buf[:n], err)
	}
	if _, err := c.Write([]byte("back")); err != nil {
		t.Fatal(err)
	}
	n, _ = s.Read(buf)
	if string(buf[:n]) != "back" {
		t.Errorf("server read %q", buf[:n])
	}
	s.Close()
	if _, err := c.Read(buf); err == nil {
		t.Error("Read after the peer closed succeeded")
	}
}

func TestBlockingConnDeadlineInterrupts(t *testing.T) {
	c, _ := blockingPair(t, "unix")
	c.SetDeadline(time.Now().Add(150 * time.Millisecond))
	t0 := time.Now()
	_, err := c.Read(make([]byte, 8))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Read past the deadline: %v, want a deadline error", err)
	}
	if d := time.Since(t0); d < 100*time.Millisecond || d > 2*time.Second {
		t.Errorf("the read ended after %v, want about 150ms", d)
	}
}

// TestPostgresStreamCancel: a stream connection's long query ends soon
// after its context does.
func TestPostgresStreamCancel(t *testing.T) {
	s := pg.Server(t)
	eng, err := Open(context.Background(), "postgres", Options{DSN: s.DSN(), Schema: "numalab_engine_test"})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	c, err := eng.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	err = c.Exec(ctx, "SELECT pg_sleep(10)")
	if err == nil {
		t.Fatal("pg_sleep(10) with a 200ms context succeeded")
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("cancelled after %v, want well under 10s", d)
	}
}

// TestBlockingConnNotInNetpoller: no epoll instance of this process
// watches the blocking socket (the netpoller would wake a thread at every
// answer), and the socket is in blocking mode.
func TestBlockingConnNotInNetpoller(t *testing.T) {
	c, _ := blockingPair(t, "unix")
	fd := c.(*blockingConn).fd
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK != 0 {
		t.Errorf("socket flags %#x (%v); want blocking", fl, err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	polls := 0
	for _, e := range fds {
		if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); l != "anon_inode:[eventpoll]" {
			continue
		}
		polls++
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(info), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "tfd:" && f[1] == strconv.Itoa(fd) {
				t.Errorf("epoll fd %s watches the blocking socket %d: %s", e.Name(), fd, line)
			}
		}
	}
	if polls == 0 {
		t.Error("no epoll instance found: the netpoller should be running (the test dialed through it)")
	}
}

// TestBlockingConnLetsTheWorldStop: a garbage collection does not wait for
// the answer of a stream's read in its raw system call. The collector's
// preemption signals interrupt the read's raw wait, which then waits on
// politely (a raw retry would restart the wait's timeout at every signal, and the
// collection would wait as long as the server: here the answer comes from
// another process 2 s later).
func TestBlockingConnLetsTheWorldStop(t *testing.T) {
	// On a unix socket the wait is a raw poll, on TCP a raw read.
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) { letsTheWorldStop(t, network) })
	}
}

func letsTheWorldStop(t *testing.T, network string) {
	c, s := blockingPair(t, network)
	c.(*blockingConn).rawWait = 10 * time.Second // a raw wait longer than the test
	tv := unix.NsecToTimeval((10 * time.Second).Nanoseconds())
	if err := unix.SetsockoptTimeval(c.(*blockingConn).fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	f, err := s.(interface{ File() (*os.File, error) }).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	peer := exec.Command("sh", "-c", "sleep 2; printf x")
	peer.Stdout = f
	if err := peer.Start(); err != nil {
		t.Fatal(err)
	}
	defer peer.Wait()
	read := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 8))
		read <- err
	}()
	time.Sleep(100 * time.Millisecond) // the read is in its system call
	t0 := time.Now()
	runtime.GC()
	if d := time.Since(t0); d > time.Second {
		t.Errorf("a garbage collection took %v while a read waited; want it not to wait for the read", d)
	}
	if err := <-read; err != nil {
		t.Errorf("the read: %v", err)
	}
}

// TestBlockingConnWokenOnlyToRead: a read waiting for the answer is not
// woken when the peer reads the request. On a unix socket that read frees
// the writer's send buffer and the kernel wakes every waiter on the
// socket, a reader blocked in read(2) too, which finds nothing and
// sleeps again: two voluntary context switches per answer instead of
// one. The reading thread's switches are counted over calls whose peer
// reads the request, then answers, each a millisecond later.
func TestBlockingConnWokenOnlyToRead(t *testing.T) {
	c, s := blockingPair(t, "unix")
	// Every answer within the raw wait, however slow a loaded machine is
	// to run the answering goroutine (with the 20 ms default, a late one
	// took the polite path: a second sleep this test does not test).
	c.(*blockingConn).rawWait = 10 * time.Second
	const calls = 20
	go func() {
		buf := make([]byte, 8)
		for range calls {
			time.Sleep(time.Millisecond) // the client waits in its read
			if _, err := s.Read(buf); err != nil {
				return
			}
			time.Sleep(time.Millisecond)
			if _, err := s.Write([]byte("answer")); err != nil {
				return
			}
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]byte, 8)
	var switches []int64
	for range calls {
		var before, after unix.Rusage
		if _, err := c.Write([]byte("ask")); err != nil {
			t.Fatal(err)
		}
		unix.Getrusage(unix.RUSAGE_THREAD, &before)
		if n, err := c.Read(buf); err != nil || string(buf[:n]) != "answer" {
			t.Fatalf("Read = %q, %v", buf[:n], err)
		}
		unix.Getrusage(unix.RUSAGE_THREAD, &after)
		switches = append(switches, after.Nvcsw-before.Nvcsw)
	}
	slices.Sort(switches)
	if med := switches[calls/2]; med > 1 {
		t.Errorf("a read slept %d times for its answer (median of %d; all: %v); want once", med, calls, switches)
	}
}

// TestBlockingConnCloseEndsReads: Close ends a read in flight, which then
// never touches the descriptor again: the number Close freed, given to
// another socket (here at once, with dup3), is that socket's alone. A
// read that went on after Close once took another connection's answer,
// which that connection waited for forever.
func TestBlockingConnCloseEndsReads(t *testing.T) {
	c, _ := blockingPair(t, "unix")
	fd := c.(*blockingConn).fd
	type read struct {
		got string
		err error
	}
	done := make(chan read, 1)
	go func() {
		buf := make([]byte, 16)
		n, err := c.Read(buf) // nothing comes: it waits
		done <- read{string(buf[:n]), err}
	}()
	time.Sleep(50 * time.Millisecond) // past a raw wait: the polite path
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Read after Close: %v, want net.ErrClosed", err)
	}
	// Another socket on the number Close freed (r), with something to
	// read, sent from its peer (w).
	other, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, w := other[0], other[1]
	if w == fd { // the kernel gave the number to that end
		r, w = w, r
	}
	if r != fd {
		if err := unix.Dup3(r, fd, unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		unix.Close(r)
		r = fd
	}
	defer unix.Close(r)
	defer unix.Close(w)
	if _, err := unix.Write(w, []byte("not yours")); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err == nil || r.got != "" {
			t.Errorf("the read in flight at Close returned %q, %v; want no data and an error", r.got, r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the read in flight at Close did not return in 5 s")
	}
	// Bounded: what was sent there, read by the read that went on, would
	// be waited for forever.
	tv := unix.NsecToTimeval(time.Second.Nanoseconds())
	if err := unix.SetsockoptTimeval(r, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := unix.Read(r, buf); err != nil || string(buf[:max(n, 0)]) != "not yours" {
		t.Errorf("the socket given the freed number read %q, %v; want what was sent to it", buf[:max(n, 0)], err)
	}
}
