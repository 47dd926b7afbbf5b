package sqlscript

import (
	"fmt"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/pgscript"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sentinel"
	"github.com/numalab/numalab/internal/stats"
)

// Stored items of a run.
const (
	// KindCellScripts is a cell's per-script figures, stored right after
	// the cell itself (result.KindCell, as every OLTP-like run's cells
	// are, which calib fits the model to).
	KindCellScripts result.Kind[CellScripts] = "sql.CellScripts"
	KindInit        result.Kind[InitRecord]  = "sql.Init" // --init, run once before the sweep
)

// Cell is one measured cell: drive's cell, whose types are the scripts,
// with each script's retries and per-command figures.
type Cell struct {
	Cell result.Cell `json:"cell"`
	CellScripts
}

// CellScripts are a cell's figures per script.
type CellScripts struct {
	Scripts []ScriptStats `json:"scripts"`
	// Partial, when set, says why the per-command figures leave out some
	// streams (a cut cell's streams still in a call).
	Partial string `json:"partial,omitempty"`
	// FirstError is the first failed transaction's error in the cell (its
	// warm-up included), with its script, line and command; empty when
	// none failed.
	FirstError string `json:"first_error,omitempty"`
	// Workers is where the cell's parallel workers ran (DOP > 1).
	Workers *result.WorkerCPUs `json:"workers,omitempty"`
	// Sentinel is the speed sentinel's core reference, timed right after
	// the cell (Speed judges the cells by them).
	Sentinel *sentinel.Sample `json:"sentinel,omitempty"`
}

// ScriptStats are one script's figures in a cell.
type ScriptStats struct {
	Name   string `json:"name"`
	Weight int    `json:"weight"`
	// Tx is the script's transactions as drive counted them: calls,
	// failures, latency of each whole transaction (retries included).
	Tx result.TxStats `json:"tx"`
	// Retried counts the transactions tried more than once, Retries the
	// tries beyond the first (--max-tries).
	Retried  int64          `json:"retried"`
	Retries  int64          `json:"retries"`
	Commands []CommandStats `json:"commands"`
}

// CommandStats are one command's figures in a cell, over the
// transactions the cell counted, every try of each: a SQL command's calls,
// failures and latency percentiles; a meta-command's calls and mean.
type CommandStats struct {
	Line  int            `json:"line"`
	SQL   bool           `json:"sql"`
	Stats result.TxStats `json:"stats"` // Name is the command's text
}

// InitRecord is what --init did, stored before the sweep's first cell.
type InitRecord struct {
	File     string  `json:"file"`
	Commands int     `json:"commands"`
	Seconds  float64 `json:"seconds"`
}

// merge makes the cell's per-script figures from its streams' (those
// that closed: a cut cell leaves some in a call, whose figures are still
// moving).
func merge(m *result.Cell, ws []pgscript.Weighted, streams []*stream) Cell {
	c := Cell{Cell: *m}
	var done []*stream
	for _, st := range streams {
		if st.closed.Load() {
			done = append(done, st)
		}
	}
	if len(done) < len(streams) {
		c.Partial = fmt.Sprintf(
			"the per-command figures are of %d of the %d streams: the others were still in a call when the cell was cut",
			len(done), len(streams))
	}
	for _, st := range done {
		if st.first != nil {
			c.FirstError = st.first.Error()
			break
		}
	}
	for i, w := range ws {
		ss := ScriptStats{Name: w.Script.Name, Weight: w.Weight}
		if i < len(m.Types) {
			ss.Tx = m.Types[i]
		}
		for _, st := range done {
			ss.Retried += st.tx[i].retried
			ss.Retries += st.tx[i].retries
		}
		for j, cmd := range w.Script.Commands {
			cs := CommandStats{Line: cmd.Line}
			var h *stats.Histogram
			if len(streams) > 0 && streams[0].figs[i][j].hist != nil {
				h = stats.NewHistogram()
			}
			var n, sum, errs int64
			first := ""
			for _, st := range done {
				f := &st.figs[i][j]
				if f.hist != nil {
					h.Merge(f.hist)
				}
				n, sum, errs = n+f.n, sum+f.sum, errs+f.errs
				if first == "" {
					first = f.firstErr
				}
			}
			if h != nil {
				cs.SQL = true
				cs.Stats = drive.TxStats(cmd.Text, h, errs, first)
			} else {
				cs.Stats = result.TxStats{Name: cmd.Text, Count: n, Errors: errs, FirstError: first}
				if n > 0 {
					cs.Stats.MeanUS = float64(sum) / float64(n) / 1e3
				}
			}
			ss.Commands = append(ss.Commands, cs)
		}
		c.Scripts = append(c.Scripts, ss)
	}
	return c
}

// StoredCells are run's cells as stored: each result.KindCell with the
// KindCellScripts stored after it.
func StoredCells(run *result.Run) ([]Cell, error) {
	cells, err := result.KindCell.All(run)
	if err != nil {
		return nil, err
	}
	scripts, err := KindCellScripts.All(run)
	if err != nil {
		return nil, err
	}
	if len(scripts) != len(cells) {
		return nil, fmt.Errorf("run %d stored %d cells and %d cells' script figures: want one of each per cell",
			run.ID, len(cells), len(scripts))
	}
	out := make([]Cell, len(cells))
	for i := range cells {
		out[i] = Cell{Cell: cells[i], CellScripts: scripts[i]}
	}
	return out, nil
}
