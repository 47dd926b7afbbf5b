package main

import (
	"context"
	"strings"

	"github.com/numalab/numalab/internal/record"
)

// recorder is the run a command is storing (record.Run).
type recorder = record.Run

// startRun records a new run of the given kind in the store (record.Start),
// its command line e's arguments.
func startRun(ctx context.Context, e *env, storePath, kind string, config any) (*recorder, error) {
	return record.Start(ctx, storePath, kind, "numalab "+shellJoin(e.args), config, e.stderr, e.stored)
}

// withArgs is e with the command line a run stores replaced by args.
func (e *env) withArgs(args []string) *env {
	sub := *e
	sub.args = args
	return &sub
}

// shellJoin quotes each argument for a POSIX shell where it needs it, so
// that a stored command can be pasted back.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if a == "" || strings.ContainsFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@%+", r))
		}) {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}
