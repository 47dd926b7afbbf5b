package iobench

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/units"
)

var (
	fioRun      = flag.Bool("fio", false, "compare with fio on the host's storage (about 3 minutes)")
	fioDir      = flag.String("fio.dir", os.TempDir(), "directory for the fio comparison's test file")
	fioSize     = flag.Int64("fio.size", 1<<30, "test file bytes for the fio comparison")
	fioDuration = flag.Duration("fio.duration", 2*time.Second, "window of each run in the fio comparison")
	fioRounds   = flag.Int("fio.rounds", 7, "rounds of (numalab, fio) per pattern; medians are compared")
	fioOnly     = flag.String("fio.only", "", "compare only patterns whose name contains this, e.g. \"sequential\"; "+
		"a whole name, e.g. \"random read 8 KiB QD1\", picks that one")
)

// fioSide is one direction of one fio job in its JSON output.
type fioSide struct {
	IOPS  float64 `json:"iops"`
	BW    float64 `json:"bw_bytes"`
	LatNs struct {
		Mean float64 `json:"mean"`
	} `json:"lat_ns"`
}

type fioOutput struct {
	Jobs []struct {
		Read  fioSide `json:"read"`
		Write fioSide `json:"write"`
	} `json:"jobs"`
}

// fioArgs is the fio command line that runs spec on file as numalab does:
// psync (one pread/pwrite per thread in flight), QD threads, O_DIRECT,
// uniform random offsets with repeats (norandommap).
func fioArgs(file string, size int64, s Spec, d time.Duration) []string {
	rw := map[string]string{RandRead: "randread", SeqRead: "read", RandRW: "randrw"}[s.Name]
	args := []string{
		"--name=numalab", "--filename=" + file, "--size=" + strconv.FormatInt(size, 10),
		"--direct=1", "--ioengine=psync", "--rw=" + rw, "--bs=" + strconv.Itoa(s.BlockSize),
		"--numjobs=" + strconv.Itoa(s.QD), "--thread", "--group_reporting",
		"--time_based", "--runtime=" + strconv.FormatFloat(d.Seconds(), 'f', -1, 64),
		"--norandommap", "--randrepeat=0", "--output-format=json",
	}
	if s.Name == RandRW {
		args = append(args, "--rwmixread="+strconv.Itoa(s.ReadPct))
	}
	return args
}

func runFio(ctx context.Context, args []string) (fioSide, fioSide, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "fio", args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return fioSide{}, fioSide{}, fmt.Errorf("fio %s: %w: %s", strings.Join(args, " "), err, errb.String())
	}
	var o fioOutput
	if err := json.Unmarshal(out.Bytes(), &o); err != nil || len(o.Jobs) != 1 {
		return fioSide{}, fioSide{}, fmt.Errorf("reading fio's JSON (%d jobs): %v", len(o.Jobs), err)
	}
	return o.Jobs[0].Read, o.Jobs[0].Write, nil
}

