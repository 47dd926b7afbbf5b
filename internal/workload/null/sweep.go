package null

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// RunKind is the kind of a 'numalab run null' run in the store;
// PointSelectKind that of 'run null --call point-select', whose calls
// read a row and are not the null transaction: a kind of its own keeps
// what reads null runs (report, fleet, compare) from mixing them in.
const (
	RunKind         = "null"
	PointSelectKind = "null-point-select"
)

// Stored items of a run.
const (
	KindCell   result.Kind[Cell]      = "null.Cell"   // one measured cell
	KindMatrix result.Kind[[]Pairing] = "null.Matrix" // every pairing, unavailable ones with the reason
)

// Transports.
const (
	Unix      = "unix"       // PostgreSQL or MariaDB over its unix socket
	TCP       = "tcp"        // PostgreSQL or MariaDB over TCP loopback
	InProcess = "in-process" // SQLite: no transport at all
)

// Protocols of the PostgreSQL and MariaDB call.
const (
	// Bind, Describe, Execute, Sync of a prepared SELECT 1 (pgbench -M prepared); MariaDB: COM_STMT_EXECUTE
	Prepared = "prepared"
	Simple   = "simple" // Query 'SELECT 1' (pgbench -M simple, its default); MariaDB: COM_QUERY
)

// Cell is one measured cell: the drive cell with where its client and
// backend ran and what its round trips cost.
type Cell struct {
	Cell      result.Cell `json:"cell"`
	Transport string      `json:"transport"`
	Protocol  string      `json:"protocol,omitempty"`
	// CallSelect1 or CallPointSelect; empty in runs from before it was stored
	Call    string  `json:"call,omitempty"`
	Pairing Pairing `json:"pairing"`
	// PerStream is round trips per second of one stream (the mean of the
	// streams); Cell.TPS is all streams together.
	PerStream float64 `json:"per_stream_per_s"`
	// CtxSwitchesPerSec is the machine's context switches per second in
	// the window, CtxSwitchesPerCall that over the round trips per second.
	CtxSwitchesPerSec  float64 `json:"ctx_switches_per_s"`
	CtxSwitchesPerCall float64 `json:"ctx_switches_per_call"`
	// NoCall says why a cell that ran its whole window completed no call
	// and failed none (its rates are then 0, and not a figure); empty
	// otherwise.
	NoCall string `json:"no_call,omitempty"`
}

// DSNTransport is the transport an engine's DSN names: a unix socket
// (PostgreSQL: a host that is a directory), or TCP (an unreadable DSN is
// left for the connection to refuse, with its reasons).
func DSNTransport(eng, dsn string) string {
	if _, d, ok := dialectOf(eng); ok && d.transport != nil {
		return d.transport(dsn)
	}
	return TCP
}

// Layout is where one cell's client and backend run.
type Layout struct {
	Transport string
	Pairing   Pairing
}

// Cells are the sweep's cells on machine t, repeats outermost so that
// repeats interleave, then transport, pairing and streams; and each cell's
// layout, by cell index. On SQLite every cell runs on the matrix's client
// CPU. The matrix is returned whole, unavailable pairings included.
func (c RunConfig) Cells(t *result.Topology) ([]sweep.Cell, []Layout, []Pairing) {
	m := Matrix(t)
	transports, pairs := c.Transports, Select(m, c.Pairings)
	if spec, _ := engine.Lookup(c.Engine); !spec.Server {
		p := m[0]
		p.Name, p.Backend = InProcess, -1
		transports, pairs = []string{InProcess}, []Pairing{p}
	}
	var cells []sweep.Cell
	var layout []Layout
	for r := range c.Repeat {
		for _, tr := range transports {
			for _, p := range pairs {
				if p.Unavailable != "" {
					continue
				}
				sel := fmt.Sprintf("cpus=%d", p.Client)
				for _, s := range c.Streams {
					cells = append(cells, sweep.Cell{
						Point:    drive.Point{Index: len(cells), Streams: s, Placement: sel, Repeat: r},
						Place:    place.Placement{Selector: sel, CPUs: []int{p.Client}, Streams: []int{p.Client}, Cores: 1, DataNode: -1},
						DataNode: -1, DOP: 1, Cores: 1,
					})
					layout = append(layout, Layout{Transport: tr, Pairing: p})
				}
			}
		}
	}
	return cells, layout, m
}

