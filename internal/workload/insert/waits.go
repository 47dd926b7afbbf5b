package insert

import (
	"context"
	"database/sql"
	"time"

	"github.com/numalab/numalab/internal/result"
)

// waitCPU names a sample of an active backend with no wait event.
const waitCPU = "CPU"

// waitClient is the wait of a backend reading the client's next message
// (in a COPY, its next rows).
const waitClient = "Client:ClientRead"

// waitPage is the wait for a shared buffer's content lock: backends
// writing the same page (with --key shared, the key's right-most index
// page, or the sequence's) queue for it.
const waitPage = "LWLock:BufferContent"

// waitQuery reads the loading backends' states.
const waitQuery = `SELECT coalesce(wait_event_type, ''), coalesce(wait_event, ''), coalesce(state, '')
	FROM pg_stat_activity WHERE pid = ANY($1)`

// sampler reads pg_stat_activity on a connection of its own every
// period, for the backends the cell's streams opened, until stopped.
type sampler struct {
	cancel context.CancelFunc
	done   chan []sample
}

type sample struct {
	at    int64 // unix ns
	event string
}

func startSampler(conn *sql.Conn, cs *cellState, every time.Duration) *sampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &sampler{cancel: cancel, done: make(chan []sample, 1)}
	go func() {
		defer conn.Close()
		var out []sample
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				s.done <- out
				return
			case now := <-t.C:
				pids := cs.pids()
				if len(pids) == 0 {
					continue
				}
				at := now.UnixNano()
				out = sampleOnce(ctx, conn, pids, at, out)
			}
		}
	}()
	return s
}

// sampleOnce adds one sample of each backend in pids to out. A sample
// that fails (the cell ending) is left out.
func sampleOnce(ctx context.Context, conn *sql.Conn, pids []int32, at int64, out []sample) []sample {
	rows, err := conn.QueryContext(ctx, waitQuery, pids)
	if err != nil {
		return out
	}
	defer rows.Close()
	for rows.Next() {
		var typ, event, state string
		if rows.Scan(&typ, &event, &state) == nil {
			out = append(out, sample{at: at, event: waitEvent(typ, event, state)})
		}
	}
	return out
}

// waitEvent names one backend's sample: "type:event", or waitCPU when it
// is active and waits for nothing.
func waitEvent(typ, event, state string) string {
	if typ == "" {
		if state == "active" {
			return waitCPU
		}
		return "none (" + state + ")"
	}
	return typ + ":" + event
}

// stop ends the sampling and counts the samples inside m's measured
// window (none when m is nil).
func (s *sampler) stop(m *result.Cell) map[string]int {
	s.cancel()
	all := <-s.done
	if m == nil {
		return nil
	}
	from := m.Started.Add(m.Warmup).UnixNano()
	to := from + m.Measured.Nanoseconds()
	counts := map[string]int{}
	for _, x := range all {
		if x.at >= from && x.at < to {
			counts[x.event]++
		}
	}
	return counts
}
