package engine

// A stream's PostgreSQL connection waits for the server's answer in the
// kernel, on the stream's own thread, as libpq (and so pgbench) does.
//
// Go's network connections wait in its netpoller instead: when the answer
// arrives, the kernel wakes whichever thread polls, which then wakes the
// stream's thread, which drive has locked to its goroutine (and pinned).
// And a blocking system call made the usual way (syscall.Syscall) tells
// the scheduler, which hands the thread's P on and wakes other threads
// about it. On these virtual machines each of those wake-ups costs
// microseconds of CPU, and at one round trip per transaction they
// doubled the client's CPU per call against pgbench's (measured: 45 µs
// through Syscall, 24–27 µs raw, per tpcc-ro call; pgbench 12–20 µs).
//
// blockingConn therefore reads and writes its socket in blocking mode
// with raw system calls: the thread keeps its P and sleeps in the kernel,
// which wakes it directly. On a unix socket a read first waits in poll
// for something to read, as libpq does (a blocked read is woken there
// needlessly: see pollIn). A raw wait lasts at most 20 ms (the poll's
// timeout, the socket's receive and send timeouts): a wait longer than
// that (a slow query, a hung server), or one a signal interrupts (the
// runtime's preemption for a garbage collection), continues with
// ordinary blocking calls, which release the P, so a garbage collection
// or another goroutine never waits more than 20 ms for a stream.
// (Raising GOMAXPROCS above the streams, so that waiting streams never
// hold every P, was measured and made things worse on 2 vCPUs: more idle
// Ps, more threads spinning to find work.)
//
// The descriptor is a plain number, which the kernel gives to the next
// socket or file opened once it is closed: a read that goes on after
// Close (pgx's background reader, started when a write took over 15 ms
// and left waiting in a read when the connection closes) would read
// another connection's answer, which that connection then waits for
// forever, its server idle (seen three times in CI on a loaded machine:
// a stream's Prepare, a cell's first call, a script's query). So every
// read and write counts itself in, none starts once Close has begun,
// Close shuts the socket down first (which ends a blocked read or write)
// and closes the descriptor only when none is in flight, as Go's own
// netpoller does with its fdMutex.
//
// Deadlines, which pgx uses only to interrupt a call whose context was
// cancelled (and tpcc's PostgreSQL stream for the same purpose), are
// emulated: when one passes, the socket is shut down, which ends any
// blocked read or write with an error; the connection is then unusable,
// as pgx treats it after such an interruption anyway.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawWait is how long a raw read or write may keep its P.
const rawWait = 20 * time.Millisecond

// dialBlocking dials like net.Dialer (honouring ctx), then keeps only a
// blocking duplicate of the socket, which Go's netpoller never sees:
// net.Conn's File would register the duplicate with the netpoller, whose
// epoll would then wake an idle thread of this process at every answer
// (one wake-up and context switch per call that the stream's own read
// makes needless).
func dialBlocking(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{KeepAlive: 5 * time.Minute}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("dialing %s %s: %T has no file descriptor", network, addr, c)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("dialing %s %s: %w", network, addr, err)
	}
	fd := -1
	cerr := rc.Control(func(s uintptr) { fd, err = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) })
	if err = errors.Join(cerr, err); err != nil {
		return nil, fmt.Errorf("dialing %s %s: duplicating the socket: %w", network, addr, err)
	}
	tv := unix.NsecToTimeval(rawWait.Nanoseconds())
	for _, opt := range []int{unix.SO_RCVTIMEO, unix.SO_SNDTIMEO} {
		if err == nil {
			err = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, opt, &tv)
		}
	}
	if err == nil {
		err = unix.SetNonblock(fd, false) // for both descriptors: c is closed next
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("dialing %s %s: %w", network, addr, err)
	}
	return &blockingConn{fd: fd, rawWait: rawWait, pollFirst: network == "unix", local: c.LocalAddr(),
		remote: c.RemoteAddr()}, nil
}

type blockingConn struct {
	fd            int
	rawWait       time.Duration // the longest raw poll (rawWait; tests lengthen it)
	pollFirst     bool          // a read waits in pollIn first: unix sockets
	local, remote net.Addr

	mu    sync.Mutex
	timer *time.Timer
	shut  atomic.Bool
	// users counts the reads and writes in flight; closingBit, set by
	// Close, keeps new ones from starting.
	users atomic.Int64
}

// closingBit is the bit of users that Close sets.
const closingBit = 1 << 62

// closed says whether Close has begun.
func (c *blockingConn) closed() bool { return c.users.Load()&closingBit != 0 }

// acquire counts a read or write in, unless Close has begun.
func (c *blockingConn) acquire() bool {
	for {
		u := c.users.Load()
		if u&closingBit != 0 {
			return false
		}
		if c.users.CompareAndSwap(u, u+1) {
			return true
		}
	}
}

var _ net.Conn = (*blockingConn)(nil)