// Plan is the sweep plan of cells, monitored by sysmon.
func (c RunConfig) Plan(cells []sweep.Cell) sweep.Plan {
	return sweep.Plan{Cells: cells, Warmup: c.Warmup, Duration: c.Duration, Monitor: drive.SysMonitor("/"),
		Pace: c.Pacing.Pacer(c.Seed)}
}

// Sweep is the null transaction as a sweep.Workload.
type Sweep struct {
	cfg    RunConfig
	layout []Layout
	matrix []Pairing
	spec   engine.Spec
	dial   dialect
	owner  engine.Engine            // the engine that started a managed server, closed last
	engs   map[string]engine.Engine // by transport
	root   string                   // of /proc
	was    []int                    // the process's CPUs before a cell pinned it; nil: not pinned
	procs  int                      // GOMAXPROCS before, held while the process is pinned
	// settings are a managed server's extra settings (ServerSettings),
	// session the statements each stream runs first (Session).
	settings map[string]string
	session  []string
}

var _ sweep.Workload[*Cell] = (*Sweep)(nil)

// NewSweep is the null transaction configured by cfg (checked), for the
// cells and layout of cfg.Cells.
func NewSweep(cfg RunConfig, layout []Layout, matrix []Pairing) *Sweep {
	spec, d, _ := dialectOf(cfg.Engine)
	return &Sweep{cfg: cfg, spec: spec, dial: d, layout: layout, matrix: matrix,
		engs: map[string]engine.Engine{}, root: "/"}
}

// Describe names the workload and engine.
func (s *Sweep) Describe() sweep.Description {
	return sweep.Description{Workload: "null", Engine: s.cfg.Engine, InCgo: !s.spec.Server}
}

// Types is the one call.
func (s *Sweep) Types() []string {
	if s.cfg.Call == CallPointSelect {
		return []string{CallPointSelect}
	}
	return []string{CallSelect1}
}

// ServerSettings are settings a managed PostgreSQL or MariaDB server
// starts with (a library to preload, a log to keep), set before Open; a
// --dsn server is never started, so they do not apply to it.
func (s *Sweep) ServerSettings(m map[string]string) { s.settings = m }

// Session sets the statements each PostgreSQL or MariaDB stream opened
// from now on runs first on its connection, before it prepares its call
// and takes the connection over: run null --monitor switches a facility
// per cell.
func (s *Sweep) Session(stmts []string) { s.session = stmts }

// sayServer shows which managed server was started. One that removed what
// killed numalab processes left (or could not) says so on a line of its
// own: a progress line may be dropped (at most one a second in a log), and
// a removal must stay on record.
func sayServer(tell sweep.Teller, describe string, reclaimed bool) {
	if reclaimed {
		tell.Note("note: " + describe)
		return
	}
	tell.Say(describe)
}

