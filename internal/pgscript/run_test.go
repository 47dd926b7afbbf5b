package pgscript

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// runScript runs script once for client 0 with opt on conn, returning the
// log and the client.
func runScript(t *testing.T, script string, opt Options, conn *fakeConn) (*Client, error) {
	t.Helper()
	s, err := Parse("t.sql", strings.NewReader(script))
	if err != nil {
		t.Fatalf("Parse(%q): %v", script, err)
	}
	set, err := NewSet(opt, Weighted{s, 1})
	if err != nil {
		t.Fatal(err)
	}
	c := set.Client(0)
	_, err = c.Run(context.Background(), conn, 0)
	return c, err
}

func (c *Client) get(name string) string {
	i, ok := c.set.index[name]
	if !ok {
		return "unknown"
	}
	return c.vars[i].String()
}

func TestRun(t *testing.T) {
	var slept []time.Duration
	sleeper := func(ctx context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	tests := []struct {
		name   string
		script string
		rows   map[string][][]any
		opt    Options
		log    []string // what the engine got: "query [args]"
		vars   string   // name=value ... after the run
		slept  []time.Duration
		err    string
	}{
		{
			name: "gset",
			script: "\\set aid 7\nselect abalance, 2.5 as f, name from t where aid = :aid \\gset p_\n" +
				"insert into h values (:p_abalance, :p_f, :p_name, :aid);",
			rows: map[string][][]any{"from t": {{int64(-3), 2.5, "bob"}}},
			log: []string{"select abalance, 2.5 as f, name from t where aid = ? [7]",
				"insert into h values (?, ?, ?, ?) [-3 2.5 bob 7]"},
			vars: "p_abalance=-3 p_f=2.5 p_name=bob",
		},
		{
			name:   "gset-no-row",
			script: "select a from t \\gset",
			log:    []string{"select a from t []"},
			err:    `t.sql:1: select a from t \gset: \gset: expected one row, got 0`,
		},
		{
			name:   "gset-two-rows",
			script: "select a from t \\gset",
			rows:   map[string][][]any{"from t": {{int64(1)}, {int64(2)}}},
			log:    []string{"select a from t []"},
			err:    `\gset: expected one row, got 2`,
		},
		{
			name:   "gset-columns",
			script: "select a from t \\gset",
			rows:   map[string][][]any{"from t": {{int64(1), int64(2)}}},
			log:    []string{"select a from t []"},
			err:    `the query returned 2 columns, where the script names 1`,
		},
		{
			name:   "aset-last-row-wins",
			script: "\\set a 0\nselect a, b from t \\aset\nselect a from u\n\\aset\n",
			rows:   map[string][][]any{"from t": {{int64(1), nil}, {int64(2), "x"}}},
			log:    []string{"select a, b from t []", "select a from u []"},
			vars:   "a=2 b=x",
		},
		{
			name: "if-elif-else",
			script: "\\set x 2\n\\if :x = 1\nselect 1;\n\\elif :x = 2\nselect 2;\n\\if false\nselect 21;\n\\else\n" +
				"select 22;\n\\endif\n\\elif true\nselect 3;\n\\else\nselect 4;\n\\endif\nselect 5;",
			log: []string{"select 2 []", "select 22 []", "select 5 []"},
		},
		{
			name:   "if-else",
			script: "\\if NULL\nselect 1;\n\\elif 0.0\nselect 2;\n\\else\nselect 3;\n\\endif",
			log:    []string{"select 3 []"},
		},
		{
			name:   "if-none",
			script: "\\if 0\nselect 1;\n\\elif false\nselect 2;\n\\endif\nselect 3;",
			log:    []string{"select 3 []"},
		},
		{
			name:   "if-string",
			script: "\\if :flag\nselect 1;\n\\endif",
			opt:    Options{Defines: map[string]string{"flag": "yes"}},
			log:    []string{"select 1 []"},
		},
		{
			name:   "sleep",
			script: "\\set n 3\n\\sleep 2\n\\sleep 10ms\n\\sleep :n us\n\\sleep -1 ms\n\\sleep :f s",
			opt:    Options{Defines: map[string]string{"f": "1.5"}},
			slept: []time.Duration{2 * time.Second, 10 * time.Millisecond, 3 * time.Microsecond,
				-time.Millisecond, 2 * time.Second},
		},
		{
			// pgbench 15.18 gave 3 for the same two lines
			name:   "continuation",
			script: "\\set x 1 + \\\r\n  2\r\nselect :x;\r\n",
			log:    []string{"select ? [3]"},
			vars:   "x=3",
		},
		{
			name:   "sleep-undefined",
			script: "\\sleep :n ms",
			err:    `t.sql:1: \sleep :n ms: undefined variable "n"`,
		},
		{
			name:   "undefined-in-sql",
			script: "select :nope;",
			err:    `t.sql:1: select :nope: undefined variable "nope"`,
		},
		{
			name:   "eval-error",
			script: "select 1;\n\\set x 1 / (:scale - 1)",
			log:    []string{"select 1 []"},
			err:    `t.sql:2: \set x 1 / (:scale - 1): division by zero`,
		},
		{
			name:   "automatic-and-defines",
			script: "select :client_id, :scale, :random_seed, :s, :d, :i;\n\\set x :i * 2 + :d",
			opt:    Options{Seed: 42, Scale: 3, Defines: map[string]string{"s": "a b", "d": "1.5", "i": " 12"}},
			log:    []string{"select ?, ?, ?, ?, ?, ? [0 3 42 a b 1.5 12]"},
			vars:   "x=25.5",
		},
		{
			name:   "define-overrides-scale",
			script: "select :scale;",
			opt:    Options{Scale: 3, Defines: map[string]string{"scale": "7"}},
			log:    []string{"select ? [7]"},
		},
		{
			name:   "string-in-expression",
			script: "\\set x :s + 1",
			opt:    Options{Defines: map[string]string{"s": "abc"}},
			err:    `malformed value "abc"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slept = nil
			tt.opt.Placeholders = Question
			tt.opt.Sleep = sleeper
			conn := &fakeConn{rows: tt.rows}
			c, err := runScript(t, tt.script, tt.opt, conn)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("error %v, want %q", err, tt.err)
			}
			if fmt.Sprint(conn.log) != fmt.Sprint(tt.log) {
				t.Errorf("sent\n%q\nwant\n%q", conn.log, tt.log)
			}
			for _, kv := range strings.Fields(tt.vars) {
				name, want, _ := strings.Cut(kv, "=")
				if got := c.get(name); got != want {
					t.Errorf(":%s = %s, want %s", name, got, want)
				}
			}
			if fmt.Sprint(slept) != fmt.Sprint(tt.slept) {
				t.Errorf("slept %v, want %v", slept, tt.slept)
			}
		})
	}
}

var errSerialization = errors.New("could not serialize access")

// TestRetry checks --max-tries: a retryable failure reruns the whole
// script, variables and draws as they were, after a ROLLBACK.
func TestRetry(t *testing.T) {
	script := "\\set r random(1, 1000000000)\n\\set n :n + 1\nBEGIN;\nupdate t set x = :r;\nupdate u set y = :n;\nEND;"
	for _, tt := range []struct {
		name     string
		maxTries int
		fails    int // how many times the second update fails
		tries    int
		err      bool
	}{
		{"succeeds", 3, 0, 1, false},
		{"retried", 3, 2, 3, false},
		{"exhausted", 3, 3, 3, true},
		{"no-retry", 0, 1, 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("t.sql", strings.NewReader(script))
			if err != nil {
				t.Fatal(err)
			}
			var observed []string
			set, err := NewSet(Options{
				Placeholders: Dollar, Seed: 9, MaxTries: tt.maxTries,
				Defines:   map[string]string{"n": "10"},
				Retryable: func(err error) bool { return errors.Is(err, errSerialization) },
				Observe: func(script, cmd int, d time.Duration, err error) {
					observed = append(observed, fmt.Sprintf("%d:%v", cmd, err != nil))
				},
			}, Weighted{s, 1})
			if err != nil {
				t.Fatal(err)
			}
			conn := &flakyConn{fails: tt.fails}
			c := set.Client(0)
			tries, err := c.Run(context.Background(), conn, 0)
			if tries != tt.tries || (err != nil) != tt.err {
				t.Fatalf("Run = %d, %v; want %d tries, error %v", tries, err, tt.tries, tt.err)
			}
			var e *Error
			if tt.err &&
				(!errors.As(err, &e) || e.Line != 5 || e.Command != "update u set y = :n" || !errors.Is(err, errSerialization)) {
				t.Errorf("error %#v, want an *Error of line 5 wrapping the engine's", err)
			}
			// every try sends the same values: the variables and draws were reset
			tries1 := conn.log[:4]
			for i := 4; i+1 < len(conn.log); i += 4 {
				for j := 0; j < 3 && i+j < len(conn.log); j++ {
					if conn.log[i+j] != tries1[j] {
						t.Errorf("try %d sent %q, the first %q", i/4+1, conn.log[i+j], tries1[j])
					}
				}
			}
			if !strings.Contains(tries1[2], " [11]") || (tt.fails > 0 && tries1[3] != "ROLLBACK []") {
				t.Errorf("first try sent %q", tries1)
			}
			// a failed try ends at its fifth command, a good one runs all six
			failed := min(tt.fails, tt.tries)
			if want := failed*5 + (tt.tries-failed)*6; len(observed) != want {
				t.Errorf("observed %d commands %v, want %d", len(observed), observed, want)
			}
		})
	}
}

// flakyConn fails "update u" fails times, as a serialization failure.
type flakyConn struct {
	fakeConn
	fails int
}

func (f *flakyConn) Exec(ctx context.Context, query string, args ...any) error {
	f.log = append(f.log, fmt.Sprintf("%s %v", query, args))
	if strings.HasPrefix(query, "update u") && f.fails > 0 {
		f.fails--
		return errSerialization
	}
	return nil
}

func TestChoose(t *testing.T) {
	a, _ := Parse("a.sql", strings.NewReader("select 1;"))
	b, _ := Parse("b.sql", strings.NewReader("select 2;"))
	z, _ := Parse("z.sql", strings.NewReader("select 3;"))
	set, err := NewSet(Options{Seed: 5}, Weighted{a, 1}, Weighted{z, 0}, Weighted{b, 3})
	if err != nil {
		t.Fatal(err)
	}
	c, c2 := set.Client(1), set.Client(1)
	var n [3]int
	for range 40000 {
		i := c.Choose()
		if i != c2.Choose() {
			t.Fatal("two clients of the same id and seed chose differently")
		}
		n[i]++
	}
	if n[1] != 0 || n[0] < 9000 || n[0] > 11000 {
		t.Errorf("chose %v of 40000 with weights 1, 0, 3", n)
	}
	if _, err := NewSet(Options{}, Weighted{z, 0}); err == nil {
		t.Error("NewSet accepted a total weight of 0")
	}
}

// TestMarkRewind: a transaction run again from a mark draws the same
// script and inputs, and variables set by it are as they were at the mark;
// run on without rewinding, it draws afresh.
func TestMarkRewind(t *testing.T) {
	a, _ := Parse("a.sql", strings.NewReader("\\set k random(1, 1000000)\nselect :k, :n;\n\\set n :n + 1"))
	b, _ := Parse("b.sql", strings.NewReader("\\set k random(1, 1000000)\nselect :k, -1;"))
	set, err := NewSet(Options{Seed: 9, Defines: map[string]string{"n": "0"}}, Weighted{a, 1}, Weighted{b, 1})
	if err != nil {
		t.Fatal(err)
	}
	c := set.Client(0)
	conn := &fakeConn{}
	var m Mark
	for range 20 {
		c.Mark(&m)
		for range 2 {
			if _, err := c.Run(context.Background(), conn, c.Choose()); err != nil {
				t.Fatal(err)
			}
		}
		c.Rewind(&m)
		if _, err := c.Run(context.Background(), conn, c.Choose()); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i+2 < len(conn.log); i += 3 {
		if conn.log[i+2] != conn.log[i] {
			t.Errorf("transaction %d rewound ran %q, first %q", i/3, conn.log[i+2], conn.log[i])
		}
	}
	if !slices.ContainsFunc(conn.log, func(s string) bool { return s != conn.log[0] }) {
		t.Errorf("every transaction ran %q: the generator did not move on", conn.log[0])
	}
	same := 0
	for i := 0; i+2 < len(conn.log); i += 3 {
		if conn.log[i+1] == conn.log[i] {
			same++
		}
	}
	if same > 2 {
		t.Errorf("%d of 20 transactions run on without a rewind drew the inputs of the one before", same)
	}
}
