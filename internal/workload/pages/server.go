package pages

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/hugepages"
	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/workload/sqlscript"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// serverPage is a server engine's setting that maps its data memory in
// 2 MiB pages from the kernel's pool (hugetlb), with its values off and on,
// and settings both servers take.
type serverPage struct {
	title, setting, off, on, memory string
	both                            map[string]string
}

// serverPages are the server engines whose data memory a setting maps in
// 2 MiB pages.
//
// MariaDB 10.11 with large pages maps every cache it allocates through
// its large-page allocator in the pool's pages (mmap with MAP_HUGETLB: no
// memlock limit or CAP_IPC_LOCK needed), first the MyISAM key cache and
// Aria's page cache (128 MiB each by default), then InnoDB's buffer pool
// (all of innodb_buffer_pool_size_max, populated, plus up to one 8 MiB
// extent to align it); where the pool runs short it falls back to 4 KiB
// pages without an error, which is what the two caches made its buffer
// pool do. Both servers therefore keep the two caches, which tpcc-ro does
// not use (its tables are InnoDB's), at 16 MiB, and the pages reserved
// (the pool and a quarter, and 64 MiB) hold all three.
var serverPages = map[string]serverPage{
	"postgres": {title: "PostgreSQL", setting: "huge_pages", off: "off", on: "on", memory: "shared buffers"},
	"mariadb": {title: "MariaDB", setting: "large-pages", off: "OFF", on: "ON", memory: "buffer pool",
		both: map[string]string{"key-buffer-size": "16777216", "aria-pagecache-buffer-size": "16777216"}},
}

// noPages says, of the engines that run tpcc-ro, why one has no
// page-size pair.
var noPages = map[string]string{
	"duckdb": "DuckDB has no setting that maps its buffer manager's memory in 2 MiB pages: its allocations take the " +
		"kernel's transparent huge page default (madvise or never on most machines), which it does not advise, so only " +
		"a machine-wide change (transparent_hugepage=always, which numalab does not make on a shared machine) would; " +
		"its runs' model rests on one latency and the published stall share, or on remote memory where the machine has nodes",
}

// checkEngine refuses an engine without a page-size pair, saying why.
func checkEngine(name string) cliflag.Errs {
	var bad cliflag.Errs
	if name == "" || name == "sqlite" {
		return nil
	}
	if _, ok := serverPages[name]; ok {
		return nil
	}
	names := []string{"sqlite"}
	for n := range serverPages {
		names = append(names, n)
	}
	slices.Sort(names)
	why, ok := noPages[name]
	if !ok {
		why = "is not an engine whose data can be mapped in both page sizes"
	}
	bad.BadIf(true, "engine", name, why+" (expected one of "+strings.Join(names, ", ")+")")
	return bad
}

// serverWarehouses is the size of a server's tpcc-ro database: the
// transactions read warehouse 1 alone.
const serverWarehouses = 1

