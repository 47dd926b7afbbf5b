// Package insert is the concurrent-loading workload ('numalab run insert'):
// S streams each bulk-load batches of B rows into one shared table, on
// PostgreSQL (COPY or multi-row INSERT, into a heap table with or without
// indexes), MariaDB (multi-row INSERTs into an InnoDB table), DuckDB (its
// Appender, one per batch) and SQLite (one writer at a time). A cell
// reports rows/s and MB/s, and how the streams waited: on SQLite the time
// spent waiting for the write lock, on PostgreSQL the backends' wait
// events sampled from pg_stat_activity, on MariaDB the server threads'
// waits timed by performance_schema.
//
// It writes only its own table: a file it marked (SQLite, DuckDB) or a
// table of numalab's schema or database carrying its comment (PostgreSQL,
// MariaDB). Anything else of that name is refused and left untouched. It
// refuses a batch that does not fit in memory and a cell that could fill
// the disk.
package insert

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/runconfig"
	"github.com/numalab/numalab/internal/sweep"
)

// RunKind is the kind of a stored 'numalab run insert' run.
const RunKind = "insert"

// Methods are the ways a stream hands a batch to PostgreSQL.
var Methods = []string{"copy", "insert"}

// Keys are where a row's id comes from, and whether it is a primary key:
//
//   - none: from the stream's own range (the stream in the top bits), no
//     index on it: the streams share only the table;
//   - stream: the same ids as the table's primary key, so each stream
//     appends at the right edge of its own range of the index;
//   - shared: one sequence (PostgreSQL's identity column, MariaDB's
//     AUTO_INCREMENT, DuckDB's sequence, SQLite's rowid) that every stream
//     draws from, as the primary key: every stream appends to the one
//     right-most page.
//
// On MariaDB "none" is a table without a primary key, which InnoDB
// clusters by a hidden row id from one server-wide counter: there the
// streams share the right-most page as with "shared" (mariadb.go).
var Keys = []string{"none", "stream", "shared"}

// RunConfig is an insert sweep; it is stored with the run.
type RunConfig struct {
	// Common are the engine, its database, the seed of the streams'
	// random numbers, the windows, the repeats and the pacing of the
	// batches.
	runconfig.Common
	// Method is PostgreSQL's: "copy" (COPY FROM STDIN) or "insert"
	// (multi-row INSERTs, one transaction per batch). MariaDB's is always
	// "insert" (Check sets it).
	Method string `toml:"method" json:"method"`
	// Indexes gives PostgreSQL's table a primary key and an index on k,
	// MariaDB's an index on k.
	Indexes bool `toml:"indexes" json:"indexes"`
	// Key is one of Keys ("" in runs stored before it: none).
	Key        string   `toml:"key" json:"key,omitempty"`
	Batch      int      `toml:"batch" json:"batch"`       // rows per batch
	MaxRows    int64    `toml:"max_rows" json:"max_rows"` // rows one cell may write, all streams together
	Streams    []int    `toml:"streams" json:"streams"`
	Placements []string `toml:"placements" json:"placements"`
	Spread     bool     `toml:"spread" json:"spread"`
	// WaitEvery is the period of PostgreSQL's wait-event sampler, and of
	// MariaDB's reads of performance_schema (100ms at least).
	WaitEvery time.Duration `toml:"wait_every" json:"wait_every_ns"`
}

// DefaultRunConfig is 'numalab run insert' without flags.
func DefaultRunConfig() RunConfig {
	return RunConfig{
		Common: runconfig.Common{Engine: "sqlite", Duration: 10 * time.Second, Warmup: 2 * time.Second,
			Repeat: 1, Seed: 1},
		Method:     "copy",
		Key:        "none",
		Batch:      1000,
		MaxRows:    20_000_000,
		Streams:    []int{1, 2, 4},
		Placements: []string{""},
		Spread:     true,
		WaitEvery:  10 * time.Millisecond,
	}
}

// DefaultPath is the database file on an embedded engine.
func DefaultPath(engineName string) string {
	spec, _ := engine.Lookup(engineName)
	return "numalab-insert." + cmp.Or(spec.FileExt, "db")
}

// batchBytesPerRow bounds a batch's memory per row in a stream: the row's
// values as Go interfaces and the encoded copy the driver sends.
const batchBytesPerRow = 256

// diskBytesPerRow is about what a row costs on disk: heap or B-tree
// tuple overhead, plus an index entry for each index.
func diskBytesPerRow(engineName string, indexes bool, key string) int64 {
	if _, d, ok := dialectOf(engineName); ok {
		return d.diskBytes(indexes, key)
	}
	return RowBytes + 16
}

// NeedBytes is how much disk one cell may fill: MaxRows rows.
func (c RunConfig) NeedBytes() int64 { return c.MaxRows * diskBytesPerRow(c.Engine, c.Indexes, c.Key) }

func bad(name, value, want string) error { return fmt.Errorf("-%s: %q %s", name, value, want) }

