package pgscript

import (
	"errors"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		script string
		want   string // the whole error
	}{
		{"select 1;\n\\set\n", `bank.sql:2:5: \set: expected a variable name, found end of line`},
		{"select 1;\n\\set aid   \n", `bank.sql:2:12: \set: expected an expression after "aid", found end of line`},
		{"\\set x 1 +\n", `bank.sql:1:11: \set: expected an operand, found end of line`},
		{"\\set x (1\n", `bank.sql:1:10: \set: expected ")", found end of line`},
		{"\\set x 1 2\n", `bank.sql:1:10: \set: expected an operator or end of line, found "2"`},
		{"\\set x 1 ^ 2\n", `bank.sql:1:10: \set: unexpected character "^" in an expression`},
		{"\\set x 2 = 2 = true\n", `bank.sql:1:14: \set: expected parentheses around a comparison before "="`},
		{"\\set x 1 IS 1\n", `bank.sql:1:13: \set: expected NULL, TRUE or FALSE after IS, found "1"`},
		{"\\set x foo(1)\n", `bank.sql:1:8: \set: unknown function foo (expected one of pgbench's: abs, debug, ` +
			`double, exp, greatest, hash, hash_fnv1a, hash_murmur2, int, least, ln, mod, permute, pi, pow, power, random, ` +
			`random_exponential, random_gaussian, random_zipfian, sqrt)`},
		{"\\set x random(1)\n", `bank.sql:1:8: \set: random takes 2 arguments, not 1`},
		{"\\set x greatest()\n", `bank.sql:1:8: \set: greatest takes at least 1 argument, not 0`},
		{"\\set x hash(1, 2, 3)\n", `bank.sql:1:8: \set: hash takes 1 to 2 arguments, not 3`},
		{"\\set x pi(1)\n", `bank.sql:1:8: \set: pi takes 0 arguments, not 1`},
		{"\\set x 9223372036854775808\n", `bank.sql:1:8: \set: bigint constant 9223372036854775808 is out of range`},
		{"\\set x 99999999999999999999\n", `bank.sql:1:8: \set: bigint constant 99999999999999999999 is out of range`},
		{"\\set x 0x10\n", `bank.sql:1:9: \set: expected an operator after the number "0", found "x"`},
		{"\\set x CASE 1 WHEN 1 THEN 2 END\n",
			`bank.sql:1:13: \set: expected WHEN after CASE (pgbench has no CASE x WHEN form), found "1"`},
		{"\\set x CASE WHEN true THEN 1\n", `bank.sql:1:29: \set: expected WHEN, ELSE or END in CASE, found end of line`},
		{"\\set 1+ 2\n", `bank.sql:1:6: \set: expected a variable name (letters, digits, _), found "1+"`},
		{"\\sleep\n", `bank.sql:1:7: \sleep: expected a time (an integer or a :variable), found end of line`},
		{"\\sleep 1.5 ms\n", `bank.sql:1:8: \sleep: expected an integer time or a :variable, found "1.5"`},
		{"\\sleep 10 min\n", `bank.sql:1:11: \sleep: expected a unit us, ms or s, found "min"`},
		{"\\sleep 10min\n", `bank.sql:1:10: \sleep: expected a unit us, ms or s, found "min"`},
		{"\\sleep 1 s x\n", `bank.sql:1:12: \sleep: expected end of line after the unit, found "x"`},
		{"select 1;\n\\if true\nselect 2;\n",
			`bank.sql:2:1: \if without a matching \endif (expected \endif before the end of the script)`},
		{"select 1;\n  \\endif\n", `bank.sql:2:3: \endif without a matching \if`},
		{"\\else\n", `bank.sql:1:1: \else without a matching \if`},
		{"\\if true\n\\else\n\\elif false\n\\endif\n", `bank.sql:3:1: \elif after \else (expected \endif)`},
		{"\\if true\n\\else\n\\else\n\\endif\n", `bank.sql:3:1: \else after \else (expected \endif)`},
		{"\\if\n", `bank.sql:1:4: \if: expected a condition, found end of line`},
		{"\\if true\n\\endif now\n", `bank.sql:2:8: \endif: expected end of line, found "now"`},
		{"\\gset\n", `bank.sql:1:1: \gset must follow an SQL command`},
		{"select 1 as a;\n\\set x 1\n\\gset\n", `bank.sql:3:1: \gset must follow an SQL command`},
		{"select 1 as a \\gset\n\\aset\n", `bank.sql:2:1: \aset must follow an SQL command`},
		{"select 1 as a \\gset p q\n", `bank.sql:1:23: \gset: expected at most one argument (a prefix), found "q"`},
		{"select count(*) + 1 from t \\gset\n",
			`bank.sql:1:28: \gset: cannot tell the name of the result column "count ( * ) + 1": give it one (AS name)`},
		{"select * from t \\gset\n",
			`bank.sql:1:17: \gset: cannot tell the name of the result column "*": give it one (AS name)`},
		{"update t set a = 1 \\gset\n",
			`bank.sql:1:20: \gset: cannot find the result columns of this command (expected SELECT ... or ... RETURNING ...)`},
		{"\\shell echo hi\n",
			`bank.sql:1:1: \shell is refused: a benchmark run starts no shell (run the command before the benchmark ` +
				`and pass its output with --define NAME=VALUE)`},
		{"\\setshell x echo 1\n",
			`bank.sql:1:1: \setshell is refused: a benchmark run starts no shell (run the command before the benchmark ` +
				`and pass its output with --define NAME=VALUE)`},
		{"select 1;\n\\foo\n",
			`bank.sql:2:1: unknown meta-command \foo (expected \set, \sleep, \if, \elif, \else, \endif, \gset or \aset)`},
		{"select 1 \\; select 2;\n", `bank.sql:1:10: \; (compound statements) is not supported: end each command with ";"`},
		{"select 'abc;\n", `bank.sql:1:8: unterminated string (expected ')`},
		{"select \"abc;\n", `bank.sql:1:8: unterminated quoted identifier (expected ")`},
		{"select $q$abc;\n", `bank.sql:1:8: unterminated dollar-quoted string (expected $q$)`},
		{"select /* a /* b */ 1;\n", `bank.sql:1:8: unterminated /* comment (expected */)`},
		{"select :'x';\n", `bank.sql:1:8: psql's quoted variable :'...' is not pgbench's: bind the variable as :name`},
		{"-- nothing\n\n", `bank.sql:3:1: the script has no command (expected SQL or a meta-command)`},
	}
	for _, tt := range tests {
		_, err := Parse("bank.sql", strings.NewReader(tt.script))
		if err == nil || err.Error() != tt.want || !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q):\n got %v\nwant %s", tt.script, err, tt.want)
		}
	}
}

