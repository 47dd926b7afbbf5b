// Package managed is the lifecycle numalab's throwaway database servers
// share (packages pgserver and mariaserver): each server kind supplies
// only what differs, its binaries, init, configuration and readiness, as
// a [Kind] and the [Steps] of one start.
//
// Start, in order: reclaims what servers of killed numalab processes left
// (Reclaim); finds the binaries (Steps.Binaries); picks the account to run
// as (the current user, or when numalab runs as root an existing
// unprivileged one, Kind.Accounts; numalab creates none); creates the
// temporary directory Kind.Prefix* under $TMPDIR, owned by that account,
// with the owner marker; runs the init step and then the server, both
// within Steps.StartTimeout, until Steps.Ready says it accepts
// connections; and records the server in the marker.
//
// Children. Both programs run in the directory, with a fixed environment
// (PATH the binaries' directory then the system's, HOME the directory,
// the C locale, UTC), as the account. The server leads its own process
// group, gets Kind.DeathSignal if numalab dies (PR_SET_PDEATHSIG), and is
// started from a goroutine locked to its own OS thread that carries
// Steps.MemPolicy and lives until the server exits: Go forks from that
// thread, the child inherits its NUMA memory policy, and the parent-death
// signal follows the thread that forked.
//
// Stopping. Server.Stop sends Kind.Shutdown, escalates to Kind.Escalate
// and then SIGKILL of the server's process group when it does not finish
// within Steps.StopTimeout, releases what the server keeps outside its
// directory (Kind.Release) and removes the directory. Cancelling the
// context given to Start stops the server the same way.
//
// Leftovers. The directory's numalab-owner.json names the owning numalab
// process and the server, each by PID and start time (package owner).
// Reclaim removes a Kind.Prefix* directory only when both are gone (a
// reused PID has another start time); one whose owner lives, or without
// the file, is never touched.
//
// It knows no server by name and runs no SQL.
package managed