// Open starts a managed server (listening on a loopback address too, for
// TCP) or uses the DSN, through the engine package, and opens the engine
// once per transport. It stores the matrix and says which pairings are
// unavailable.
func (s *Sweep) Open(ctx context.Context, tell sweep.Teller) ([]result.Entry, error) {
	items := []result.Entry{KindMatrix.Of(s.matrix)}
	for _, p := range s.matrix {
		if p.Unavailable != "" && s.spec.Server && slices.Contains(s.cfg.Pairings, p.Name) {
			tell.Note("note: " + p.String())
		}
	}
	if !s.spec.Server {
		return items, nil
	}
	opt := engine.Options{DSN: s.cfg.DSN, PinBackends: true, MariaDBCacheMetadata: true,
		ConnectTimeout: s.cfg.ConnectTimeout,
		ServerSettings: s.settings, TCP: slices.Contains(s.cfg.Transports, TCP)}
	if s.cfg.DSN == "" {
		tell.Say("starting " + s.spec.Article + " server")
	}
	first, err := engine.Open(ctx, s.cfg.Engine, opt)
	if err != nil && s.cfg.DSN != "" {
		return nil, fmt.Errorf("opening %s over %s: %w", s.cfg.Engine, s.cfg.Transports[0], err)
	} else if err != nil {
		return nil, err // the managed server's start says what failed
	}
	dsns := map[string]string{}
	if m, ok := engine.ManagedServer(first); ok {
		s.owner = first
		sayServer(tell, m.Describe, m.Reclaimed)
		dsns[TCP] = m.TCPDSN
	} else {
		s.engs[s.cfg.Transports[0]] = first
	}
	for _, tr := range s.cfg.Transports {
		e := s.engs[tr]
		if e == nil && tr == Unix && s.owner != nil {
			e = s.owner
		} else if e == nil {
			opt := engine.Options{DSN: dsns[tr], PinBackends: true, MariaDBCacheMetadata: true,
				ConnectTimeout: s.cfg.ConnectTimeout}
			if e, err = engine.Open(ctx, s.cfg.Engine, opt); err != nil {
				return nil, errors.Join(fmt.Errorf("opening %s over %s: %w", s.cfg.Engine, tr, err), s.Close())
			}
		}
		s.engs[tr] = e
		if s.cfg.Call == CallPointSelect {
			if err := makeSbtest(ctx, e); err != nil {
				return nil, errors.Join(err, s.Close())
			}
		}
		if info, err := e.Describe(ctx); err == nil {
			items = append(items, engine.KindInfo.Of(info))
		}
	}
	return items, nil
}

// Prewarm has nothing to read: the null transaction touches no data.
func (s *Sweep) Prewarm(context.Context, int, sweep.Teller) ([]result.Entry, error) { return nil, nil }

// Begin puts every thread of this process on the cell's client CPUs
// (PostgreSQL): the client is the whole process, as pgbench under taskset
// is, not only the stream's thread. Go's own threads (the scheduler's,
// the timers', the collector's) otherwise run wherever the kernel puts
// them, the backend's CPU included, where they would compete with the
// backend. Close puts them back.
//
// GOMAXPROCS is held at its value before: the runtime otherwise lowers it
// to the pinned process's one CPU within a second or two (each change a
// stop-the-world), and the stream's thread, holding the only P while it
// waits for an answer, would keep the timers and the monitor from running.
func (s *Sweep) Begin(_ context.Context, c sweep.Cell) error {
	if !s.spec.Server {
		return nil
	}
	if s.was == nil {
		was, err := place.ProcessCPUs()
		if err != nil {
			return fmt.Errorf("reading this process's CPUs: %w", err)
		}
		s.was = was
		s.procs = runtime.GOMAXPROCS(0)
		runtime.GOMAXPROCS(s.procs) // set, so no longer the runtime's to change
	}
	return s.pinProcess(c.Place.CPUs)
}

// pinProcess sets the CPUs of every thread of this process. New threads
// inherit them from the thread that makes them, so one made during a pass
// by a thread not yet placed would keep the old CPUs: the threads are
// gone over again until a pass finds none it has not placed.
func (s *Sweep) pinProcess(cpus []int) error {
	placed := map[int]bool{}
	for {
		tasks, err := os.ReadDir(filepath.Join(s.root, "proc", "self", "task"))
		if err != nil {
			return fmt.Errorf("placing this process's threads: %w", err)
		}
		fresh := false
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || placed[tid] {
				continue
			}
			placed[tid], fresh = true, true
			if err := place.PinPID(tid, cpus); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("placing thread %d of this process on cpus %s: %w", tid, place.FormatCPUs(cpus), err)
			}
		}
		if !fresh {
			return nil
		}
	}
}

