package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/eval"
	"github.com/numalab/numalab/internal/evalplan"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/runconfig"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/workload/tpcc"
	"github.com/numalab/numalab/internal/workload/transtats"
)

// shellSplit splits a command line as a POSIX shell would for what
// shellJoin writes: words separated by spaces, single quotes literal, a
// backslash escaping the next character.
func shellSplit(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord, quoted, escaped := false, false, false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case !quoted && r == '\\':
			escaped, inWord = true, true
		case quoted && r == '\'':
			quoted = false
		case quoted:
			cur.WriteRune(r)
		case r == '\'':
			quoted, inWord = true, true
		case r == ' ':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case strings.ContainsRune(";&|<>()$`\"\\*?[#~", r):
			t.Fatalf("command %q: unquoted shell metacharacter %q", s, r)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted || escaped {
		t.Fatalf("command %q: unterminated quote", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// reparse parses a stored command line back through the command's own
// flag parser and returns the configuration it gives, as JSON.
func reparse(t *testing.T, command string) string {
	t.Helper()
	words := shellSplit(t, command)
	if len(words) < 3 || words[0] != "numalab" || words[1] != "run" {
		t.Fatalf("stored command %q: want numalab run ...", command)
	}
	e := &env{stdout: io.Discard, stderr: io.Discard}
	var cfg any
	var err error
	switch words[2] {
	case "oltp":
		cfg, _, _, _, err = oltpFlags(e, words[3:])
	case "report":
		cfg, _, _, _, _, err = reportFlags(e, words[3:])
	case "null":
		cfg, _, _, _, err = nullFlags(e, words[3:])
	case "tpch":
		cfg, _, _, _, _, _, err = tpchFlags(e, words[3:])
	default:
		t.Fatalf("stored command %q: unknown workload", command)
	}
	if err != nil {
		t.Fatalf("stored command %q does not parse: %v", command, err)
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkStored says whether a stored run's command re-runs its
// configuration.
func checkStored(t *testing.T, r *result.Run) {
	t.Helper()
	if got := reparse(t, r.Command); got != string(r.Config) {
		t.Errorf("stored command %q parses to\n%s\nwant the stored configuration\n%s", r.Command, got, r.Config)
	}
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStoredCommandsParse: the command line stored with every run oltp,
// run report and eval step (null, tpch too) parses back to the same
// configuration (eval once stored "--placement  --warmup 7s", which does
// not parse).
func TestStoredCommandsParse(t *testing.T) {
	oltp := tpcc.DefaultRunConfig()
	if err := oltp.Check(); err != nil {
		t.Fatal(err)
	}
	remote := oltp
	remote.Placements = []string{"node=0,data=node0,smt=on", "node=1,data=node0"}
	remote.Spread, remote.Augmented, remote.StreamsPerCPU, remote.Trace = false, true, 2, 10
	remote.Warmup, remote.Duration = 0, 1500*time.Millisecond
	pg := tpcc.DefaultRunConfig()
	pg.Engine, pg.DSN = "postgres", "postgres://me@db1/bench"
	if err := pg.Check(); err != nil {
		t.Fatal(err)
	}
	paced, think, cv, mon := oltp, oltp, oltp, oltp
	paced.Rate, paced.Arrivals = 1234.5, "uniform"
	think.Think, think.ThinkDist = 10*time.Millisecond, "exp"
	cv.Curve, cv.CurveAt, cv.KneeFactor, cv.Arrivals = true, []float64{0.1, 0.5, 1.2}, 2.5, "uniform"
	mon.Monitor, mon.MonitorLoad, mon.Repeat = []string{"sysmon"}, 0.5, 5
	monSat := mon
	monSat.MonitorLoad = 0
	oltps := []tpcc.RunConfig{oltp, remote, pg, paced, think, cv, mon, monSat}
	var reps []transtats.RunConfig
	var others [][]string // eval's null and tpch steps' command lines
	rep := transtats.RunConfig{Common: runconfig.Common{Engine: "sqlite", DB: "it's here.sqlite", Duration: time.Second,
		Warmup: 0, Seed: 3, Repeat: 2},
		Rows: 1000, Rate: 10, Streams: []int{1, 2}, DOP: []int{1},
		Queries: []string{"P2"}, Placement: "cpus=0,1", DataNode: -1}
	reps = append(reps, rep)
	for _, fx := range []string{"kvm-2vcpu-zen.tar.gz", "16em64t-4s2c2t.tar.bz2"} {
		m, _, err := topo.Load(filepath.Join("..", "..", "testdata", "topology", fx), "")
		if err != nil {
			t.Fatal(err)
		}
		plan, err := evalplan.NewPlan(5*time.Minute, m)
		if err != nil {
			t.Fatal(err)
		}
		c := eval.NewConfigs(plan, t.TempDir())
		oltps = append(oltps, c.OLTP, c.OLTPMy)
		if fx == "kvm-2vcpu-zen.tar.gz" { // DOPs a 2-CPU machine accepts
			reps = append(reps, c.Report)
			others = append(others, nullArgv(c.NullSQLite), nullArgv(c.NullPG), nullArgv(c.NullMy),
				tpchArgv(c.TPCH, defaultDOPThreshold))
			for _, v := range []any{c.NullSQLite, c.NullPG, c.NullMy, c.TPCH} {
				others = append(others, []string{asJSON(t, v)})
			}
		}
	}
	for _, c := range oltps {
		cmd := "numalab " + shellJoin(oltpArgv(c))
		if got, want := reparse(t, cmd), asJSON(t, c); got != want {
			t.Errorf("%s\nparses to %s\nwant       %s", cmd, got, want)
		}
	}
	for _, c := range reps {
		cmd := "numalab " + shellJoin(reportArgv(c))
		if got, want := reparse(t, cmd), asJSON(t, c); got != want {
			t.Errorf("%s\nparses to %s\nwant       %s", cmd, got, want)
		}
	}
	if len(others) != 8 {
		t.Fatalf("eval's null and tpch steps: %q", others)
	}
	for i := range 4 {
		cmd := "numalab " + shellJoin(others[i])
		if got, want := reparse(t, cmd), others[4+i][0]; got != want {
			t.Errorf("%s\nparses to %s\nwant       %s", cmd, got, want)
		}
	}
}

// TestEvalGitignore: the repository ignores eval's default directory.
func TestEvalGitignore(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "/numalab-eval/") {
		t.Errorf(".gitignore does not cover eval's default --dir numalab-eval")
	}
}