// TestFioAgreement runs numalab and fio interleaved on the same file and
// patterns and wants the medians of IOPS (and so MB/s) within 10%.
//
//	go test ./internal/iobench -run TestFio -fio -fio.dir /var/tmp -v
func TestFioAgreement(t *testing.T) {
	if !*fioRun {
		t.Skip("pass -fio to compare with fio on this host's storage (about 3 minutes)")
	}
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio is not installed (apt-get install fio)")
	}
	ctx := context.Background()
	f, err := Create(ctx, *fioDir, *fioSize, DefaultSize, 0, false, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !f.Direct() {
		t.Skipf("O_DIRECT refused in %s: %s; fio --direct=1 would fail too", *fioDir, f.buffered)
	}
	specs := []Spec{
		{Name: RandRead, BlockSize: PageSize, QD: 1},
		{Name: RandRead, BlockSize: PageSize, QD: 16},
		{Name: RandRead, BlockSize: PageSize, QD: 64},
		{Name: SeqRead, BlockSize: 64 << 10, QD: 1},
		{Name: SeqRead, BlockSize: 1 << 20, QD: 1},
		{Name: RandRW, BlockSize: PageSize, QD: 16, ReadPct: 70},
	}
	t.Logf("file %s, %s, %s windows, %d rounds, fio %s",
		f.Path(), units.Bytes(f.Size()), *fioDuration, *fioRounds, fioVersion())
	t.Logf("%-36s %-6s %12s %12s %8s %8s %10s %10s",
		"pattern", "side", "numalab", "fio", "ratio", "paired", "nl mean µs", "fio mean µs")
	t.Logf("numalab and fio are medians of IOPS over the rounds; ratio = numalab/fio of the medians (must be " +
		"within 10%%); paired = median of the per-round ratios")
	for i, s := range specs {
		if !selected(s, specs, *fioOnly) {
			continue
		}
		args := fioArgs(f.Path(), f.Size(), s, *fioDuration)
		t.Logf("fio %s", strings.Join(args, " "))
		var nlR, nlW, fR, fW, nlLat, fLat, nlWLat, fWLat []float64
		for round := 0; round < *fioRounds; round++ {
			// Alternate who goes first, so that drift on a shared disk
			// does not always favour the same side.
			var (
				p    result.IOPattern
				r, w fioSide
				err  error
			)
			nl := func() {
				if err == nil {
					p, err = f.Measure(ctx, s, *fioDuration, uint64(100*round+i))
				}
			}
			fio := func() {
				if err == nil {
					r, w, err = runFio(ctx, args)
				}
			}
			if round%2 == 0 {
				nl()
				fio()
			} else {
				fio()
				nl()
			}
			if err != nil {
				t.Fatal(err)
			}
			nlR, fR = append(nlR, p.Read.IOPS), append(fR, r.IOPS)
			nlLat, fLat = append(nlLat, p.Read.MeanUs), append(fLat, r.LatNs.Mean/1e3)
			if p.Write != nil {
				nlW, fW = append(nlW, p.Write.IOPS), append(fW, w.IOPS)
				nlWLat, fWLat = append(nlWLat, p.Write.MeanUs), append(fWLat, w.LatNs.Mean/1e3)
			}
			t.Logf("  round %d: numalab read %.0f IOPS, fio read %.0f IOPS (%.3f)",
				round, p.Read.IOPS, r.IOPS, p.Read.IOPS/r.IOPS)
		}
		check := func(side string, nl, fio, nlLat, fLat []float64) {
			a, b := stats.Median(nl), stats.Median(fio)
			ratio := a / b
			var paired []float64
			for k := range nl {
				paired = append(paired, nl[k]/fio[k])
			}
			unit := fmt.Sprintf("%.0f IOPS", a)
			if s.Name == SeqRead {
				unit = fmt.Sprintf("%.0f MB/s", a*float64(s.BlockSize)/1e6)
			}
			t.Logf("%-36s %-6s %12.0f %12.0f %8.3f %8.3f %10.1f %10.1f  (numalab %s)",
				s, side, a, b, ratio, stats.Median(paired), stats.Median(nlLat), stats.Median(fLat), unit)
			if math.Abs(ratio-1) > 0.10 {
				t.Errorf("%s %s: numalab %.0f IOPS vs fio %.0f: off by %.1f%%, want within 10%%", s, side, a, b, 100*(ratio-1))
			}
		}
		check("read", nlR, fR, nlLat, fLat)
		if s.Name == RandRW {
			check("write", nlW, fW, nlWLat, fWLat)
		}
	}
}

// selected reports whether the comparison runs s: the pattern named exactly
// only when there is one, else every pattern whose name contains only.
func selected(s Spec, all []Spec, only string) bool {
	for _, o := range all {
		if o.String() == only {
			return s.String() == only
		}
	}
	return strings.Contains(s.String(), only)
}

func fioVersion() string {
	out, err := exec.Command("fio", "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}
