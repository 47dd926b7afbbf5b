package insert

// MariaDB's waits, from performance_schema: every period a reader sums,
// over the cell's loader threads, each wait instrument's count and time
// (events_waits_summary_by_thread_by_event_name, picoseconds); the
// cell's figure is the difference between the reads nearest the measured
// window's start and end. Unlike PostgreSQL's sampled states these are
// the server's own clocks around every instrumented wait.
//
// What a wait is. performance_schema times every acquisition of an
// instrumented latch, contended or not, and every row a statement hands
// to the storage engine (wait/io/table/sql/handler: the row's whole write
// inside InnoDB, the latch waits on its pages included). So the time in
// wait/io/table per row is where a hot page shows: it grows with the
// streams that queue for the right-most leaf's latch, while the latches
// that are instrumented stay short.
//
// Which waits are instrumented. On numalab's managed server Open turns
// on, with timing, the instruments that can show where an insert waits:
// InnoDB's mutexes, rw-locks and the index tree latch
// (wait/synch/%/innodb/%), InnoDB's file I/O, table locks, table I/O and
// "idle" (a connection waiting for its client's next statement). MariaDB
// 10.6 and later do not instrument the latch of a buffer pool page
// (buf_block_t::lock): a wait for the hot leaf page itself is in no
// instrument, and shows only as the time left outside every instrumented
// wait. On a --dsn server nothing is switched: the waits are those the
// server's owner instrumented.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// myInstruments are the instruments Open turns on on a managed server.
const myInstruments = `UPDATE performance_schema.setup_instruments SET enabled = 'YES', timed = 'YES'
	WHERE name LIKE 'wait/synch/%/innodb/%' OR name LIKE 'wait/io/file/innodb/%' OR name LIKE 'wait/lock/table/%'
	OR name LIKE 'wait/io/table/%' OR name = 'idle'`

// Wait instruments Dominant explains.
const (
	myIdle      = "idle"                                        // waiting for the client's next statement
	myIndexTree = "wait/synch/sxlock/innodb/index_tree_rw_lock" // an index's tree latch
	myTableIO   = "wait/io/table/"                              // a row handed to the storage engine, latch waits included
)

// myPeriodMin is the shortest period between two reads: each read is a
// query over every wait instrument of every loader thread.
const myPeriodMin = 100 * time.Millisecond

// myRead is one read: per instrument, the waits and picoseconds summed
// over threads loaders.
type myRead struct {
	at      int64 // unix ns
	threads int   // of the loaders asked for, those the table still had
	count   map[string]int64
	ps      map[string]int64
}

type mySampler struct {
	cancel context.CancelFunc
	done   chan []myRead
}

func startMySampler(conn *sql.Conn, cs *cellState, every time.Duration) *mySampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &mySampler{cancel: cancel, done: make(chan []myRead, 1)}
	go func() {
		defer conn.Close()
		var out []myRead
		t := time.NewTicker(max(every, myPeriodMin))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				s.done <- out
				return
			case <-t.C:
				ids := cs.myThreads()
				if len(ids) == 0 {
					continue
				}
				if r, ok := readMyWaits(ctx, conn, ids); ok {
					out = append(out, r)
				}
			}
		}
	}()
	return s
}

// readMyWaits reads the wait sums of threads ids, timed at the middle of
// the query (not the tick that asked for it: under load the reader wakes
// late); a read that fails (the cell ending) is left out. Its threads are
// those the table still had: a loader whose connection closed (at the
// window's end) has left it, and a read without it would count its waits
// as gone, so myWindow passes over such a read.
func readMyWaits(ctx context.Context, conn *sql.Conn, ids []string) (myRead, bool) {
	start := time.Now()
	r := myRead{count: map[string]int64{}, ps: map[string]int64{}}
	rows, err := conn.QueryContext(ctx, `SELECT thread_id, event_name, count_star, sum_timer_wait
		FROM performance_schema.events_waits_summary_by_thread_by_event_name
		WHERE thread_id IN (`+strings.Join(ids, ",")+`) AND count_star > 0`)
	if err != nil {
		return r, false
	}
	defer rows.Close()
	seen := map[int64]bool{}
	for rows.Next() {
		var id, n, ps int64
		var ev string
		if rows.Scan(&id, &ev, &n, &ps) != nil {
			return r, false
		}
		seen[id] = true
		r.count[ev] += n
		r.ps[ev] += ps
	}
	r.threads = len(seen)
	r.at = start.Add(time.Since(start) / 2).UnixNano()
	return r, rows.Err() == nil
}

