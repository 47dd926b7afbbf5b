package pgscript

import (
	"fmt"
	"slices"
	"strings"
)

// builtins are pgbench 15's built-in scripts, as `pgbench --show-script`
// prints them.
var builtins = map[string]string{
	"tpcb-like": `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`,
	"simple-update": `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`,
	"select-only": `\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
`,
}

// Builtin is one of pgbench's built-in scripts by name: tpcb-like,
// simple-update or select-only. The script's name is "builtin:" and its
// name.
func Builtin(name string) (*Script, error) {
	text, ok := builtins[name]
	if !ok {
		var names []string
		for n := range builtins {
			names = append(names, n)
		}
		slices.Sort(names)
		return nil, fmt.Errorf("finding built-in script %q: no such script (expected one of %s)",
			name, strings.Join(names, ", "))
	}
	return Parse("builtin:"+name, strings.NewReader(text))
}