// TestSQL checks how commands are split and their variables bound, in
// both placeholder styles.
func TestSQL(t *testing.T) {
	tests := []struct {
		script        string
		dollar, quest []string // each command's SQL ("" for a meta-command)
		dollarArgs    [][]string
		questionArgs  [][]string
	}{
		{
			script:       "select :a, :b,\n  :a from t where x = :b;",
			dollar:       []string{"select $1, $2,\n  $1 from t where x = $2"},
			quest:        []string{"select ?, ?,\n  ? from t where x = ?"},
			dollarArgs:   [][]string{{"a", "b"}},
			questionArgs: [][]string{{"a", "b", "a", "b"}},
		},
		{
			script: "-- a comment: :x;\nselect ':a;', \":b;\", $$:c;$$, $t$ ; $t$, E'\\':d;', x::int, y:::z /* :e; */ " +
				"from t; select 2",
			dollar: []string{
				"select ':a;', \":b;\", $$:c;$$, $t$ ; $t$, E'\\':d;', x::int, y:::z /* :e; */ from t", "select 2"},
			quest: []string{
				"select ':a;', \":b;\", $$:c;$$, $t$ ; $t$, E'\\':d;', x::int, y:::z /* :e; */ from t", "select 2"},
			dollarArgs:   [][]string{nil, nil},
			questionArgs: [][]string{nil, nil},
		},
		{
			script: "\\set a 1\n;;insert into t values (:a) \\gset\n",
			dollar: nil, // refused: insert without RETURNING has no columns
		},
		{
			script:       "\\set a 1\nupdate t set x = :a\n  returning x, y as why \\aset p_\nselect 1 as one",
			dollar:       []string{"", "update t set x = $1\n  returning x, y as why", "select 1 as one"},
			quest:        []string{"", "update t set x = ?\n  returning x, y as why", "select 1 as one"},
			dollarArgs:   [][]string{nil, {"a"}, nil},
			questionArgs: [][]string{nil, {"a"}, nil},
		},
	}
	for _, tt := range tests {
		s, err := Parse("t.sql", strings.NewReader(tt.script))
		if tt.dollar == nil {
			if err == nil {
				t.Errorf("Parse(%q) succeeded, want an error", tt.script)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.script, err)
			continue
		}
		for _, style := range []struct {
			ph   Placeholders
			sql  []string
			args [][]string
		}{{Dollar, tt.dollar, tt.dollarArgs}, {Question, tt.quest, tt.questionArgs}} {
			set, err := NewSet(Options{Placeholders: style.ph}, Weighted{s, 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Commands) != len(style.sql) {
				t.Errorf("Parse(%q): %d commands, want %d", tt.script, len(s.Commands), len(style.sql))
				continue
			}
			for i := range s.Commands {
				if got := set.SQL(0, i); got != style.sql[i] {
					t.Errorf("Parse(%q) command %d, style %d:\n got %q\nwant %q", tt.script, i, style.ph, got, style.sql[i])
				}
				var names []string
				for _, g := range set.scripts[0].args[i] {
					names = append(names, set.names[g])
				}
				if strings.Join(names, ",") != strings.Join(style.args[i], ",") {
					t.Errorf("Parse(%q) command %d, style %d: binds %v, want %v", tt.script, i, style.ph, names, style.args[i])
				}
			}
		}
	}
}

func TestColumnNames(t *testing.T) {
	tests := []struct{ sql, want string }{
		{"select abalance from pgbench_accounts where aid = ?", "abalance"},
		{"SELECT a.abalance, count(*), max(x) AS Top, 1 one, \"Mixed\" from a", "abalance,count,top,one,Mixed"},
		{"select distinct x::text, (y) as y2 from t", "x,y2"},
		{"with w as (select 1 as z) select z from w", "z"},
		{"select coalesce(a, 0), b is null as nb from t", "coalesce,nb"},
		{"insert into t values (1) returning id", "id"},
		{"select case when a then 1 end as c from t", "c"},
	}
	for _, tt := range tests {
		got, err := columnNames(tt.sql)
		if err != nil || strings.Join(got, ",") != tt.want {
			t.Errorf("columnNames(%q) = %v, %v; want %s", tt.sql, got, err, tt.want)
		}
	}
	for _, sql := range []string{"select 1 from t", "select a + b from t", "select case when a then 1 end from t",
		"select \"a b\" from t"} {
		if got, err := columnNames(sql); err == nil {
			t.Errorf("columnNames(%q) = %v, want an error", sql, got)
		}
	}
}

func TestBuiltins(t *testing.T) {
	for _, tt := range []struct {
		name     string
		commands int
	}{{"tpcb-like", 11}, {"simple-update", 9}, {"select-only", 2}} {
		s, err := Builtin(tt.name)
		if err != nil || len(s.Commands) != tt.commands {
			t.Errorf("Builtin(%q): %v, %v commands; want %d", tt.name, err, s, tt.commands)
		}
	}
	if _, err := Builtin("tpcc"); err == nil ||
		!strings.Contains(err.Error(), "expected one of select-only, simple-update, tpcb-like") {
		t.Errorf("Builtin(tpcc) = %v, want an error listing the scripts", err)
	}
}

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in     string
		file   string
		weight int
		err    bool
	}{
		{"bank.sql", "bank.sql", 1, false},
		{"bank.sql@5", "bank.sql", 5, false},
		{"dir@x/bank.sql@0", "dir@x/bank.sql", 0, false},
		{"bank.sql@-1", "", 0, true},
		{"bank.sql@", "", 0, true},
		{"bank.sql@1.5", "", 0, true},
		{"bank.sql@2147483648", "", 0, true},
		{"@3", "", 0, true},
	}
	for _, tt := range tests {
		f, w, err := ParseSpec(tt.in)
		if f != tt.file || w != tt.weight || (err != nil) != tt.err {
			t.Errorf("ParseSpec(%q) = %q, %d, %v; want %q, %d, error %v", tt.in, f, w, err, tt.file, tt.weight, tt.err)
		}
	}
}

func TestParseDefine(t *testing.T) {
	tests := []struct {
		in, name, value string
		err             bool
	}{
		{"scale=10", "scale", "10", false},
		{"x=a=b", "x", "a=b", false},
		{"x=", "x", "", false},
		{"x", "", "", true},
		{"=1", "", "", true},
		{"a-b=1", "", "", true},
	}
	for _, tt := range tests {
		n, v, err := ParseDefine(tt.in)
		if n != tt.name || v != tt.value || (err != nil) != tt.err {
			t.Errorf("ParseDefine(%q) = %q, %q, %v", tt.in, n, v, err)
		}
	}
}
