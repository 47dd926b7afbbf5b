package mariaserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/numalab/numalab/internal/managed/managedtest"
)

// start starts a server, or skips the test when MariaDB is not installed.
func start(t *testing.T, ctx context.Context) *Server {
	t.Helper()
	s, err := Start(ctx, Config{BufferPool: 64 << 20})
	if errors.Is(err, ErrNoBinaries) {
		t.Skipf("MariaDB is not installed (.ci/run installs Debian's mariadb-server as root): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestServer(t *testing.T) {
	ctx := context.Background()
	s := start(t, ctx)
	defer s.Stop()
	t.Logf("%s; install-db %v, start %v", s.Describe(), s.InitTime, s.BootTime)
	db, err := sql.Open("mysql", s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	var version string
	if err := db.QueryRow("SELECT version()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version != s.Version() {
		t.Errorf("version() = %q, want %q", version, s.Version())
	}
	for name, want := range map[string]string{
		"innodb_buffer_pool_size": strconv.Itoa(64 << 20), "innodb_flush_log_at_trx_commit": "0",
		"bind_address": "127.0.0.1", "port": strconv.Itoa(s.Port), "performance_schema": "ON",
		"log_bin": "OFF", "collation_server": "utf8mb4_bin", "socket": s.Socket(),
	} {
		var got string
		if err := db.QueryRow("SELECT variable_value FROM information_schema.global_variables WHERE variable_name = ?",
			name).Scan(&got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	// A connection's server thread is a thread of mariadbd.
	var tid int
	if err := db.QueryRow(
		"SELECT thread_os_id FROM performance_schema.threads WHERE processlist_id = connection_id()").Scan(&tid); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d", s.PID(), tid)); err != nil {
		t.Errorf("the connection's thread %d is not a thread of mariadbd %d: %v", tid, s.PID(), err)
	}

	// numalab's account works over TCP; root does not (no password-less
	// account is reachable over TCP), and the password shows nowhere.
	tcp, _ := sql.Open("mysql", s.TCPDSN())
	defer tcp.Close()
	if err := tcp.Ping(); err != nil {
		t.Errorf("numalab over TCP: %v", err)
	}
	for _, u := range []string{"root", "root:"} {
		root, _ := sql.Open("mysql", fmt.Sprintf("%s@tcp(127.0.0.1:%d)/", u, s.Port))
		var me *mysql.MySQLError
		if err := root.Ping(); !errors.As(err, &me) || me.Number != 1045 {
			t.Errorf("root over TCP without a password: %v, want access denied (1045)", err)
		}
		root.Close()
	}
	if strings.Contains(s.Describe(), s.Password()) || s.Password() == "" {
		t.Errorf("Describe() = %q shows the password, or there is none", s.Describe())
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "init.sql")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the init file, which holds the password, is still there: %v", err)
	}

	// The server runs as s.User: never root.
	uid := managedtest.ProcUID(t, s.PID())
	u, err := user.Lookup(s.User)
	if err != nil {
		t.Fatal(err)
	}
	if strconv.Itoa(uid) != u.Uid || os.Geteuid() == 0 && uid == 0 {
		t.Errorf("mariadbd runs as uid %d, want %s (%s), never root", uid, u.Uid, s.User)
	}

	// Stop with a client connected ends the server and removes everything.
	pid, dir := s.PID(), s.Dir
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if managedtest.Alive(pid) {
		t.Errorf("mariadbd %d alive after Stop", pid)
	}
	if managedtest.Exists(dir) {
		t.Errorf("%s exists after Stop", dir)
	}
}

// TestKilledOwner checks that mariadbd goes when the numalab process that
// started it is killed (parent-death signal), and that the next Start
// reclaims the directory it left.
func TestKilledOwner(t *testing.T) {
	if _, _, err := findBinaries(""); err != nil {
		t.Skipf("MariaDB is not installed (.ci/run installs Debian's mariadb-server as root): %v", err)
	}
	_, dir, tmp := managedtest.KillOwner(t, func() (int, string, error) {
		s, err := Start(context.Background(), Config{BufferPool: 64 << 20})
		if err != nil {
			return 0, "", err
		}
		return s.PID(), s.Dir, nil
	})
	if left := mariadbdIn(dir); len(left) > 0 {
		t.Errorf("mariadbd processes of %s left: %v", dir, left)
	}
	t.Setenv("TMPDIR", tmp)
	s := start(t, context.Background())
	defer s.Stop()
	if !slices.Equal(s.Reclaimed, []string{dir}) || s.ReclaimErr != nil || managedtest.Exists(dir) {
		t.Errorf("Start reclaimed %v (%v); %s exists %v; want it removed",
			s.Reclaimed, s.ReclaimErr, dir, managedtest.Exists(dir))
	}
	if !strings.Contains(s.Describe(), "removed "+dir) {
		t.Errorf("Describe() = %q: want it to say it removed %s", s.Describe(), dir)
	}
}

// mariadbdIn lists the live mariadbd processes whose command line names
// dir.
func mariadbdIn(dir string) []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), dir) || !strings.Contains(string(b), "mariadbd") {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if managedtest.Alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}
