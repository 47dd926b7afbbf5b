// Package mariaserver runs numalab's managed throwaway MariaDB server.
//
// With no DSN, numalab starts its own server for the length of one
// command, as it does for PostgreSQL (package pgserver):
//
//	s, err := mariaserver.Start(ctx, mariaserver.Config{BufferPool: mariaserver.BufferPoolFor(dataBytes)})
//	if err != nil { ... }
//	defer s.Stop()
//	progress.Say(s.Describe())
//	db, err := sql.Open("mysql", s.DSN())
//
// Binaries. The system's MariaDB (Debian's mariadb-server): mariadbd found
// on PATH, in /usr/sbin, /usr/libexec or /usr/local/mysql/bin (or
// Config.BinDir), and mariadb-install-db next to it, on PATH or in
// /usr/bin, /usr/local/mysql/scripts. Nothing is downloaded: without them
// Start fails with an error that wraps [ErrNoBinaries] and says which
// package to install. (MySQL's mysqld is not managed; a user's MySQL 8
// server is used through a DSN.)
//
// Files and network. Everything lives in one new temporary directory
// (numalab-mariadb-* under $TMPDIR), mode 0700: the data directory that
// mariadb-install-db makes there (no test database, root authenticated
// normally), the server's error log, its temporary files and its unix
// socket. The server listens on that socket and on 127.0.0.1 (a free port
// chosen at start), never on another address. Before it accepts any
// connection (its init file) it drops the accounts that TCP could reach
// without a password (root@127.0.0.1, root@::1, root@host), and creates
// numalab's account, numalab@localhost and numalab@127.0.0.1, with a
// random password that only the DSN holds; Describe never shows it, and
// the init file is removed once the server is up.
//
// Settings. The server is throwaway, so it trades durability for speed:
// no binary log, innodb_flush_log_at_trx_commit 0 (the log is written
// and flushed about once a second, not at each commit), no doublewrite
// buffer, and innodb_fast_shutdown 2 at stop. Strings compare by code
// point (utf8mb4_bin), as on numalab's PostgreSQL server (C locale), so
// that the engines sort and group alike. performance_schema is on: the
// null transaction finds a connection's server thread there
// (performance_schema.threads.THREAD_OS_ID). The buffer pool is
// Config.BufferPool (see [BufferPoolFor]); max_connections is large enough
// for many streams. Server.Settings lists every setting numalab chose.
//
// Root. mariadbd refuses to run as root without --user. When numalab runs
// as root, mariadb-install-db and mariadbd run as an existing unprivileged
// account (Config.User, else "mysql", else "nobody"); numalab creates no
// account. The temporary directory is then owned by that account.
//
// Stopping. Server.Stop sends SIGTERM (a shutdown, fast with
// innodb_fast_shutdown 2), SIGKILLs the server's process group if it does
// not finish in time, and removes the temporary directory. Cancelling the
// context given to Start stops the server the same way. mariadbd also gets
// SIGKILL if numalab itself dies (PR_SET_PDEATHSIG): it is one process, so
// nothing of it outlives numalab; only the temporary directory is left.
//
// Leftovers. The temporary directory holds numalab-owner.json (package
// managed): the owning numalab process and the server, each by PID and
// start time. Start first reclaims every numalab-mariadb-* directory
// under $TMPDIR whose owner and server are both gone (a reused PID has
// another start time); a directory whose owner lives, or without the
// file, is never touched.
//
// Memory placement. Config.MemPolicy, when set, becomes mariadbd's NUMA
// memory policy, and so that of its buffer pool, set on a locked OS thread
// just before the fork (package managed).
//
// The lifecycle (temporary directory, account, start with a deadline,
// stop, leftovers, the description line) is package managed's; this
// package supplies MariaDB's binaries, mariadb-install-db, init file,
// settings and readiness.
package mariaserver
