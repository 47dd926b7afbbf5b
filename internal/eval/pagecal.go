package eval

import (
	"bufio"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/mattn/go-sqlite3"
	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/perfctr"
	"github.com/numalab/numalab/internal/record"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sentinel"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/units"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// Page-size points: the tpcc-ro database image in memory eval maps itself,
// once advised MADV_NOHUGEPAGE (4 KiB pages) and once MADV_HUGEPAGE (2 MiB
// pages), read in place by SQLite (sqlite3_deserialize). Each transaction
// runs twice in a row with the same inputs: the first run (cold) finds its
// data where the previous transactions left it, mostly in memory, the
// second (hot) finds it in the caches the first filled. The same
// transactions then see three latencies: a fully random chain in memory
// mapped like each image and as large, and a chain half the size of the
// level-2 cache, each timed next to the cells: latency points on any
// machine, one node included. Cold and hot alternate every transaction,
// so a change in the machine's speed moves both alike.

// image is a database image in anonymous memory of one page size.
type image struct {
	raw, mem []byte
	huge     bool
	// HugeShare is the share of the image the kernel backs with huge
	// pages (AnonHugePages in /proc/self/smaps), as checked after the copy.
	HugeShare float64
}

const twoMiB = 2 << 20

// newImage maps db's bytes into memory aligned to 2 MiB, advised for huge
// pages or against them before the copy faults the pages in.
func newImage(db []byte, huge bool) (*image, error) {
	size := (len(db) + twoMiB - 1) / twoMiB * twoMiB
	raw, err := unix.Mmap(-1, 0, size+twoMiB, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mapping %d bytes for the database image: %w", size, err)
	}
	off := (twoMiB - int(uintptr(unsafe.Pointer(&raw[0]))%twoMiB)) % twoMiB
	im := &image{raw: raw, mem: raw[off : off+size], huge: huge}
	adv := unix.MADV_NOHUGEPAGE
	if huge {
		adv = unix.MADV_HUGEPAGE
	}
	if err := unix.Madvise(im.mem, adv); err != nil {
		im.free()
		return nil, fmt.Errorf("advising the database image's page size: %w", err)
	}
	copy(im.mem, db)
	im.HugeShare = hugeShare(uintptr(unsafe.Pointer(&im.mem[0])), size)
	return im, nil
}

func (im *image) free() { unix.Munmap(im.raw) }

// hugeShare is the share of the mapping at addr backed by huge pages, from
// /proc/self/smaps; 0 when it cannot be read.
func hugeShare(addr uintptr, size int) float64 {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	var kb float64
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := vmaRange(line); ok {
			in = addr >= lo && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "AnonHugePages:") {
			if f := strings.Fields(line); len(f) >= 2 {
				v, _ := strconv.ParseFloat(f[1], 64)
				kb += v
			}
		}
	}
	return kb * 1024 / float64(size)
}

// vmaRange reads an smaps header line, "7f..-7f.. rw-p ...".
func vmaRange(line string) (lo, hi uintptr, ok bool) {
	a, b, found := strings.Cut(strings.Fields(line + " ")[0], "-")
	if !found {
		return 0, 0, false
	}
	l, err1 := strconv.ParseUint(a, 16, 64)
	h, err2 := strconv.ParseUint(b, 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(l), uintptr(h), true
}

// The statements of tpcc-ro's two transactions (Clauses 2.6.2.2 and
// 2.8.2.2), as numalab's SQLite stream runs them.
var pageTxSQL = []string{
	`SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first`,
	`SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?`,
	`SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1`,
	`SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?`,
	`SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?`,
	`SELECT count(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?`,
}

// pageConn is one connection over one image, with its statements, and
// how its cells open their counters (openCounters).
type pageConn struct {
	c  *sqlite3.SQLiteConn
	st []driver.Stmt
	// draw draws each pair's seed; pcg, reseeded with it before each run,
	// gives the transaction's inputs through rng.
	draw     *rand.Rand
	pcg      *rand.PCG
	rng      *rand.Rand
	row      []driver.Value
	counters func() (cellCounters, string)
}

func openPageConn(im *image) (*pageConn, error) {
	dc, err := (&sqlite3.SQLiteDriver{}).Open(":memory:")
	if err != nil {
		return nil, fmt.Errorf("opening an in-memory SQLite connection: %w", err)
	}
	c := dc.(*sqlite3.SQLiteConn)
	pcg := rand.NewPCG(1, 2)
	p := &pageConn{c: c, draw: rand.New(rand.NewPCG(3, 4)), pcg: pcg, rng: rand.New(pcg), row: make([]driver.Value, 8), counters: openCounters}
	if err := deserialize(c, im.mem); err != nil {
		c.Close()
		return nil, err
	}
	// Pages are read in place from the image, not copied to a cache.
	if _, err := c.Exec(fmt.Sprintf("PRAGMA mmap_size = %d", len(im.mem)), nil); err != nil {
		p.close()
		return nil, fmt.Errorf("setting mmap_size on the image: %w", err)
	}
	for _, q := range pageTxSQL {
		st, err := c.Prepare(q)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("preparing %q on the image (is it a tpcc database?): %w", q, err)
		}
		p.st = append(p.st, st)
	}
	return p, nil
}

