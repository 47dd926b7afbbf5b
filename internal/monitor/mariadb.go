package monitor

// MariaDB's facilities. performance_schema, the general log and the slow
// log are switched per session, as PostgreSQL's are: the session's own
// server thread instrumented or not (performance_schema.threads), and
// sql_log_off, slow_query_log, long_query_time, log_slow_verbosity and
// log_slow_disabled_statements, all session variables. What a session
// cannot switch is the server's: performance_schema itself (at start),
// and general_log and slow_query_log, without which a session logs
// nothing. numalab's managed server starts with them on
// (ManagedSettings); on a user's server (--dsn, with --allow-settings)
// checkMariaDB refuses before anything is measured when they are off,
// and says how to turn them on: numalab never changes a user's server's
// global settings.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/setting"
)

// myNeeds are the server settings each MariaDB facility needs on.
var myNeeds = map[string]string{
	"performance_schema": "performance_schema",
	"general_log":        "general_log",
	"slow_log":           "slow_query_log",
	"slow_log_explain":   "slow_query_log",
}

func checkMariaDB(ctx context.Context, dsn string, fs []Facility, timeout time.Duration) error {
	where := result.Redact(dsn)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return fmt.Errorf("checking the server for --monitor: reading the DSN %s: %w", where, err)
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("checking the server for --monitor: %w", err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	c, err := engine.ConnectBound(ctx, timeout, db.Conn)
	if err != nil {
		return fmt.Errorf("checking the server %s for --monitor: %s", where, result.Redact(err.Error()))
	}
	defer c.Close()
	for _, f := range fs {
		v, ok := myNeeds[f.Name]
		if !ok {
			continue
		}
		var on int
		if err := c.QueryRowContext(ctx, "SELECT @@global."+v).Scan(&on); err != nil {
			return fmt.Errorf("checking the server %s for --monitor %s: reading %s: %w", where, f.Name, v, err)
		}
		if on == 1 {
			continue
		}
		if v == "performance_schema" {
			return setting.Errorf("monitor", "performance_schema is off on %s: it is switched on only at the server's "+
				"start (performance_schema = ON in its configuration), and numalab never restarts a user's server; turn "+
				"it on and restart the server yourself, or leave performance_schema out of --monitor", where)
		}
		return setting.Errorf("monitor",
			"%s: %s is off on %s, and numalab never changes a user's server's global settings: SET GLOBAL %s = ON yourself "+
				"(numalab then switches it per session), or leave %s out of --monitor", f.Name, v, where, v, f.Name)
	}
	// Every statement once, on this connection only; it ends with it.
	for _, f := range fs {
		for _, on := range []bool{true, false} {
			for _, q := range f.Session(on) {
				if _, err := c.ExecContext(ctx, q); err != nil {
					return setting.Errorf("monitor",
						"%s: the server %s refused %q: %w%s", f.Name, where, q, err, myRefusalHint(q, err))
				}
			}
		}
	}
	return nil
}

// myRefusalHint says what would let a refused statement run.
func myRefusalHint(q string, err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Error 1227"): // access denied; you need ... privilege
		return " (numalab sets it in its own sessions only; the DSN's user needs the privilege the server names: " +
			"GRANT SUPER, or on MariaDB 10.5.2 and later the finer one it names, ON *.* TO <user>)"
	case strings.Contains(q, "performance_schema.threads"):
		return " (the DSN's user needs UPDATE on performance_schema.threads: GRANT UPDATE ON " +
			"performance_schema.threads TO <user>)"
	}
	return ""
}

// myRule is Changes' last line for MariaDB's facilities: what is set
// where, and how it is undone.
func myRule(fs []Facility, dsn bool) string {
	if dsn {
		return "these are set in numalab's own sessions only: the server's global settings are not changed (general_log, " +
			"slow_query_log and performance_schema must already be on where asked), so nothing needs restoring; " +
			"the server's general and slow logs keep what the sessions wrote"
	}
	m := ManagedSettings(fs)
	var on []string
	for _, k := range []string{"general-log", "slow-query-log"} {
		if m[k] != "" {
			on = append(on, strings.ReplaceAll(k, "-", "_"))
		}
	}
	note := "on numalab's managed server, which it stops and removes afterwards"
	if len(on) > 0 {
		note += fmt.Sprintf("; it starts with %s on (log files in its data directory), and a cell of any other facility "+
			"runs them off in its sessions", strings.Join(on, " and "))
	}
	return note
}
