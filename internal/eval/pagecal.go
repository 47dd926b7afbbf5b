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
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/mattn/go-sqlite3"
	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/sentinel"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// Page-size points: the tpcc-ro database image in memory eval maps itself,
// once advised MADV_NOHUGEPAGE (4 KiB pages) and once MADV_HUGEPAGE (2 MiB
// pages), read in place by SQLite (sqlite3_deserialize). The same
// transactions on the same data then see the two latencies the memory probe
// measured with its fully random chain in the same two kinds of memory:
// two latency points on any machine, one node included.

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

// pageConn is one connection over one image, with its statements.
type pageConn struct {
	c   *sqlite3.SQLiteConn
	st  []driver.Stmt
	rng *rand.Rand
	row []driver.Value
}

func openPageConn(im *image) (*pageConn, error) {
	dc, err := (&sqlite3.SQLiteDriver{}).Open(":memory:")
	if err != nil {
		return nil, fmt.Errorf("opening an in-memory SQLite connection: %w", err)
	}
	c := dc.(*sqlite3.SQLiteConn)
	p := &pageConn{c: c, rng: rand.New(rand.NewPCG(1, 2)), row: make([]driver.Value, 8)}
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

// cell runs transactions for d on the calling thread, pinned to cpu, and
// returns their rate.
func (p *pageConn) cell(ctx context.Context, cpu int, d time.Duration) (float64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return 0, fmt.Errorf("pinning the page-size cell to CPU %d: %w", cpu, err)
	}
	start := time.Now()
	n := 0
	for time.Since(start) < d && ctx.Err() == nil {
		if err := p.next(); err != nil {
			return 0, fmt.Errorf("a tpcc-ro transaction on the image: %w", err)
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// PagePoints is what the page-size step measured and fitted.
type PagePoints struct {
	LatencyNS [2]float64 // 4 KiB, 2 MiB: the probe's fully random chain in each
	HugeShare [2]float64 // of each image, as the kernel backed it
	// TPS are the cells' rates, pair by pair: [pair][0] 4 KiB, [pair][1] 2 MiB.
	TPS [][2]float64
	// Kept says which pairs the fit used: the sentinel held around them.
	Kept     []bool
	Sentinel *sentinel.Series
	Verdict  sentinel.Verdict
	GHz      float64
	Fit      *model.Fit
	FitErr   error
	// HeldOut is the error of the fit to the first half of the kept pairs
	// predicting the medians of the second half, at each latency.
	HeldOut [2]float64
	HeldErr error
}

// measurePages runs pairs of cells, 4 KiB then 2 MiB image, each cell
// bracketed by the sentinel, on cpu; then fits A and M to the cells the
// sentinel kept.
func measurePages(ctx context.Context, dbPath string, cpu, pairs int, cellDur time.Duration, ns4k, ns2m, ghz float64) (*PagePoints, error) {
	db, err := os.ReadFile(dbPath)
	if err != nil {
		return nil, fmt.Errorf("reading the tpcc-ro database for the page-size points: %w", err)
	}
	pp := &PagePoints{LatencyNS: [2]float64{ns4k, ns2m}, GHz: ghz, Sentinel: &sentinel.Series{}}
	var conns [2]*pageConn
	for i, huge := range []bool{false, true} {
		im, err := newImage(db, huge)
		if err != nil {
			return nil, err
		}
		defer im.free()
		pp.HugeShare[i] = im.HugeShare
		if conns[i], err = openPageConn(im); err != nil {
			return nil, err
		}
		defer conns[i].close()
		if _, err := conns[i].cell(ctx, cpu, cellDur/4); err != nil { // warm
			return nil, err
		}
	}
	pp.Sentinel.Take("start")
	for k := 0; k < pairs && ctx.Err() == nil; k++ {
		var pair [2]float64
		for i := range conns {
			if pair[i], err = conns[i].cell(ctx, cpu, cellDur); err != nil {
				return nil, err
			}
			pp.Sentinel.Take(fmt.Sprintf("pair %d, %s", k+1, []string{"4 KiB", "2 MiB"}[i]))
		}
		pp.TPS = append(pp.TPS, pair)
	}
	pp.Verdict = pp.Sentinel.Check(SentinelTolerance)
	var pts []model.Point
	for k, pair := range pp.TPS {
		keep := !pp.Verdict.Between(2*k, 2*k+2)
		pp.Kept = append(pp.Kept, keep)
		if keep {
			pts = append(pts, model.Point{LatencyNS: ns4k, GHz: ghz, TPSPerCore: pair[0]}, model.Point{LatencyNS: ns2m, GHz: ghz, TPSPerCore: pair[1]})
		}
	}
	f, err := model.FitPoints(pts)
	if err != nil {
		pp.FitErr = err
		return pp, nil
	}
	pp.Fit = &f
	half := len(pts) / 4 * 2
	if half < 2 {
		pp.HeldErr = errors.New("fewer than two kept pairs on each side")
		return pp, nil
	}
	first, err := model.FitPoints(pts[:half])
	if err != nil {
		pp.HeldErr = err
		return pp, nil
	}
	for i := range 2 {
		var v []float64
		for j := half + i; j < len(pts); j += 2 {
			v = append(v, pts[j].TPSPerCore)
		}
		m := stats.Median(v)
		pred := ghz * 1e9 / first.Cycles(pp.LatencyNS[i], ghz)
		pp.HeldOut[i] = (pred - m) / m
	}
	return pp, nil
}

// pageStepTitle is the page-size step's heading.
const pageStepTitle = "page-size points for the model"

// pagePoints runs the page-size step: the tpcc-ro database at db, on the
// machine's first CPU, at the latencies the memory probe (run probeID in
// the store) measured with its fully random chain in 4 KiB and 2 MiB pages.
// It stores nothing: eval's summary shows it and fits the decision to it.
func pagePoints(ctx context.Context, w io.Writer, o Options, probeID int64, db string, plan Plan) (*PagePoints, error) {
	if probeID == 0 {
		return nil, fmt.Errorf("no memory probe run: the page-size points need its latencies: %w", errNoRoom)
	}
	st, err := store.OpenToRead(o.Store)
	if err != nil {
		return nil, err
	}
	run, err := st.Get(probeID)
	st.Close()
	if err != nil {
		return nil, err
	}
	p, err := model.ReadProbe(run)
	if err != nil {
		return nil, err
	}
	s := p.Summary
	if s == nil || !(s.DRAMNS4K > 0 && s.DRAMNS2M > 0) || !(p.GHz > 0) {
		return nil, fmt.Errorf("memory probe run %d measured no fully random chain in both 4 KiB and 2 MiB pages, or no clock: %w", probeID, errNoRoom)
	}
	cpu := 0
	if len(o.Machine.CPUs) > 0 {
		cpu = o.Machine.CPUs[0].ID
	}
	fmt.Fprintf(w, "%d pairs of %v cells on CPU %d, the database image in 4 KiB then 2 MiB pages (the probe's chain: %.1f and %.1f ns)\n",
		plan.PagePairs, plan.PageCell, cpu, s.DRAMNS4K, s.DRAMNS2M)
	return measurePages(ctx, db, cpu, plan.PagePairs, plan.PageCell, s.DRAMNS4K, s.DRAMNS2M, p.GHz)
}

// calibrate is md with A and M from the page-size points, when they fitted;
// md itself otherwise.
func (pp *PagePoints) calibrate(md *model.Calibration) *model.Calibration {
	if pp == nil || pp.Fit == nil {
		return md
	}
	var pts []model.Point
	var cells []string
	for k, pair := range pp.TPS {
		if !pp.Kept[k] {
			continue
		}
		for i, kind := range []string{"4 KiB", "2 MiB"} {
			pts = append(pts, model.Point{LatencyNS: pp.LatencyNS[i], GHz: pp.GHz, TPSPerCore: pair[i]})
			cells = append(cells, fmt.Sprintf("page-size pair %d, %s pages", k+1, kind))
		}
	}
	method := fmt.Sprintf("fitted to eval's page-size points: tpcc-ro on the database image in 4 KiB pages (%.1f ns, the probe's chain in them) and 2 MiB pages (%.1f ns), %d cells the sentinel kept, interleaved pair by pair; A and M both fitted",
		pp.LatencyNS[0], pp.LatencyNS[1], len(pts))
	return md.WithFit(*pp.Fit, pts, cells, method)
}

// lines are the page-size step's figures for eval's summary.
func (pp *PagePoints) lines() []string {
	if pp == nil {
		return []string{"page-size points: none (the step did not run or failed), so A and M rest on the OLTP run alone"}
	}
	out := []string{fmt.Sprintf("page-size points: the image backed %.0f%% and %.0f%% by huge pages (4 KiB and 2 MiB images); latencies %.1f and %.1f ns",
		100*pp.HugeShare[0], 100*pp.HugeShare[1], pp.LatencyNS[0], pp.LatencyNS[1])}
	kept := 0
	var pairs []string
	for k, p := range pp.TPS {
		mark := ""
		if pp.Kept[k] {
			kept++
		} else {
			mark = " (left out: the sentinel was off)"
		}
		pairs = append(pairs, fmt.Sprintf("%.0f/%.0f%s", p[0], p[1], mark))
	}
	out = append(out, fmt.Sprintf("  tps 4 KiB/2 MiB by pair: %s; %d of %d pairs kept", strings.Join(pairs, ", "), kept, len(pp.TPS)))
	switch {
	case pp.Fit != nil:
		iv := func(p *model.Interval) string {
			if p == nil {
				return "no interval"
			}
			return "95% interval " + p.String()
		}
		out = append(out, fmt.Sprintf("  fit: A = %.0f core cycles (%s), M = %.0f memory waits (%s), R² %.3f over %d cells",
			pp.Fit.A, iv(pp.Fit.AInterval), pp.Fit.M, iv(pp.Fit.MInterval), pp.Fit.R2, pp.Fit.Points))
	default:
		out = append(out, fmt.Sprintf("  no fit: %v", pp.FitErr))
	}
	if pp.HeldErr != nil {
		out = append(out, fmt.Sprintf("  no held-out check: %v", pp.HeldErr))
	} else if pp.Fit != nil {
		out = append(out, fmt.Sprintf("  held-out: the fit to the first half of the kept pairs predicts the second half's medians with error %+.1f%% (4 KiB) and %+.1f%% (2 MiB); both sides ran with the other CPU as idle as in the fit, no neighbour",
			100*pp.HeldOut[0], 100*pp.HeldOut[1]))
	}
	return append(out, "  "+pp.Verdict.String(pp.Sentinel))
}