func (p *pageConn) close() {
	for _, st := range p.st {
		st.Close()
	}
	p.c.Close()
}

// query runs statement i and returns the first column of its rows.
func (p *pageConn) query(i int, args ...driver.Value) ([]int64, error) {
	for j, a := range args {
		if v, ok := a.(int); ok {
			args[j] = int64(v)
		}
	}
	rows, err := p.st[i].Query(args) // the driver's own interface: no database/sql pool between
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var first []int64
	dest := p.row[:len(rows.Columns())]
	for {
		if err := rows.Next(dest); err == io.EOF {
			return first, nil
		} else if err != nil {
			return nil, err
		}
		if v, ok := dest[0].(int64); ok {
			first = append(first, v)
		}
	}
}

// next runs one transaction: Order-Status or Stock-Level with equal
// probability, inputs as in tpcc-ro at W = 1.
func (p *pageConn) next() error {
	r := p.rng
	d := 1 + r.IntN(tpcc.DistrictsPerWH)
	if r.IntN(2) == 0 {
		cid := int64(tpcc.NURand(r, 1023, 1, tpcc.CustomersPerDist, 259))
		if r.IntN(100) < 60 {
			ids, err := p.query(0, 1, d, tpcc.LastName(tpcc.NURand(r, 255, 0, 999, 157)))
			if err != nil {
				return err
			}
			if len(ids) > 0 {
				cid = ids[len(ids)/2]
			}
		}
		if _, err := p.query(1, 1, d, cid); err != nil {
			return err
		}
		o, err := p.query(2, 1, d, cid)
		if err != nil || len(o) == 0 {
			return err
		}
		_, err = p.query(3, 1, d, o[0])
		return err
	}
	n, err := p.query(4, 1, d)
	if err != nil || len(n) == 0 {
		return err
	}
	_, err = p.query(5, 1, d, n[0], n[0]-20, 1, 10+r.IntN(11))
	return err
}

// cellRun is what one cell measured: its cold runs (index 0) and its hot
// ones (1), each run once per pair.
type cellRun struct {
	pairs    int64
	seconds  [2]float64
	counters [2]*calib.CellCounters
	// noCounters says why counters are nil: none could be opened here;
	// readFailed, that they opened but a read of them failed.
	noCounters, readFailed string
}

// tps is the rate of the cell's cold (0) or hot (1) runs.
func (r cellRun) tps(kind int) float64 { return float64(r.pairs) / r.seconds[kind] }

// cellCounters are a cell's open counters (*perfctr.Counters).
type cellCounters interface {
	Read() ([]uint64, error)
	Close()
}

// counterSets are the hardware counters a cell tries, most first.
var counterSets = [][]perfctr.Event{
	{perfctr.Instructions, perfctr.LLCMisses, perfctr.Cycles},
	{perfctr.Instructions, perfctr.LLCMisses},
}

// openCounters opens the first of counterSets the kernel gives this
// thread; nil and why not when none.
func openCounters() (cellCounters, string) {
	var why string
	for _, set := range counterSets {
		c, err := perfctr.Open(set...)
		if err == nil {
			return c, ""
		}
		if why == "" {
			why = err.Error()
			if pe, ok := err.(*perfctr.Error); ok {
				why = pe.Reason()
			}
		}
	}
	return nil, why
}