// serverSides starts two managed servers of cfg's engine, its data
// memory in 4 KiB pages in one and in 2 MiB pages from the kernel's pool
// in the other (numalab reserves the pages first and gives them back
// after), puts the data in each (tpcc-ro W=1, or the user's --init:
// loader), prewarms it, and opens a stream on each, its backend pinned
// beside the stream on cfg.CPU.
func serverSides(ctx context.Context, cfg RunConfig, w io.Writer) (_ *sides, err error) {
	sp := serverPages[cfg.engine()]
	sd := &sides{engine: cfg.engine(), title: sp.title, workload: cfg.workload(),
		chains: "; the 2 MiB chain is in transparent huge pages, not the kernel's pool: its walks are of 2 MiB pages " +
			"as the server's are"}
	load, data := tpccLoader(cfg.engine()), "W=1 loaded"
	sd.what = "tpcc-ro (Order-Status and Stock-Level, W=1)"
	if cfg.Script != nil {
		load, data = scriptLoader(cfg, w), "your --init run"
		if cfg.Script.Init == "" {
			data = "no --init"
		}
		sd.what = "your scripts (" + sd.workload + ")"
	}
	var undo []func()
	sd.release = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	defer func() {
		if err != nil {
			sd.release()
		}
	}()
	// The 2 MiB server first, right after its pages are reserved: another
	// PostgreSQL server on the machine (huge_pages=try, the default) takes
	// free pages of the pool when it starts.
	for _, i := range []int{1, 0} {
		kind := pageMemory[i]
		srv, err := startServer(ctx, cfg, sp, kind.huge, load)
		if err != nil {
			return nil, err
		}
		undo = append(undo, func() { srv.res.Release() })
		if kind.huge {
			sd.where = fmt.Sprintf(
				"its %s in 4 KiB pages (%s=%s) and in 2 MiB pages from the kernel's pool (%s=%s, %d pages reserved by "+
					"numalab and given back after), a managed server each, %s and prewarmed, the backend pinned beside the stream",
				sp.memory, sp.setting, sp.off, sp.setting, sp.on, srv.res.Pages, data)
		}
		conn, err := srv.l.stream(ctx, cfg.CPU)
		if err != nil {
			return nil, fmt.Errorf("%s with %s=%s: %w", sp.title, sp.setting, sp.value(kind.huge), err)
		}
		undo = append(undo, conn.close)
		if srv.l.init != "" {
			sd.inits = append(sd.inits, fmt.Sprintf("%s with %s=%s", srv.l.init, sp.setting, sp.value(kind.huge)))
		}
		sd.s[i] = side{name: kind.name, pages: kind.pages, dataHuge: srv.huge, dataBytes: max(srv.l.bytes, 2<<20), conn: conn}
	}
	return sd, nil
}

// value is sp's setting's value for huge pages or not.
func (sp serverPage) value(huge bool) string {
	if huge {
		return sp.on
	}
	return sp.off
}

// loaded is a managed server started with its data in place and
// prewarmed: its engine, its data's size (tables and indexes), and how to
// open the stream of its cells on a CPU, which closes the server when it
// cannot be opened and when it is closed.
type loaded struct {
	eng    engine.Engine
	bytes  int64
	init   string // what --init did, in words; "" for none
	stream func(ctx context.Context, cpu int) (*pageConn, error)
}

// loader starts a managed server of the engine with its data in place,
// the server settings given over numalab's.
type loader struct {
	// est is about how large the data is, to size the server's memory
	// (engine.Options.DataBytes; 0 for numalab's least).
	est  int64
	load func(ctx context.Context, settings map[string]string) (*loaded, error)
}

// tpccLoader loads tpcc-ro W=1 into a managed server of name.
func tpccLoader(name string) loader {
	est := tpcc.EstimatedBytes(serverWarehouses)
	return loader{est: est, load: func(ctx context.Context, settings map[string]string) (*loaded, error) {
		src := tpcc.Source{Engine: name, Where: engine.Options{ServerSettings: settings},
			Load: tpcc.LoadConfig{Warehouses: serverWarehouses, Seed: 1}, Run: tpcc.Options{Seed: 1}}
		w, _, err := tpcc.Prepare(ctx, src)
		if err != nil {
			return nil, err
		}
		pw, err := w.Prewarm(ctx, false)
		if err != nil {
			w.Engine().Close()
			return nil, fmt.Errorf("prewarming: %w", err)
		}
		return &loaded{eng: w.Engine(), bytes: pw.FileBytes, stream: func(ctx context.Context, cpu int) (*pageConn, error) {
			return newPageConn(ctx, w, cpu, w.Engine().Close)
		}}, nil
	}}
}

