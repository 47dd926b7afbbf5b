package vmtest

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// echoServer listens on 127.0.0.1 and answers each line with "echo " and
// the line; it counts the connections it accepts and stops with the test.
func echoServer(t *testing.T) (port int, conns *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	conns = &atomic.Int32{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(time.Minute))
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					fmt.Fprintf(c, "echo %s\n", sc.Text())
				}
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port, conns
}

// TestHostPort: a guest with a host port reaches the host's 127.0.0.1 at
// that port through HostAddr, one connection after another, and nothing
// else: not the same port at the gateway's address, 10.0.2.2, which QEMU's
// user network maps to the host's loopback unless restrict=on; not
// another of the host's loopback ports through HostAddr; not the outside
// (the guest given a default route through the gateway, so that QEMU, not
// the guest's routing table, refuses it).
func TestHostPort(t *testing.T) {
	h := host(t)
	port, conns := echoServer(t)
	other, otherConns := echoServer(t)
	s := newScript()
	s.add("iface", "ip -4 addr show eth0 | awk '/inet /{print $2}'")
	s.raw("ip route add default via 10.0.2.2")
	for i := range 3 {
		s.add(fmt.Sprintf("echo%d", i), fmt.Sprintf("echo hello%d | nc -w 10 %s %d", i, HostAddr, port))
	}
	s.add("gateway", fmt.Sprintf("echo x | nc -w 5 10.0.2.2 %d", port))
	s.add("other-port", fmt.Sprintf("echo x | nc -w 5 %s %d", HostAddr, other))
	s.add("outside", "echo x | nc -w 5 192.0.2.1 80")
	secs := runScript(t, h, Machine{Nodes: 1, CPUsPerNode: 1, HostPort: port}, nil, s, 3*time.Minute)
	if got := strings.TrimSpace(string(secs["iface"].Out)); got != "10.0.2.15/24" {
		t.Errorf("eth0 has %q, want 10.0.2.15/24\n%s", got, secs["iface"].Err)
	}
	for i := range 3 {
		sec := secs[fmt.Sprintf("echo%d", i)]
		if got, want := strings.TrimSpace(string(sec.Out)), fmt.Sprintf("echo hello%d", i); got != want || sec.Code != 0 {
			t.Errorf("connection %d through %s:%d: exit %d, %q, want %q\n%s", i, HostAddr, port, sec.Code, got, want, sec.Err)
		}
	}
	for _, name := range []string{"gateway", "other-port", "outside"} {
		sec := secs[name]
		if sec.Code == 0 || len(sec.Out) > 0 {
			t.Errorf("%s reached: exit %d, %q", name, sec.Code, sec.Out)
		}
		t.Logf("%s: exit %d: %s", name, sec.Code, strings.TrimSpace(string(sec.Err)))
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("the host port's server took %d connections, want 3", n)
	}
	if n := otherConns.Load(); n != 0 {
		t.Errorf("another loopback port took %d connections from the guest, want none", n)
	}
}
