package memlat

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// likwidTests are likwid-bench's kernels that do what the probe's do with
// the same register width: loads; non-temporal stores; copy and STREAM's
// triad (likwid's "stream", a = b·s + c) with non-temporal stores.
var likwidTests = map[string]string{OpRead: "load", OpWrite: "store_mem", OpCopy: "copy_mem", OpTriad: "stream_mem"}

// likwidWidth is likwid-bench's suffix for a kernel's register width.
var likwidWidth = map[string]string{"AVX-512": "_avx512", "AVX2": "_avx", "SSE2": "_sse"}

// BenchmarkBandwidthAgainstLikwid sets the probe's bandwidth beside
// likwid-bench's (Debian's likwid) on one thread and on all of them, per
// operation, likwid and numalab alternating which goes first each round.
// Both run the same way: numalab as the probe measures a point (bwPoint:
// windows of the full probe's length of each thread's CPU time, up to
// four until two are clean, the highest clean one), likwid-bench as many
// runs by the same rule (likwidPoint), each as long as a window, with the
// same register width over the same bytes (the probe's arrays, all
// threads together) on the same hardware threads, both in 4 KiB pages
// (the probe maps 2 MiB ones where it can), both on their threads' CPU
// time (runLikwid). It prints each round, the best of each tool's rounds
// over each other (best/best, the metric) and the median of the rounds'
// ratios. One round per b.N:
//
//	go test ./internal/memlat -run '^$' -bench BandwidthAgainstLikwid -benchtime 3x -v
func BenchmarkBandwidthAgainstLikwid(b *testing.B) {
	bin, err := exec.LookPath("likwid-bench")
	if err != nil {
		b.Skip("likwid-bench is not installed (Debian: apt-get install likwid): nothing to compare with")
	}
	k := widest()
	width, ok := likwidWidth[k.Name]
	if !ok {
		b.Skipf("likwid-bench has no kernels of the probe's width here (%s)", k.Label())
	}
	if _, _, err := threadUsage(os.Getpid()); err != nil {
		b.Skipf("no per-thread CPU time to put likwid-bench on the probe's basis: %v", err)
	}
	t := hostTopology(b)
	cpus := streamCPUs(t)
	// likwid-bench's arrays come from malloc: 4 KiB pages unless THP is
	// "always", and then so are these.
	rb, err := mapBuffer("/", bwBytes(t, len(cpus)), Pages4K, -1)
	if err != nil {
		b.Fatal(err)
	}
	defer rb.free()
	window := time.Duration(DefaultConfig(false).BWWindowMS) * time.Millisecond
	for _, op := range bwOps {
		test := likwidTests[op] + width
		b.Run(op, func(b *testing.B) {
			for _, n := range []int{1, len(cpus)} {
				bytes := workingSet(k, op, rb.mem, n)
				var ours, theirs, ratios []float64
				for r := range b.N {
					var us BWPoint
					var them likwidResult
					measure := []func(){
						func() { us = numalabPoint(b, k, op, cpus[:n], rb.mem, window) },
						func() {
							est := us.GBps // runs a window long at the probe's rate, this round's or the last
							if est == 0 {
								est = ours[len(ours)-1]
							}
							them = likwidPoint(b, bin, test, n, bytes, window, est)
						},
					}
					if r%2 == 1 {
						slices.Reverse(measure)
					}
					for _, m := range measure {
						m()
					}
					ours, theirs, ratios = append(ours, us.GBps), append(theirs, them.GBps), append(ratios, us.GBps/them.GBps)
					b.Logf("%s, %d threads, round %d: numalab %s GB/s (%d windows), "+
						"likwid-bench %s %s GB/s (%d runs; %.1f on the wall clock): %.2f",
						op, n, r+1, starred(us.GBps, us.Preempted), us.Windows,
						test, starred(them.GBps, them.Preempted), them.Runs, them.Wall, us.GBps/them.GBps)
				}
				best := slices.Max(ours) / slices.Max(theirs)
				b.Logf("%s, %d threads: numalab/likwid best/best %.2f, median of %d rounds' ratios %.2f",
					op, n, best, len(ratios), median(ratios))
				b.ReportMetric(best, fmt.Sprintf("numalab/likwid-%dthr", n))
			}
		})
	}
}

// workingSet is the bytes n probe threads stream through with op over
// mem: their arrays, all threads together, the size likwid-bench is given.
func workingSet(k kernel, op string, mem []byte, n int) int64 {
	regionOf := split(mem, n)
	return int64(n * arrays(op) * newStreamWork(k, op, regionOf(0)).length)
}

func numalabPoint(b *testing.B, k kernel, op string, cpus []int, mem []byte, window time.Duration) BWPoint {
	pt, err := bwPoint(context.Background(), k, op, cpus, mem, window)
	if err != nil {
		b.Fatal(err)
	}
	return pt
}

// starred is a figure with a * when its threads were preempted in it.
func starred(gbps float64, preempted int) string {
	if preempted > 0 {
		return fmt.Sprintf("%.1f*", gbps)
	}
	return fmt.Sprintf("%.1f", gbps)
}