// scriptLoader starts a managed server of cfg's engine as run sql does
// (sqlscript.Sweep's Open), runs cfg's --init on it, timed, saying on w
// how long it took, and prewarms the tables it made (the server's own
// schema, as run sql's --init makes them); its stream is a client of the
// scripts (sqlscript.Sweep's Client) on a connection of its own.
func scriptLoader(cfg RunConfig, w io.Writer) loader {
	sc := *cfg.Script
	sc.Engine = cfg.engine()
	return loader{load: func(ctx context.Context, settings map[string]string) (_ *loaded, err error) {
		scripts, stored, err := sc.ParseScripts()
		if err != nil {
			return nil, err
		}
		init, err := sc.ParseInit()
		if err != nil {
			return nil, err
		}
		sw := sqlscript.NewSweep(sc, scripts, stored, init)
		sw.ServerSettings(settings)
		items, err := sw.Open(ctx, writerTeller{w})
		if err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				sw.Close()
			}
		}()
		var did string
		for _, it := range items {
			if rec, ok := it.Body().(sqlscript.InitRecord); ok {
				did = fmt.Sprintf("--init %s: %d commands in %.2f s", rec.File, rec.Commands, rec.Seconds)
				fmt.Fprintf(w, "  %s\n", did)
			}
		}
		eng := sw.Engine()
		pw, err := eng.Prewarm(ctx)
		if err != nil {
			return nil, fmt.Errorf("prewarming what --init made: %w", err)
		}
		return &loaded{eng: eng, bytes: pw.Bytes, init: did, stream: func(ctx context.Context, cpu int) (*pageConn, error) {
			return scriptConn(ctx, sw, eng, cpu, sw.Close, false)
		}}, nil
	}}
}

// writerTeller says run sql's steps (sweep.Teller) on a writer.
type writerTeller struct{ w io.Writer }

func (t writerTeller) Say(step string)  { fmt.Fprintf(t.w, "  %s\n", step) }
func (t writerTeller) Note(line string) { fmt.Fprintln(t.w, line) }

// server is a managed server of one page size, its data in place and
// prewarmed, and what its data mapping is.
type server struct {
	l    *loaded
	res  *hugepages.Reservation // the pages reserved for it; nil in 4 KiB pages
	huge float64                // the share of its data mapping in 2 MiB pages
}

// startServer starts a managed server of cfg's engine, in 2 MiB pages
// from the kernel's pool or not (huge), puts its data in it (ld) and
// checks that its data is mapped as asked. In 2 MiB pages it reserves the
// pages first, and tries once more, the pages reserved afresh, when the
// start or the check fails: another server on the machine (PostgreSQL's
// huge_pages=try, its default) may take the pool's free pages as it
// starts, and MariaDB then maps its buffer pool in 4 KiB pages without an
// error.
func startServer(ctx context.Context, cfg RunConfig, sp serverPage, huge bool, ld loader) (*server, error) {
	pool := max(pgserver.SharedBuffersFor(ld.est), mariaserver.BufferPoolFor(ld.est))
	settings := maps.Clone(sp.both)
	if settings == nil {
		settings = map[string]string{}
	}
	settings[sp.setting] = sp.value(huge)
	what := fmt.Sprintf("%s with %s=%s", sp.title, sp.setting, sp.value(huge))
	var first error
	for try := 0; ; try++ {
		srv := &server{}
		if huge {
			var err error
			if srv.res, err = hugepages.Reserve("/", hugepages.Pages(pool+pool/4+64<<20)); err != nil {
				return nil, fmt.Errorf("%s: reserving its 2 MiB pages: %w", what, errors.Join(first, err))
			}
		}
		err := srv.open(ctx, ld, settings, cfg.CPU, sp, huge)
		if err == nil {
			return srv, nil
		}
		srv.res.Release()
		switch {
		case !huge || ctx.Err() != nil:
			return nil, fmt.Errorf("%s: %w", what, err)
		case try == 1:
			return nil, fmt.Errorf(
				"%s: %w (tried twice, the pages reserved afresh: another server on this machine may take them as it starts)",
				what, err)
		}
		first = err
	}
}