// releaseProcs gives GOMAXPROCS back to the runtime (unless the
// environment sets it): the runtime's default counts the calling thread's
// CPUs, so this thread is put on the process's CPUs first.
func (s *Sweep) releaseProcs() error {
	if os.Getenv("GOMAXPROCS") != "" {
		runtime.GOMAXPROCS(s.procs)
		return nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := place.Pin(s.was); err != nil {
		runtime.GOMAXPROCS(s.procs)
		return fmt.Errorf("placing a thread on cpus %s to give GOMAXPROCS back to the runtime: %w",
			place.FormatCPUs(s.was), err)
	}
	runtime.SetDefaultGOMAXPROCS()
	return nil
}

// Stream opens one stream on the calling thread, which drive has pinned
// to the client's CPU. On PostgreSQL the thread is pinned to the backend's
// CPU while it connects (the engine pins the new backend to the
// connecting thread's CPUs), then back to the client's.
func (s *Sweep) Stream(ctx context.Context, c sweep.Cell, _ int) (drive.Stream, error) {
	if !s.spec.Server {
		return openSQLite()
	}
	l := s.layout[c.Index]
	if err := place.Pin([]int{l.Pairing.Backend}); err != nil {
		return nil, fmt.Errorf("placing the backend on cpu %d: %w", l.Pairing.Backend, err)
	}
	conn, err := s.engs[l.Transport].Connect(ctx)
	if perr := place.Pin(c.Place.CPUs); perr != nil {
		if conn != nil {
			conn.Close()
		}
		return nil,
			errors.Join(err, fmt.Errorf("placing the client back on cpus %s: %w", place.FormatCPUs(c.Place.CPUs), perr))
	}
	if err != nil {
		return nil, err
	}
	return s.dial.open(ctx, conn, s.cfg.Protocol, s.cfg.Call, s.session)
}

// End makes the cell's item.
func (s *Sweep) End(_ context.Context, c sweep.Cell, m *result.Cell, err error) sweep.Outcome[*Cell] {
	if m == nil {
		return sweep.Outcome[*Cell]{Stop: err}
	}
	l := s.layout[c.Index]
	it := &Cell{Cell: *m, Transport: l.Transport, Pairing: l.Pairing}
	it.Call = s.Types()[0]
	if s.spec.Server {
		it.Protocol = s.cfg.Protocol
	}
	if m.Streams > 0 {
		it.PerStream = m.TPS / float64(m.Streams)
	}
	if m.Usage != nil {
		it.CtxSwitchesPerSec = m.Usage.CtxSwitchesPerSec
		if m.TPS > 0 {
			it.CtxSwitchesPerCall = m.Usage.CtxSwitchesPerSec / m.TPS
		}
	}
	var notes []string
	if !m.Interrupted && m.Total.Count == 0 && m.Total.Errors == 0 {
		it.NoCall = fmt.Sprintf("no call completed in the %v window: every stream's call was still waiting for its "+
			"answer when the window closed (a backend not run for that long: is the machine overloaded?)", m.Duration)
		notes = append(notes, fmt.Sprintf("note: cell %d (%s %s): %s", c.Index, l.Transport, l.Pairing.Name, it.NoCall))
	}
	return sweep.Outcome[*Cell]{Item: it, Store: []result.Entry{KindCell.Of(*it)}, Notes: notes, Stop: err}
}

// Close closes the engines and stops a managed server.
func (s *Sweep) Close() error {
	var errs []error
	for tr, e := range s.engs {
		if e != s.owner {
			errs = append(errs, e.Close())
		}
		delete(s.engs, tr)
	}
	if s.owner != nil {
		errs = append(errs, s.owner.Close()) // and stops the managed server
		s.owner = nil
	}
	if s.was != nil {
		errs = append(errs, s.pinProcess(s.was))
		s.was = nil
		errs = append(errs, s.releaseProcs())
	}
	return errors.Join(errs...)
}