// likwidResult is one likwid-bench run, or the run a point kept.
type likwidResult struct {
	GBps float64 // 10^9 B/s on the worker threads' CPU time
	Wall float64 // likwid-bench's own figure (MByte/s), timed on the wall clock, in GB/s
	// Preempted is the worker threads' involuntary context switches.
	Preempted int
	CPU       time.Duration // each worker thread's CPU time, on average
	Runs      int           // in a point: runs made
}

// likwidPoint runs likwid-bench's test as bwPoint measures a window: up
// to bwTries runs until bwClean had no worker thread preempted, keeping
// the highest clean one (with none clean, the highest). Each run is as
// long as a window: its iterations are sized from gbps (the probe's
// rate), then from the run before.
func likwidPoint(b *testing.B, bin, test string, threads int, bytes int64, window time.Duration,
	gbps float64) likwidResult {
	var best likwidResult
	clean := 0
	for runs := 1; runs <= bwTries && clean < bwClean; runs++ {
		iters := max(1, int(math.Ceil(window.Seconds()*gbps*1e9/float64(bytes))))
		r, err := runLikwid(bin, test, threads, bytes, iters)
		if err != nil {
			b.Fatal(err)
		}
		gbps = r.GBps
		switch {
		case r.Preempted == 0:
			clean++
			if clean == 1 || r.GBps > best.GBps {
				best = r
			}
		case clean == 0 && r.GBps > best.GBps:
			best = r
		}
		best.Runs = runs
	}
	return best
}

var (
	likwidRate   = regexp.MustCompile(`MByte/s:\s+([0-9.]+)`)
	likwidVolume = regexp.MustCompile(`Data volume \(Byte\):\s+([0-9]+)`)
)

// runLikwid runs likwid-bench's test once, iters iterations over bytes
// (all threads together) on the first threads hardware threads of socket
// 0. likwid-bench times its loop on the wall clock, which on a shared
// machine counts the time its threads waited for a CPU (here it read 3–8
// GB/s on the wall clock while its threads moved 15–37), where the probe
// counts its threads' CPU time. To put it on the probe's basis, the
// process is left a zombie when it ends (waitid, WNOWAIT) and its main
// thread's CPU time and involuntary switches are read (threadUsage): that
// thread maps, fills and frees the arrays and runs no kernel. The rest of
// the process's (wait4's rusage) is its worker threads', which ran the
// kernel between likwid's spin barriers; the rate is the bytes over their
// CPU time per thread.
func runLikwid(bin, test string, threads int, bytes int64, iters int) (likwidResult, error) {
	var out strings.Builder
	cmd := exec.Command(bin, "-t", test, "-i", strconv.Itoa(iters), "-w", fmt.Sprintf("S0:%dB:%d", bytes, threads))
	cmd.Stdout, cmd.Stderr = &out, &out
	fail := func(err error) (likwidResult, error) {
		return likwidResult{}, fmt.Errorf("running %s: %w\n%s", strings.Join(cmd.Args, " "), err, out.String())
	}
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	pid := cmd.Process.Pid
	var si unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &si, unix.WEXITED|unix.WNOWAIT, nil)
	for err == unix.EINTR {
		err = unix.Waitid(unix.P_PID, pid, &si, unix.WEXITED|unix.WNOWAIT, nil)
	}
	var mainCPU time.Duration
	var mainSwitches int
	if err == nil {
		mainCPU, mainSwitches, err = threadUsage(pid)
	}
	if werr := cmd.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		return fail(err)
	}
	v, w := likwidVolume.FindStringSubmatch(out.String()), likwidRate.FindStringSubmatch(out.String())
	if v == nil || w == nil {
		return fail(errors.New("no data volume or MByte/s in its output"))
	}
	volume, _ := strconv.ParseFloat(v[1], 64)
	wall, _ := strconv.ParseFloat(w[1], 64)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	total := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	perThread := (total - mainCPU) / time.Duration(threads)
	if perThread <= 0 {
		return fail(fmt.Errorf("its worker threads took no CPU time (process %v, main thread %v)",
			total, mainCPU))
	}
	return likwidResult{GBps: volume / float64(perThread.Nanoseconds()), Wall: wall / 1000, // MByte/s are 10^6 B/s
		Preempted: int(ru.Nivcsw) - mainSwitches, CPU: perThread}, nil
}

// threadUsage reads the CPU time and involuntary context switches of
// process pid's main thread (of a zombie too) from /proc.
func threadUsage(pid int) (cpu time.Duration, switches int, err error) {
	dir := fmt.Sprintf("/proc/%d/task/%d/", pid, pid)
	sched, err := os.ReadFile(dir + "schedstat") // ns on the CPU, ns waiting, timeslices
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(sched))
	if len(f) == 0 {
		return 0, 0, fmt.Errorf("%sschedstat is empty", dir)
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("%sschedstat: %w", dir, err)
	}
	status, err := os.ReadFile(dir + "status")
	if err != nil {
		return 0, 0, err
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "nonvoluntary_ctxt_switches:"); ok {
			switches, err = strconv.Atoi(strings.TrimSpace(v))
			return time.Duration(ns), switches, err
		}
	}
	return 0, 0, fmt.Errorf("%sstatus has no nonvoluntary_ctxt_switches", dir)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