// cell runs pairs of transactions for d on the calling thread, pinned to
// cpu: each pair a transaction with fresh inputs (cold), then the same
// again (hot), timed apart. Where the kernel lets it, it counts
// instructions and last-level misses of each run, reading the counters
// between the runs, outside their times. A failed read of the counters
// leaves the cell uncounted, saying why (readFailed), and does not fail it.
func (p *pageConn) cell(ctx context.Context, cpu int, d time.Duration) (cellRun, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return cellRun{}, fmt.Errorf("reading the page-size cell's thread's CPUs: %w", err)
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return cellRun{}, fmt.Errorf("pinning the page-size cell to CPU %d: %w", cpu, err)
	}
	// The thread goes back to the Go scheduler as it came, not pinned.
	defer unix.SchedSetaffinity(0, &old)
	ctr, why := p.counters()
	r := cellRun{noCounters: why}
	var sums [2][]uint64
	var last []uint64
	if ctr != nil {
		defer ctr.Close()
		var err error
		if last, err = ctr.Read(); err != nil {
			ctr, r.readFailed = nil, err.Error()
		}
	}
	// count adds the counts since the last read to run kind's sums.
	count := func(kind int) {
		if ctr == nil {
			return
		}
		now, err := ctr.Read()
		if err != nil {
			ctr, r.readFailed = nil, err.Error()
			return
		}
		if sums[kind] == nil {
			sums[kind] = make([]uint64, len(now))
		}
		for i := range now {
			sums[kind][i] += now[i] - last[i]
		}
		last = now
	}
	start := time.Now()
	// At least one pair: a thread preempted for the whole of a short cell
	// would otherwise give a point of 0 tps.
	for r.pairs == 0 || time.Since(start) < d && ctx.Err() == nil {
		seed := p.draw.Uint64()
		for kind := range 2 {
			p.pcg.Seed(seed, 0)
			t0 := time.Now()
			if err := p.next(); err != nil {
				return cellRun{}, fmt.Errorf("a tpcc-ro transaction on the image: %w", err)
			}
			r.seconds[kind] += time.Since(t0).Seconds()
			count(kind)
		}
		r.pairs++
	}
	if ctr == nil {
		return r, nil
	}
	for kind, sum := range sums {
		c := &calib.CellCounters{Instructions: sum[0], LLCMisses: sum[1]}
		if len(sum) > 2 {
			c.Cycles = sum[2]
		}
		r.counters[kind] = c
	}
	return r, nil
}

// pageMemory names the two kinds of memory, in the images' order.
var pageMemory = [2]struct {
	name, pages string
	huge        bool
}{{"4 KiB pages", memlat.Pages4K, false}, {"2 MiB pages", memlat.Pages2M, true}}

// pageRun is the page-size step in progress: the two images with their
// connections and chains, the cache's chain, and the fit being filled in.
type pageRun struct {
	ctx    context.Context
	cpu    int
	conns  [2]*pageConn
	chains [3]*memlat.DRAMChase // the two images' kinds of memory, then the cache's
	f      *calib.MeasuredFit
}

// hotMemory is the index of the cache in MeasuredFit.Memory: the memory a
// hot run's data sits in.
const hotMemory = 2

// chase measures chain i (a kind of memory, or the cache) on the cell's CPU.
func (r *pageRun) chase(i int) error {
	st, err := r.chains[i].MeasureWindows(r.ctx, r.cpu, int(pageChase/(50*time.Millisecond)))
	if err != nil {
		return fmt.Errorf("timing the random chain in %s: %w", r.f.Memory[i].Name, err)
	}
	m := &r.f.Memory[i]
	m.SamplesNS = append(m.SamplesNS, st.Median)
	return nil
}

// chaseAll measures every chain.
func (r *pageRun) chaseAll() error {
	for i := range r.chains {
		if err := r.chase(i); err != nil {
			return err
		}
	}
	return nil
}