// myWindow is the waits between the reads nearest from and to (unix ns)
// that saw every stream, and the seconds between those reads; ok is
// false without two such reads, or when either lies more than a quarter
// of the window from its end (the reader fell behind: seen now and then
// on this loaded two-CPU machine, where it then read nothing in the
// window).
func myWindow(reads []myRead, streams int, from, to int64) (count, ps map[string]int64, secs float64, ok bool) {
	var a, b *myRead
	for i := range reads {
		r := &reads[i]
		if r.threads < streams {
			continue
		}
		if a == nil || abs(r.at-from) < abs(a.at-from) {
			a = r
		}
		if b == nil || abs(r.at-to) < abs(b.at-to) {
			b = r
		}
	}
	if slack := (to - from) / 4; a == nil || b == nil || b.at <= a.at || abs(a.at-from) > slack || abs(b.at-to) > slack {
		return nil, nil, 0, false
	}
	count, ps = map[string]int64{}, map[string]int64{}
	for ev, n := range b.count {
		if d := n - a.count[ev]; d > 0 {
			count[ev], ps[ev] = d, b.ps[ev]-a.ps[ev]
		}
	}
	return count, ps, float64(b.at-a.at) / 1e9, true
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// stop ends the reads and returns the measured window's waits as shares
// of the streams' time, longest first; nil when m is nil, or with why
// when the window had not two reads near its ends.
func (s *mySampler) stop(m *mResult) (_ []WaitShare, why string) {
	s.cancel()
	reads := <-s.done
	if m == nil {
		return nil, ""
	}
	count, ps, secs, ok := myWindow(reads, m.streams, m.from, m.to)
	if !ok {
		return nil,
			fmt.Sprintf("no waits: performance_schema was not read near both ends of the window (%d reads in all)", len(reads))
	}
	out := []WaitShare{}
	for ev, n := range count {
		w := float64(ps[ev]) / 1e12
		out = append(out, WaitShare{Event: ev, Count: n, Seconds: w, Pct: 100 * w / (secs * float64(m.streams))})
	}
	sortShares(out)
	return out, ""
}

// mResult is what mySampler.stop needs of a measured cell.
type mResult struct {
	streams  int
	from, to int64 // the measured window, unix ns
}

// myDominant names where MariaDB's loader threads spent their time: the
// longest wait proper (a latch, a lock, file I/O), the time inside the
// storage engine's row writes (wait/io/table, which holds the latch waits
// and every page latch MariaDB does not instrument) per row, and the
// time waiting for the client.
func myDominant(ws []WaitShare, why string) string {
	if why != "" {
		return why
	}
	var top, rows, idle *WaitShare
	for i := range ws {
		switch w := &ws[i]; {
		case w.Event == myIdle:
			idle = w
		case strings.HasPrefix(w.Event, myTableIO):
			if rows == nil {
				rows = w
			}
		case top == nil:
			top = w
		}
	}
	var parts []string
	if top != nil {
		d := fmt.Sprintf("%s %.1f%% (%d waits)", strings.TrimPrefix(top.Event, "wait/"), top.Pct, top.Count)
		if top.Event == myIndexTree {
			d += ", the index's tree latch"
		}
		parts = append(parts, d)
	}
	if rows != nil {
		parts = append(parts,
			fmt.Sprintf("row writes in the engine %.0f%%, %.1f µs a row", rows.Pct, 1e6*rows.Seconds/float64(rows.Count)))
	}
	if idle != nil {
		parts = append(parts, fmt.Sprintf("waiting for the client %.0f%%", idle.Pct))
	}
	if len(parts) == 0 {
		return "no wait counted between the reads nearest the window's ends (performance_schema off or not readable " +
			"by the DSN's user; or its per-thread sums not moving between two reads)"
	}
	return strings.Join(parts, "; ") + " (of the streams' time)"
}
