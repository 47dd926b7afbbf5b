package result

import "time"

// IOProbe is what `numalab probe io` measured: the storage under one
// directory as a database sees it, on a test file numalab created, filled
// with incompressible data and removed afterwards.
type IOProbe struct {
	Dir        string `json:"dir"`         // the directory probed, as given
	File       string `json:"file"`        // the test file's path (removed after the run)
	FSType     string `json:"fs_type"`     // filesystem of Dir, e.g. "ext4", "tmpfs"; "0x…" when unknown
	FileSize   int64  `json:"file_size"`   // bytes
	FreeBefore int64  `json:"free_before"` // bytes available to numalab in Dir before the file was made; -1 = not reported
	// Direct is true when every pattern ran with O_DIRECT (the page cache
	// bypassed). When false, Buffered says why, e.g.
	// "buffered: O_DIRECT refused by ramfs".
	Direct   bool   `json:"direct"`
	Buffered string `json:"buffered,omitempty"`
	// Engine is how the queue depth is made: "psync-threads" means QD
	// goroutines, each locked to its own OS thread, each with one pread or
	// pwrite in flight (as fio's ioengine=psync with numjobs=QD).
	Engine string `json:"engine"`

	Fill     IOFill        `json:"fill"`        // writing the test file
	Duration time.Duration `json:"duration_ns"` // planned measured window per pattern
	Seed     uint64        `json:"seed"`        // seeds the data and every worker's offsets

	// Span is the stretch of the file the data is spread over when it is
	// larger than FileSize (--span): FileSize bytes in 1 MiB chunks spaced
	// evenly over Span, the rest left as holes where Sparse; 0: none.
	Span   int64 `json:"span,omitempty"`
	Sparse bool  `json:"sparse,omitempty"`

	Patterns []IOPattern `json:"patterns"` // in the order run
	Ratio    *IORatio    `json:"ratio,omitempty"`
	// Ratios is the random/sequential page-rate ratio at each queue
	// depth (one sequence with QD reads in flight) and for each count of
	// concurrent readers (each its own sequence), against random reads
	// at the same depth.
	Ratios []IORatioAt `json:"ratios,omitempty"`

	Started     time.Time `json:"started"`
	Interrupted bool      `json:"interrupted,omitempty"` // cut short by Ctrl-C: Patterns holds what finished
}

// IOFill is the creation of the test file: writing it sequentially and the
// fsync that follows.
type IOFill struct {
	Bytes   int64         `json:"bytes"`
	Elapsed time.Duration `json:"elapsed_ns"` // write and fsync together
	MBps    float64       `json:"mb_per_s"`   // Bytes / Elapsed in 10⁶ bytes per second
}

// IOPattern is one measured access pattern. Figures count only operations
// that completed inside the measured window.
type IOPattern struct {
	Name      string `json:"name"`       // "randread", "seqread" or "randrw"
	BlockSize int    `json:"block_size"` // bytes per operation
	QD        int    `json:"qd"`         // operations kept in flight
	// Readers, for sequential reads, is how many sequences are read at
	// once, each by its own thread from its own stretch of the file (0:
	// one sequence, QD reads of it in flight).
	Readers  int           `json:"readers,omitempty"`
	ReadPct  int           `json:"read_pct"`    // share of reads: 100, or 70 for the mix
	Direct   bool          `json:"direct"`      // O_DIRECT; false = buffered (see IOProbe.Buffered)
	Measured time.Duration `json:"measured_ns"` // the window actually measured
	Read     IOStats       `json:"read"`
	Write    *IOStats      `json:"write,omitempty"` // the mix only
}

// IOStats summarises the operations of one direction. Latency is from the
// system call's start to its return, in microseconds; mean and max are
// exact, percentiles within 0.05% (nearest rank over every operation, read
// from a histogram).
type IOStats struct {
	Ops    int64   `json:"ops"`
	Bytes  int64   `json:"bytes"`
	IOPS   float64 `json:"iops"`     // operations per second of Measured
	MBps   float64 `json:"mb_per_s"` // 10⁶ bytes per second of Measured
	MeanUs float64 `json:"mean_us"`
	P50Us  float64 `json:"p50_us"`
	P99Us  float64 `json:"p99_us"`
	MaxUs  float64 `json:"max_us"`
}

// IORatio compares random and sequential page rates, as an optimizer's IO
// cost model does: how many sequential 8 KiB pages can be read in the time
// of one random 8 KiB read.
type IORatio struct {
	PageSize       int     `json:"page_size"`         // 8192
	RandomIOPS     float64 `json:"random_iops"`       // 8 KiB random reads per second at QD1
	SeqBlockSize   int     `json:"seq_block_size"`    // the sequential read size the page rate comes from
	SeqPagesPerSec float64 `json:"seq_pages_per_s"`   // sequential bytes/s ÷ PageSize
	Ratio          float64 `json:"ratio"`             // SeqPagesPerSec ÷ RandomIOPS
	ModelName      string  `json:"model_name"`        // where the model's figures come from
	ModelRandom    float64 `json:"model_random_iops"` // 320
	ModelSeqPages  float64 `json:"model_seq_pages_per_s"`
	ModelRatio     float64 `json:"model_ratio"` // 1350/320 ≈ 4.2
}

// IORatioAt is the random/sequential page-rate ratio at one queue depth:
// sequential 8 KiB pages per second (from the largest sequential reads,
// one sequence with QD in flight, or Readers sequences at once) over 8
// KiB random reads per second at that depth.
type IORatioAt struct {
	QD             int     `json:"qd"`
	Readers        int     `json:"readers,omitempty"`
	RandomIOPS     float64 `json:"random_iops"`
	SeqPagesPerSec float64 `json:"seq_pages_per_s"`
	Ratio          float64 `json:"ratio"`
}