// cell runs one cell in memory i, labelled, then times memory i's chain
// and takes a sentinel sample, and adds its cold runs as a cell in memory
// i at the chain's latency and its hot runs as one in the caches.
func (r *pageRun) cell(i int, label string, d time.Duration, repeat bool) error {
	c, err := r.conns[i].cell(r.ctx, r.cpu, d)
	if err != nil {
		return err
	}
	if err := r.chase(i); err != nil {
		return err
	}
	ns := r.f.Memory[i].SamplesNS
	chain := [2]float64{ns[len(ns)-1], 0}
	before := len(r.f.Sentinel.Samples) - 1
	r.f.Sentinel.Take(label)
	if c.noCounters != "" {
		r.f.CountersReason = c.noCounters
	}
	for kind, mem := range []int{i, hotMemory} {
		r.f.Cells = append(r.f.Cells, calib.FitCell{Label: label + ", " + []string{"cold", "hot"}[kind], Memory: mem, ChainNS: chain[kind],
			Point: model.Point{GHz: r.f.GHz, TPSPerCore: c.tps(kind)}, Txns: c.pairs, Seconds: c.seconds[kind],
			Before: before, After: before + 1, Repeat: repeat, Counters: c.counters[kind], NoCounters: c.readFailed})
	}
	return nil
}

// cacheChainBytes is the size of the caches' chain: half the level-2
// cache of machine t, 128 KiB when its size is not known.
func cacheChainBytes(t *result.Topology) int64 {
	if t != nil {
		for _, c := range t.Caches {
			if c.Level == 2 && c.Type != "Instruction" && c.SizeBytes > 0 {
				return c.SizeBytes / 2
			}
		}
	}
	return 128 << 10
}

// measurePages runs pairs of cells on cpu, the tpcc-ro image in 4 KiB
// then 2 MiB pages, each cell followed by a timing of its memory's chain
// and a sample of the speed sentinel (one more before the first). A
// memory's chain is a random chain in memory mapped like its image and as
// large, timed also before the first pair and after the last; the caches'
// a chain of cacheBytes in 4 KiB pages, timed then. A cell next to a
// sentinel sample whose core reading is off its median by more than
// SentinelTolerance is flagged and, up to repeats of them and while a
// repeat ends before until, run once more at the end; flagged cells are
// left out. A and M are then fitted to the rest, cold and hot
// (MeasuredFit's Compute).
func measurePages(ctx context.Context, dbPath string, cpu, pairs, repeats int, cellDur time.Duration, ghz float64, cacheBytes int64, until time.Time, mem *sentinel.Memory) (*calib.MeasuredFit, error) {
	db, err := os.ReadFile(dbPath)
	if err != nil {
		return nil, fmt.Errorf("reading the tpcc-ro database for the page-size points: %w", err)
	}
	f := &calib.MeasuredFit{
		What: fmt.Sprintf("tpcc-ro (Order-Status and Stock-Level, W=1) on SQLite, one stream on CPU %d, the database image read in place in memory of two page sizes, each transaction run twice with the same inputs (cold, then hot from the caches)", cpu),
		Method: fmt.Sprintf("%d pairs of %v cells, 4 KiB then 2 MiB pages, each followed by a sample of the speed sentinel; in each cell every transaction ran cold then hot, timed apart; each cold cell's latency a random chain in memory mapped alike and as large, timed right after it, the caches' a chain of %s timed before the first pair and after the last; cells next to a core reading more than %.0f%% off the median left out, and up to %d of them run again where eval's budget allowed",
			pairs, cellDur, units.Bytes(cacheBytes), 100*SentinelTolerance, repeats),
		GHz: ghz,
	}
	f.Sentinel.UseMemory(mem)
	r := &pageRun{ctx: ctx, cpu: cpu, f: f}
	for i, kind := range pageMemory {
		im, err := newImage(db, kind.huge)
		if err != nil {
			return nil, err
		}
		defer im.free()
		if r.conns[i], err = openPageConn(im); err != nil {
			return nil, err
		}
		defer r.conns[i].close()
		if r.chains[i], err = memlat.NewChase(int64(len(im.mem)), kind.pages); err != nil {
			return nil, fmt.Errorf("mapping the random chain in %s: %w", kind.name, err)
		}
		defer r.chains[i].Free()
		f.Memory = append(f.Memory, calib.FitMemory{Name: kind.name, DataHuge: im.HugeShare, ChainHuge: r.chains[i].HugeFraction, ChainBytes: r.chains[i].Bytes})
		if _, err := r.conns[i].cell(ctx, cpu, cellDur/4); err != nil { // warm
			return nil, err
		}
	}
	if r.chains[hotMemory], err = memlat.NewChase(cacheBytes, memlat.Pages4K); err != nil {
		return nil, fmt.Errorf("mapping the random chain for the cache: %w", err)
	}
	defer r.chains[hotMemory].Free()
	f.Memory = append(f.Memory, calib.FitMemory{Name: "the caches", Hot: true, ChainBytes: cacheBytes})
	if err := r.chaseAll(); err != nil {
		return nil, err
	}
	f.Sentinel.Take("start")
	for k := 0; k < pairs && ctx.Err() == nil; k++ {
		for i, kind := range pageMemory {
			if err := r.cell(i, fmt.Sprintf("pair %d, %s", k+1, kind.name), cellDur, false); err != nil {
				return nil, err
			}
		}
	}
	if err := r.chaseAll(); err != nil {
		return nil, err
	}
	f.Flag(SentinelTolerance)
	for _, c := range slices.Clone(f.Cells) {
		// A cell's hot runs share its sentinel samples: the cold one
		// stands for both.
		if !c.Off || c.Memory == hotMemory || repeats == 0 || ctx.Err() != nil || time.Now().Add(cellDur+pageChase).After(until) {
			continue
		}
		repeats--
		// A sample of its own before the repeat: the last one may be off.
		label := strings.TrimSuffix(c.Label, ", cold")
		f.Sentinel.Take("before " + label + " again")
		if err := r.cell(c.Memory, label+" again", cellDur, true); err != nil {
			return nil, err
		}
	}
	f.Flag(SentinelTolerance)
	for i := range f.Memory {
		f.Memory[i].LatencyNS = stats.Median(f.Memory[i].SamplesNS)
	}
	f.Compute()
	return f, nil
}

