package engine

// A MariaDB stream's connection: a blocking socket, its server thread
// found and pinned, and its values normalised.

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

// Connect opens a stream's connection on a blocking socket and, when
// server threads are pinned, pins its thread to the calling thread's CPUs.
func (e *myEngine) Connect(ctx context.Context) (Conn, error) {
	mc := &myConn{}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialBlocking(ctx, network, addr)
		if err != nil || !e.cache {
			mc.sock = c
			return c, err
		}
		cm := &cacheMetaConn{Conn: c}
		mc.sock, mc.cache = cm, cm
		return cm, nil
	}
	c, err := e.connect(ctx, e.cfg, dial)
	if err != nil {
		return nil, fmt.Errorf("connecting to mariadb %s: %s%s",
			e.where, result.Redact(err.Error()), myConnectHint(err, e.ownLog))
	}
	mc.one = c
	err = c.QueryRowContext(ctx,
		"SELECT thread_os_id FROM performance_schema.threads WHERE processlist_id = connection_id()").Scan(&mc.tid)
	if err != nil && e.pin {
		c.Close()
		return nil, fmt.Errorf("finding the server thread of a mariadb connection in performance_schema.threads: "+
			"%v (pinning needs performance_schema=ON on the server)", err)
	}
	if e.pin {
		if err := e.pinThread(mc.tid); err != nil {
			c.Close()
			return nil, err
		}
	}
	return mc, nil
}

// pinThread pins server thread tid to the calling thread's CPUs. With a
// user's DSN it first checks that tid is a thread of a local mariadbd or
// mysqld, so that it never pins an unrelated one.
func (e *myEngine) pinThread(tid int) error {
	cpus, err := place.Affinity()
	if err != nil {
		return fmt.Errorf("pinning mariadb server thread %d: %w", tid, err)
	}
	if e.server == nil {
		if e.cfg.Net == "tcp" && !localHost(strings.Trim(hostOnly(e.cfg.Addr), "[]")) {
			return fmt.Errorf(
				"pinning mariadb server thread %d: the server %s is not on this machine (pinning needs a local server)",
				tid, e.where)
		}
		exe, err := sysfs.New("/").Exe(tid)
		if b := filepath.Base(exe); err != nil || b != "mariadbd" && b != "mysqld" {
			return fmt.Errorf("pinning mariadb server thread %d: no local mariadbd or mysqld thread has that id "+
				"(is the server in a container or on another machine?)", tid)
		}
	}
	if err := place.PinPID(tid, cpus); err != nil {
		return fmt.Errorf("pinning mariadb server thread %d to CPUs %s: %w", tid, place.FormatCPUs(cpus), err)
	}
	return nil
}

// hostOnly is the host of host:port.
func hostOnly(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// myConn is a stream's connection.
type myConn struct {
	one   *myOne
	sock  net.Conn
	cache *cacheMetaConn // nil without Options.MariaDBCacheMetadata
	tid   int
	wire  *myWire // the repeats' (wire_mariadb.go), nil before the first
}

func (c *myConn) Exec(ctx context.Context, query string, args ...any) error {
	_, err := c.one.ExecContext(ctx, query, args...)
	return err
}

func (c *myConn) Query(ctx context.Context, query string, args []any, row func([]any) error) error {
	rows, err := c.one.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return err
	}
	vals := make([]any, len(types))
	ptrs := make([]any, len(types))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, v := range vals {
			vals[i] = normaliseMy(v, types[i].DatabaseTypeName())
		}
		if err := row(vals); err != nil {
			return err
		}
	}
	return rows.Err()
}

// normaliseMy converts a value by its column's type: the text protocol
// gives every value as bytes. Integers become int64; DECIMAL int64 when
// it has no fraction, else float64, as PostgreSQL's numeric does; FLOAT
// and DOUBLE float64.
func normaliseMy(v any, typ string) any {
	b, ok := v.([]byte)
	if !ok {
		return normalise(v)
	}
	s := string(b)
	switch typ {
	case "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT", "YEAR":
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
	case "UNSIGNED BIGINT", "UNSIGNED INT", "UNSIGNED SMALLINT", "UNSIGNED TINYINT", "UNSIGNED MEDIUMINT":
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
	case "DECIMAL":
		if !strings.Contains(s, ".") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i
			}
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	case "FLOAT", "DOUBLE":
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	}
	return s
}

// BackendPID is the connection's server thread (a thread id, which
// sched_setaffinity takes as it takes a process id).
func (c *myConn) BackendPID() int { return c.tid }

// Close closes the connection through the driver, which quits and closes
// the socket.
func (c *myConn) Close() error {
	shut := c.closeWire()
	if err := c.one.Close(); err != nil && !shut {
		return err
	}
	return nil
}
