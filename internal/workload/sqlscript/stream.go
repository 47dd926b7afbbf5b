package sqlscript

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/pgscript"
	"github.com/numalab/numalab/internal/stats"
)

// stream is one stream of a cell: its connection, its client (variables
// and generator) and its own per-command figures, which it adds to only
// for the calls drive counts (drive.Counter), and which End merges once
// the cell is over. Nothing here is shared with another stream but the
// run's count of failures, touched only when a counted call failed, and
// read once per call. That count is of every failed transaction, in
// warm-ups too (a script that cannot run stops the run before its first
// window), where the cells' figures count those in their windows.
type stream struct {
	conn   engine.Conn
	client *pgscript.Client
	halt   *halt

	// The transaction in flight: its script, tries, error and the
	// commands it ran (every try's), as Observe reported them.
	script int
	tries  int
	err    error
	obs    []observed

	figs   [][]cmdFigs     // by script, by command
	tx     []txFigs        // by script
	first  *pgscript.Error // the stream's first failure, warm-up included
	closed atomic.Bool     // Close returned: figs are the stream's last
}

// observed is one command's end, as pgscript's Observe hook reports it.
type observed struct {
	cmd int
	ns  int64
	err error
}

// cmdFigs are one command's figures in one stream: a histogram for a SQL
// command, a count and a sum for a meta-command (its mean, as pgbench -r
// gives).
type cmdFigs struct {
	hist     *stats.Histogram // nil for a meta-command
	n, sum   int64
	errs     int64
	firstErr string
}

// txFigs are a script's retries in one stream.
type txFigs struct {
	retried, retries int64
}

// halt is the run's count of failed calls, shared by its streams, and the
// limit past which they stop (--max-errors).
type halt struct {
	failed atomic.Int64
	max    int64
}

func (h *halt) over() bool { return h.failed.Load() > h.max }

var _ drive.Counter = (*stream)(nil)

// newStream makes stream id's client of the scripts, with its own
// Observe hook, on conn.
func newStream(conn engine.Conn, opt pgscript.Options, ws []pgscript.Weighted, id int, h *halt) (*stream, error) {
	st := &stream{conn: conn, halt: h, obs: make([]observed, 0, 64)}
	opt.Observe = st.observe
	set, err := pgscript.NewSet(opt, ws...)
	if err != nil {
		return nil, err
	}
	st.client = set.Client(id)
	st.figs = make([][]cmdFigs, len(ws))
	st.tx = make([]txFigs, len(ws))
	for i, w := range ws {
		st.figs[i] = make([]cmdFigs, len(w.Script.Commands))
		for j := range w.Script.Commands {
			if set.SQL(i, j) != "" {
				st.figs[i][j].hist = stats.NewHistogram()
			}
		}
	}
	return st, nil
}

func (st *stream) observe(_, command int, elapsed time.Duration, err error) {
	st.obs = append(st.obs, observed{cmd: command, ns: int64(elapsed), err: err})
}

// Next runs one transaction: a script chosen by weight, run whole (and
// again, for a retryable failure, up to --max-tries). Once the run's
// failures passed --max-errors, it stops the stream instead.
func (st *stream) Next(ctx context.Context) (int, error) {
	if st.halt.over() {
		return 0, drive.Done(fmt.Sprintf("stopped: more than %s failed in this run (--max-errors %d)",
			plural(st.halt.max+1, "transaction"), st.halt.max))
	}
	st.obs = st.obs[:0]
	st.script = st.client.Choose()
	st.tries, st.err = st.client.Run(ctx, st.conn, st.script)
	if st.err != nil && ctx.Err() == nil {
		var pe *pgscript.Error
		if st.first == nil && errors.As(st.err, &pe) {
			st.first = pe
		}
		st.halt.failed.Add(1)
	}
	return st.script, st.err
}

// Counted adds the transaction just run to the stream's figures: drive
// counted it, in the measured window.
func (st *stream) Counted(ok bool) {
	figs := st.figs[st.script]
	for _, o := range st.obs {
		f := &figs[o.cmd]
		switch {
		case o.err != nil:
			f.errs++
			if f.firstErr == "" {
				f.firstErr = o.err.Error()
			}
		case f.hist != nil:
			f.hist.Record(o.ns)
		default:
			f.n++
			f.sum += o.ns
		}
	}
	if st.tries > 1 {
		st.tx[st.script].retried++
		st.tx[st.script].retries += int64(st.tries - 1)
	}
}

// Close closes the connection.
func (st *stream) Close() error {
	err := st.conn.Close()
	st.closed.Store(true)
	return err
}

func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