// pageStepTitle is the page-size step's heading.
const pageStepTitle = "page-size points for the model"

// pagePoints runs the page-size step: the tpcc-ro database at db, on the
// machine's first CPU, at the clock the memory probe (run probeID in the
// store) measured, and stores what it measured and fitted as a run of
// kind calib.RunFit, which the report's model and eval's summary rest on.
func pagePoints(ctx context.Context, w io.Writer, o Options, probeID int64, db string, plan Plan, mem *sentinel.Memory, stored Stored) error {
	if probeID == 0 {
		return fmt.Errorf("no memory probe run: the page-size points need its clock: %w", errNoRoom)
	}
	st, err := store.OpenToRead(o.Store)
	if err != nil {
		return err
	}
	run, err := st.Get(probeID)
	st.Close()
	if err != nil {
		return err
	}
	p, err := calib.ReadProbe(run)
	if err != nil {
		return err
	}
	if !(p.GHz > 0) {
		return fmt.Errorf("memory probe run %d measured no clock: %w", probeID, errNoRoom)
	}
	cpu := 0
	if len(o.Machine.CPUs) > 0 {
		cpu = o.Machine.CPUs[0].ID
	}
	// The plan leaves the repeats out of the step's time (they would cost
	// the 5-minute plan an OLTP repeat); the load curve, last, takes what
	// is left of the budget, so they shorten it, and none ends past it.
	repeats, until := max(plan.PagePairs/2, 1), o.Start.Add(o.Budget)
	fmt.Fprintf(w, "%d pairs of %v cells on CPU %d, the database image in 4 KiB then 2 MiB pages, each transaction run cold then hot (the same inputs again), a random chain in memory mapped alike and one in the caches timed before and after; up to %d off-speed cells repeated within the budget\n",
		plan.PagePairs, plan.PageCell, cpu, repeats)
	rec, err := record.Start(ctx, o.Store, calib.RunFit, "numalab eval (page-size points)", struct {
		DB        string        `json:"db"`
		CPU       int           `json:"cpu"`
		Pairs     int           `json:"pairs"`
		Cell      time.Duration `json:"cell_ns"`
		Repeats   int           `json:"repeats"`
		ProbeRun  int64         `json:"probe_run"`
		Tolerance float64       `json:"sentinel_tolerance"`
	}{db, cpu, plan.PagePairs, plan.PageCell, repeats, probeID, SentinelTolerance}, w, stored)
	if err != nil {
		return err
	}
	f, err := measurePages(ctx, db, cpu, plan.PagePairs, repeats, plan.PageCell, p.GHz, cacheChainBytes(o.Machine), until, mem)
	headline := ""
	if err == nil {
		if aerr := rec.Add(calib.KindMeasuredFit.Of(*f)); aerr != nil {
			err = aerr
		}
		headline = f.Headline()
	}
	return errors.Join(err, rec.Finish(err, headline))
}