// errDeadline is returned after a deadline shut the socket down.
var errDeadline = fmt.Errorf("connection interrupted: %w", os.ErrDeadlineExceeded)

// io runs a read or write: raw first (if raw), then, after rawWait or a
// signal, with ordinary system calls that release the P, until it is done
// or fails.
func (c *blockingConn) io(sysno uintptr, b []byte, raw bool) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if !c.acquire() {
		return 0, net.ErrClosed
	}
	defer c.users.Add(-1)
	for {
		var n uintptr
		var e unix.Errno
		if raw && sysno == unix.SYS_READ && c.pollFirst {
			if raw = c.pollIn(); !raw {
				continue
			}
		}
		if raw {
			n, _, e = unix.RawSyscall(sysno, uintptr(c.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		} else {
			n, _, e = unix.Syscall(sysno, uintptr(c.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		}
		switch {
		case e == unix.EINTR:
			// A signal, such as the runtime's preemption of this
			// thread to stop the world for a garbage collection. A
			// raw retry would be interrupted again, each time with a
			// new socket timeout, and the collection would wait for
			// the answer however long it takes: wait on politely.
			raw = false
			continue
		case e == unix.EAGAIN: // the socket's timeout: wait on, politely
			if c.shut.Load() {
				return 0, errDeadline
			}
			raw = false
			continue
		case e != 0:
			if c.shut.Load() {
				return 0, errDeadline
			}
			return 0, &net.OpError{Op: opName(sysno), Net: c.remote.Network(), Addr: c.remote, Err: e}
		case n == 0 && sysno == unix.SYS_READ:
			if c.shut.Load() {
				return 0, errDeadline
			}
			return 0, errEOF
		}
		return int(n), nil
	}
}

// pollIn waits, raw, until the socket has something to read (data, the
// end of the stream, an error) and says whether it has; false after
// rawWait or a signal, for the caller to wait on politely.
//
// A read blocked in the kernel would be woken whenever the peer reads
// what this side wrote: on a unix socket, the peer's read frees this
// side's send buffer, and the kernel wakes every waiter on the socket
// for the space, a waiting reader too, which finds nothing and sleeps
// again. The peer's read of the request comes before its answer, so that
// was one needless wake-up and two context switches per call (measured on
// the null transaction, client and backend on one vCPU: 1.8 switches of
// the client per call, pgbench's 1.0). poll(POLLIN), libpq's wait, is
// woken only for something to read. TCP wakes a reader only for data
// (the null call over loopback: 2.0 switches per call either way), and
// there the poll was one system call more per call, 5% of the same-CPU
// rate: a TCP read blocks at once.
func (c *blockingConn) pollIn() bool {
	fds := [1]unix.PollFd{{Fd: int32(c.fd), Events: unix.POLLIN}}
	ts := unix.NsecToTimespec(c.rawWait.Nanoseconds())
	n, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	return e == 0 && n > 0
}

func opName(sysno uintptr) string {
	if sysno == unix.SYS_READ {
		return "read"
	}
	return "write"
}

var errEOF = errors.New("EOF: the server closed the connection")

func (c *blockingConn) Read(b []byte) (int, error) { return c.io(unix.SYS_READ, b, true) }

// Write writes all of b. Only its first system call is raw: a raw write
// that returns short was stopped by the socket's timeout or a signal
// after part of b went, and the rest, which waits for the peer to read,
// goes politely, so that a large write to a slow reader holds the P for
// rawWait at most.
func (c *blockingConn) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		n, err := c.io(unix.SYS_WRITE, b[done:], done == 0)
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

// Close shuts the socket down, which ends a read or write in flight,
// waits for those to return and then closes the descriptor.
func (c *blockingConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed() {
		return nil
	}
	c.users.Or(closingBit)
	if c.timer != nil {
		c.timer.Stop()
	}
	unix.Shutdown(c.fd, unix.SHUT_RDWR)
	for c.users.Load() != closingBit {
		time.Sleep(time.Millisecond)
	}
	return unix.Close(c.fd)
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.local }
func (c *blockingConn) RemoteAddr() net.Addr { return c.remote }

// SetDeadline arms (or, with the zero time, disarms) a timer that shuts the
// socket down when t passes.
func (c *blockingConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	if t.IsZero() || c.shut.Load() || c.closed() {
		return nil
	}
	if d := time.Until(t); d > 0 {
		c.timer = time.AfterFunc(d, c.shutdown)
		return nil
	}
	c.shut.Store(true)
	unix.Shutdown(c.fd, unix.SHUT_RDWR)
	return nil
}

func (c *blockingConn) shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed() {
		c.shut.Store(true)
		unix.Shutdown(c.fd, unix.SHUT_RDWR)
	}
}

func (c *blockingConn) SetReadDeadline(t time.Time) error  { return c.SetDeadline(t) }
func (c *blockingConn) SetWriteDeadline(t time.Time) error { return c.SetDeadline(t) }
