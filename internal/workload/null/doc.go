// Package null is the null transaction: the cheapest call an engine
// answers (SELECT 1, prepared or as a simple query), run in a closed loop
// to measure the fixed cost of a round trip, the client library, the unix
// socket or TCP loopback and the server's scheduler, without any work on
// data. On SQLite it is a prepared no-op in the process: the floor.
//
// On PostgreSQL each cell places the client and its backend by a pairing of
// the matrix (Matrix): the same logical CPU, its SMT sibling, another core
// of its node, or a CPU of the farthest node. Pairings the machine cannot
// offer are stored and said to be unavailable, never silently dropped.
// The backend is pinned through the engine (its process id from the
// connection, then sched_setaffinity); with a user's DSN that works only
// when the server is local and numalab may set its processes' affinity.
//
// What it refuses to do: it reads and writes no table, and it never
// changes a server's settings; a managed server only gains a loopback
// address to listen on, for the TCP cells.
package null