// open starts the server with settings, puts its data in (ld) and reads
// its data mapping, refusing one whose setting did not decide its page
// size.
func (srv *server) open(ctx context.Context, ld loader, settings map[string]string, cpu int, sp serverPage,
	huge bool) (err error) {
	if srv.l, err = ld.load(ctx, settings); err != nil {
		return err
	}
	eng := srv.l.eng
	defer func() {
		if err != nil {
			eng.Close()
		}
	}()
	if srv.huge, err = dataHuge(ctx, eng, cpu); err != nil {
		return err
	}
	if huge && srv.huge < 0.9 || !huge && srv.huge > 0.1 {
		return fmt.Errorf("mapped its %s (the mapping of at least 64 MiB most in memory) %.0f%% in 2 MiB pages: "+
			"the setting did not decide its page size here, so the two servers' data would not be in memory of two page sizes",
			sp.memory, 100*srv.huge)
	}
	return nil
}

// dataHuge is the share of eng's data memory in 2 MiB pages, as a
// backend of it (a process, or a server thread) maps it: the mapping in
// its proc/PID/smaps that dataMapping picks.
func dataHuge(ctx context.Context, eng engine.Engine, cpu int) (share float64, err error) {
	err = pinned(cpu, func() error {
		c, err := eng.Connect(ctx)
		if err != nil {
			return err
		}
		defer c.Close() // after the read: a PostgreSQL backend ends with its connection
		share, err = backendHuge(c.BackendPID())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("reading where its data is: %w", err)
	}
	return share, nil
}

// backendHuge is the share in 2 MiB pages of the data mapping in
// proc/pid/smaps.
func backendHuge(pid int) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	m, err := dataMapping(f)
	if err != nil {
		return 0, fmt.Errorf("reading /proc/%d/smaps: %w", pid, err)
	}
	return m.hugeShare(), nil
}

// smapsEntry is what dataMapping reads of one mapping, sizes in kB.
type smapsEntry struct {
	size, rss, hugetlb, anonHuge, pmdMapped, kernelPage int64
}

// resident is what of the mapping is in memory: its pages of 4 KiB or
// transparent huge pages, and its pages from the kernel's pool.
func (e smapsEntry) resident() int64 { return e.rss + e.hugetlb }

// hugeShare is the share of the mapping in 2 MiB pages: all of it in the
// kernel's pool (hugetlb: its kernel page size is 2 MiB), else its
// transparent huge pages over what is resident.
func (e smapsEntry) hugeShare() float64 {
	switch {
	case e.kernelPage >= 2048:
		return 1
	case e.rss == 0:
		return 0
	}
	return min(float64(e.anonHuge+e.pmdMapped)/float64(e.rss), 1)
}

// errNoMapping is dataMapping's refusal of smaps with no mapping.
var errNoMapping = errors.New("no mapping of at least 64 MiB in memory in smaps")

// minDataMapping is the least size of a mapping dataMapping takes for a
// server's buffers: smaller ones are stacks, libraries and heaps.
const minDataMapping = 64 << 10 // kB

// dataMapping is, of the mappings in smaps text of at least
// minDataMapping, the one with the most in memory: a server's shared
// buffers or a chunk of its buffer pool (prewarmed), not a large
// reservation of address space nothing was written to.
func dataMapping(r io.Reader) (smapsEntry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var best, cur smapsEntry
	seen := false
	flush := func() {
		if seen && cur.size >= minDataMapping && cur.resident() > best.resident() {
			best = cur
		}
	}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") && strings.Contains(f[0], "-") {
			flush()
			cur, seen = smapsEntry{}, true
			continue
		}
		if len(f) < 3 || f[2] != "kB" {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return smapsEntry{}, fmt.Errorf("smaps line %q: %w", sc.Text(), err)
		}
		switch f[0] {
		case "Size:":
			cur.size = v
		case "Rss:":
			cur.rss = v
		case "AnonHugePages:":
			cur.anonHuge = v
		case "Shared_Hugetlb:", "Private_Hugetlb:":
			cur.hugetlb += v
		case "ShmemPmdMapped:":
			cur.pmdMapped = v
		case "KernelPageSize:":
			cur.kernelPage = v
		}
	}
	if err := sc.Err(); err != nil {
		return smapsEntry{}, err
	}
	flush()
	if best.size == 0 {
		return smapsEntry{}, errNoMapping
	}
	return best, nil
}
