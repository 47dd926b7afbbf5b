package vmtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// prepared holds what every guest of this test binary carries: a numalab
// binary and the databases eval and run oltp would otherwise load under
// emulation (a TPC-C load takes over 2 minutes under TCG, 5 s natively).
var prepared struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if prepared.dir != "" {
		os.RemoveAll(prepared.dir)
	}
	os.Exit(code)
}

// Files carried into guests, by name in /opt/bin.
const (
	tpccDB      = "numalab-tpcc-w1.db"
	transtatsDB = "transtats-1000000.duckdb"
)

// guestFiles builds numalab and loads tpcc (1 warehouse) and transtats
// (1,000,000 rows, DuckDB) once per test binary, on the host.
func guestFiles(t *testing.T) []string {
	t.Helper()
	consultSources(t)
	prepared.once.Do(func() {
		dir, err := os.MkdirTemp("", "vmtest-files-")
		if err != nil {
			prepared.err = err
			return
		}
		prepared.dir = dir
		bin := filepath.Join(dir, "numalab")
		steps := [][]string{
			{"go", "build", "-o", bin, "github.com/numalab/numalab/cmd/numalab"},
			{bin, "run", "oltp", "--warehouses", "1", "--streams", "1", "--duration", "1s", "--warmup", "0s",
				"--db", filepath.Join(dir, tpccDB), "--store", filepath.Join(dir, "load.db")},
			{bin, "run", "report", "--engine", "duckdb", "--rows", "1000000", "--streams", "1", "--dop", "1",
				"--duration", "2s", "--warmup", "0s", "--db", filepath.Join(dir, transtatsDB), "--store",
				filepath.Join(dir, "load.db")},
		}
		for _, s := range steps {
			cmd := exec.Command(s[0], s[1:]...)
			if s[0] != "go" {
				cmd.Dir = dir // numalab's store files; go builds in the module
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				prepared.err = fmt.Errorf("%s: %v\n%s", strings.Join(s, " "), err, out)
				return
			}
		}
	})
	if prepared.err != nil {
		t.Fatal(prepared.err)
	}
	return []string{filepath.Join(prepared.dir, "numalab"), filepath.Join(prepared.dir, tpccDB),
		filepath.Join(prepared.dir, transtatsDB)}
}

// section is the output of one command of a guest script.
type section struct {
	Out, Err []byte
	Code     int
	Seconds  float64 // in the guest
}

// script accumulates guest commands, each run as a named section.
type script struct {
	b     strings.Builder
	names []string
}

func newScript() *script {
	s := &script{}
	s.b.WriteString(`up() { cut -d' ' -f1 /proc/uptime; }
sec() { n=$1; shift; t0=$(up); echo "@@BEGIN $n"; "$@" 2>/tmp/sec.err; rc=$?; echo "@@STDERR"; cat /tmp/sec.err; echo "@@END $rc $t0 $(up)"; }
`)
	return s
}

// add runs the shell line as section name.
func (s *script) add(name, line string) {
	s.names = append(s.names, name)
	fmt.Fprintf(&s.b, "sec %s sh -c %s\n", shellQuote(name), shellQuote(line))
}

// raw adds a shell line that is not a section.
func (s *script) raw(line string) { s.b.WriteString(line + "\n") }

var sectionRE = regexp.MustCompile(`^@@END (\d+) ([0-9.]+) ([0-9.]+)$`)

// parseSections splits a guest's output into its sections.
func parseSections(out []byte) map[string]section {
	secs := map[string]section{}
	var name string
	var cur section
	inErr := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "@@BEGIN "):
			name, cur, inErr = strings.TrimPrefix(line, "@@BEGIN "), section{}, false
		case line == "@@STDERR":
			inErr = true
		case sectionRE.MatchString(line) && name != "":
			f := sectionRE.FindStringSubmatch(line)
			cur.Code, _ = strconv.Atoi(f[1])
			t0, _ := strconv.ParseFloat(f[2], 64)
			t1, _ := strconv.ParseFloat(f[3], 64)
			cur.Seconds = t1 - t0
			secs[name] = cur
			name = ""
		case name != "" && inErr:
			cur.Err = append(append(cur.Err, line...), '\n')
		case name != "":
			cur.Out = append(append(cur.Out, line...), '\n')
		}
	}
	return secs
}

// runScript boots m with files and runs s, failing the test when the guest
// does not finish. A boot that hangs before the guest's /init, where no
// command has run yet, is logged with its kernel log and booted once
// more: one boot in more than 150 of the suite's hung so under TCG, with
// an empty console then (kernel log at level 4), cause unknown.
func runScript(t *testing.T, h *Host, m Machine, files []string, s *script, timeout time.Duration) map[string]section {
	t.Helper()
	j := Job{Files: files, Script: s.b.String(), Timeout: timeout}
	r, err := h.Run(context.Background(), m, j)
	if errors.Is(err, ErrNoBoot) {
		t.Logf("BOOT HUNG, booting once more: %v", err)
		r, err = h.Run(context.Background(), m, j)
	}
	t.Logf("%s: boot %v, wall %v, exit %d", m, r.Boot.Round(time.Millisecond), r.Wall.Round(time.Millisecond), r.ExitCode)
	if err != nil {
		t.Fatalf("%v\noutput:\n%s", err, r.Output)
	}
	secs := parseSections(r.Output)
	var times []string
	for _, n := range s.names {
		sec, ok := secs[n]
		if !ok {
			t.Fatalf("section %s missing from the guest's output:\n%s", n, r.Output)
		}
		times = append(times, fmt.Sprintf("%s %.1fs", n, sec.Seconds))
	}
	t.Logf("time in the guest: %s", strings.Join(times, ", "))
	return secs
}