// neverFits refuses maxRows rows, need bytes, that no filesystem like the
// one of the database file db could hold; whether there is room now is
// checked before each cell. A directory that cannot be read is left to
// the load, which says why.
func neverFits(db string, maxRows, need int64) error {
	if maxRows > math.MaxInt64/1024 {
		return fmt.Errorf("%w: more rows than a size in bytes can count", engine.ErrNoRoom)
	}
	r, err := engine.RoomAt(filepath.Dir(db))
	if err != nil {
		return nil
	}
	return r.Holds(need)
}

// Check validates the configuration against this machine's memory
// (root/proc/meminfo) and CPU count, and fills the defaults that depend
// on other settings.
func (c *RunConfig) Check(root string) error {
	errs := c.CheckEngine("PostgreSQL loads into schema numalab, MariaDB into database numalab")
	spec, d, ok := dialectOf(c.Engine)
	server := spec.Server
	if c.DB == "" && !server {
		c.DB = DefaultPath(c.Engine)
	}
	switch {
	case !slices.Contains(Methods, c.Method):
		errs = append(errs, bad("method", c.Method, "is not a method: want copy or insert"))
	case ok && !d.methods && server:
		c.Method = d.only // the server's one way
	case c.Method != "copy" && !d.methods:
		errs = append(errs, bad("method", c.Method,
			"is for --engine "+engine.List(func(s engine.Spec) bool { _, d, _ := dialectOf(s.Name); return d.methods })+
				" (DuckDB uses its Appender, SQLite prepared INSERTs)"))
	}
	if c.Indexes && !server {
		errs = append(errs, bad("indexes", "true", "is for --engine "+engine.List(engine.IsServer)))
	}
	if c.Key == "" {
		c.Key = "none"
	}
	if !slices.Contains(Keys, c.Key) {
		errs = append(errs, bad("key", c.Key,
			"is not a key: want none, stream (a primary key on per-stream ranges) or shared (a primary key from one sequence)"))
	}
	if len(c.Streams) == 0 {
		errs = append(errs, bad("streams", "", "is empty: want e.g. 1,2,4"))
	} else if slices.Min(c.Streams) < 1 {
		errs = append(errs, bad("streams", fmt.Sprint(c.Streams), "has a count below 1: want e.g. 1,2,4"))
	}
	if why := sweep.TooManyStreams(c.Streams, runtime.NumCPU()); why != "" {
		errs = append(errs, bad("streams", fmt.Sprint(c.Streams), why))
	}
	switch {
	case c.Batch < 1:
		errs = append(errs, bad("batch", strconv.Itoa(c.Batch), "is not a positive row count: want e.g. 1000"))
	case len(c.Streams) > 0:
		if err := batchFits(root, c.Batch, slices.Max(c.Streams)); err != nil {
			errs = append(errs, bad("batch", strconv.Itoa(c.Batch), err.Error()))
		}
	}
	switch {
	case c.MaxRows < 1:
		errs = append(errs,
			bad("max-rows", strconv.FormatInt(c.MaxRows, 10), "is not a positive row count: want e.g. 20000000"))
	case c.Batch >= 1 && c.MaxRows < int64(c.Batch):
		errs = append(errs, bad("max-rows", strconv.FormatInt(c.MaxRows, 10),
			fmt.Sprintf("is less than one batch (--batch %d): a cell writes whole batches, at most --max-rows rows", c.Batch)))
	case !server:
		if err := neverFits(c.DB, c.MaxRows, c.NeedBytes()); err != nil {
			errs = append(errs, bad("max-rows", strconv.FormatInt(c.MaxRows, 10), "could never be written: "+err.Error()))
		}
	}
	if c.WaitEvery < time.Millisecond {
		errs = append(errs, bad("wait-every", c.WaitEvery.String(), "is below 1ms: want e.g. 10ms"))
	}
	if len(c.Placements) == 0 {
		c.Placements = []string{""}
	}
	return errors.Join(append(errs, c.Common.Check(), c.NoCurve("run insert"))...)
}

// batchFits refuses batches whose memory, over every stream, would take
// more than half of what the machine has available.
func batchFits(root string, batch, streams int) error {
	m, err := memlat.ReadMeminfo(root)
	if err != nil {
		return fmt.Errorf("cannot be checked against memory: %w", err)
	}
	need := int64(batch) * int64(streams) * batchBytesPerRow
	if need > m.Available/2 {
		most := m.Available / 2 / int64(streams) / batchBytesPerRow
		return fmt.Errorf("is larger than memory allows: %d streams × %d rows × %d bytes is %d MiB, more than half "+
			"of the %d MiB available (try at most %d)",
			streams, batch, batchBytesPerRow, need>>20, m.Available>>20, most)
	}
	return nil
}

// Spec is the configuration's sweep. The data is written during the
// cell, by the streams: there is no data node to choose.
func (c RunConfig) Spec() sweep.Spec {
	return sweep.Spec{Streams: c.Streams, Placements: c.Placements, Repeat: c.Repeat, DataNode: -1}
}

// Plan is the configuration's sweep plan with its cells.
func (c RunConfig) Plan(cells []sweep.Cell) sweep.Plan {
	return sweep.Plan{Cells: cells, Warmup: c.Warmup, Duration: c.Duration, Monitor: drive.SysMonitor("/"),
		Pace: c.Pacing.Pacer(c.Seed)}
}
