package monitor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/setting"
)

// CheckServer checks, before anything is measured, that the PostgreSQL
// server dsn names (a user's) can run fs's PostgreSQL facilities as
// numalab switches them: pg_stat_statements preloaded (numalab never
// restarts a user's server; the error says how to enable it), and every
// on and off statement allowed to the DSN's user. The statements run in a
// transaction that is rolled back, on a connection of their own; LOAD
// loads auto_explain into that connection only.
//
// On MariaDB (fs's facilities are MariaDB's) it checks that the server
// has what numalab will not turn on for the whole server: performance_schema,
// and the general or slow log (checkMariaDB).
//
// Connecting is bounded by timeout (engine.ConnectBound).
func CheckServer(ctx context.Context, dsn string, fs []Facility, timeout time.Duration) error {
	if len(onEngine(fs, "mariadb")) > 0 {
		return checkMariaDB(ctx, dsn, fs, timeout)
	}
	if len(onEngine(fs, "postgres")) == 0 {
		return nil
	}
	c, err := engine.ConnectPG(ctx, dsn, timeout)
	if err != nil {
		return fmt.Errorf("checking the server for --monitor: %w", err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	where := result.Redact(dsn)
	for _, f := range fs {
		if f.Name != "pg_stat_statements" {
			continue
		}
		var loaded bool
		if err := c.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_settings WHERE name = 'pg_stat_statements.track')").Scan(
			&loaded); err != nil {
			return fmt.Errorf("checking the server for --monitor: %w", err)
		}
		if !loaded {
			return setting.Errorf("monitor", "pg_stat_statements is not loaded on %s: it must be "+
				"in shared_preload_libraries, which takes a server restart, and numalab never restarts a user's server. "+
				"To enable it: ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements' (keep any library already "+
				"listed there: SHOW shared_preload_libraries), restart the server, and run this again; "+
				"or leave pg_stat_statements out of --monitor", where)
		}
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return fmt.Errorf("checking the server for --monitor: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	for _, f := range fs {
		for _, on := range []bool{true, false} {
			for _, q := range f.Session(on) {
				if _, err := tx.Exec(ctx, q, pgx.QueryExecModeSimpleProtocol); err != nil {
					return setting.Errorf("monitor", "%s: the server %s refused %q: %w%s", f.Name, where, q, err, refusalHint(q, err))
				}
			}
		}
	}
	return nil
}

// refusalHint says what would let a refused statement run.
func refusalHint(q string, err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "permission denied"):
		name := strings.Fields(strings.TrimPrefix(q, "SET "))[0]
		return fmt.Sprintf(" (numalab sets it in its own sessions only; the DSN's user must be a superuser, or be "+
			"granted it: GRANT SET ON PARAMETER %s TO <user>, PostgreSQL 15 and later)", name)
	case strings.HasPrefix(q, "LOAD") && strings.Contains(msg, "not allowed"):
		return " (only a superuser may LOAD a library that is not in the server's $libdir/plugins)"
	case strings.HasPrefix(q, "LOAD") && strings.Contains(msg, "could not access file"):
		return " (auto_explain comes with PostgreSQL's contrib modules: install them on the server, e.g. Debian's " +
			"postgresql-contrib)"
	}
	return ""
}

// Changes says, before a run, what numalab will change where and how it
// is undone: a line per facility, then the rule.
func Changes(fs []Facility, dsn bool) []string {
	lines := sessionChanges(fs)
	if len(lines) == 0 {
		return nil
	}
	if len(onEngine(fs, "mariadb")) > 0 {
		return append(lines, myRule(fs, dsn))
	}
	if dsn {
		lines = append(lines, "these are set in numalab's own sessions only: the server's configuration is not changed, "+
			"so nothing needs restoring, and a killed numalab leaves no setting behind (its sessions end with it); "+
			"the server's log keeps what log_all and auto_explain wrote, and pg_stat_statements the statements it counted")
	} else {
		lines = append(lines, "on numalab's managed server, which it stops and removes afterwards")
	}
	return lines
}

// sessionChanges is a line per facility that numalab switches in its
// streams' sessions: what each runs on and off.
func sessionChanges(fs []Facility) []string {
	var lines []string
	for _, f := range fs {
		if f.Own {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s: on, each stream's session runs %s; off, %s",
			f.Name, strings.Join(f.Session(true), "; "), strings.Join(f.Session(false), "; ")))
	}
	return lines
}
