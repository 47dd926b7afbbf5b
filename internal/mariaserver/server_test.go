package mariaserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
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
		if err := db.QueryRow("SELECT variable_value FROM information_schema.global_variables WHERE variable_name = ?", name).Scan(&got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	// A connection's server thread is a thread of mariadbd.
	var tid int
	if err := db.QueryRow("SELECT thread_os_id FROM performance_schema.threads WHERE processlist_id = connection_id()").Scan(&tid); err != nil {
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
	uid := procUID(t, s.PID())
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
	if alive(pid) {
		t.Errorf("mariadbd %d alive after Stop", pid)
	}
	if exists(dir) {
		t.Errorf("%s exists after Stop", dir)
	}
}

// TestKilledOwner starts a server in a child process, kills that process
// with SIGKILL mid-run (no chance to clean up), and checks that mariadbd
// goes too (parent-death signal) and that the next Start reclaims the
// directory it left.
func TestKilledOwner(t *testing.T) {
	if os.Getenv("NUMALAB_MARIADB_CHILD") == "1" {
		s, err := Start(context.Background(), Config{BufferPool: 64 << 20})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("server", s.PID(), s.Dir)
		time.Sleep(time.Minute)
		os.Exit(1)
	}
	if _, _, err := findBinaries(""); err != nil {
		t.Skipf("MariaDB is not installed (.ci/run installs Debian's mariadb-server as root): %v", err)
	}
	// Its own TMPDIR, which the server's account can enter when run as root.
	tmp, err := os.MkdirTemp("", "numalab-reclaim-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledOwner$")
	cmd.Env = append(os.Environ(), "NUMALAB_MARIADB_CHILD=1", "TMPDIR="+tmp)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	var word, dir string
	var pid int
	if _, err := fmt.Fscan(out, &word, &pid, &dir); err != nil || word != "server" {
		t.Fatalf("child said %q %d %q, %v", word, pid, dir, err)
	}
	defer os.RemoveAll(dir)
	cmd.Process.Signal(syscall.SIGKILL)
	deadline := time.Now().Add(20 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(-pid, syscall.SIGKILL)
			t.Fatalf("mariadbd %d still running 20 s after its parent was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Wait()
	if left := mariadbdIn(dir); len(left) > 0 {
		t.Errorf("mariadbd processes of %s left: %v", dir, left)
	}
	if !exists(filepath.Join(dir, "data")) {
		t.Fatalf("%s: the killed process left no data directory to reclaim", dir)
	}
	t.Setenv("TMPDIR", tmp)
	s := start(t, context.Background())
	defer s.Stop()
	if !slices.Equal(s.Reclaimed, []string{dir}) || s.ReclaimErr != nil || exists(dir) {
		t.Errorf("Start reclaimed %v (%v); %s exists %v; want it removed", s.Reclaimed, s.ReclaimErr, dir, exists(dir))
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
		if alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// procUID reads the real uid of a process.
func procUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			uid, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatal(err)
			}
			return uid
		}
	}
	t.Fatalf("no Uid line in /proc/%d/status", pid)
	return 0
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
