// Package iobench measures storage as a database sees it: 8 KiB random
// reads at queue depths 1 to 64 (IOPS, mean, p50 and p99 latency),
// sequential reads at 64 KiB, 256 KiB and 1 MiB (MB/s), of 1 MiB at each
// queue depth and by concurrent readers of their own sequences, and a
// 70/30 random read/write mix, on a test file it creates, fills with
// incompressible data and removes, and it sets the random-to-sequential
// page-rate ratio, at queue depth 1 and at each depth, beside a classic
// optimizer IO cost model's. With a span the file's data is spread in
// 1 MiB chunks over a longer file, sparse where the filesystem keeps holes,
// so that random reads range over the span.
//
// Queue depth is made with threads, not an asynchronous interface: QD
// goroutines, each locked to its own OS thread with its own aligned buffer,
// RNG and latency histogram (stats.Histogram: mean and max exact, p50 and
// p99 within 0.05%, merged once the window ends), each with one pread or
// pwrite in flight (what fio calls
// ioengine=psync with numjobs=QD). The calls are raw system calls, so a
// thread keeps its Go P while it waits for the disk, and while a pattern
// runs GOMAXPROCS is raised to QD+1 so that every thread has one. Through
// the runtime's own pread a thread hands its P away after 20 µs and must
// get one back on return: QD16 on 2 CPUs read a third fewer IOPS than
// fio's threads before the Ps were raised, and QD1 still 9-24% fewer
// before the calls were raw. Every operation uses O_DIRECT so the page
// cache is not what gets measured. Where the filesystem refuses O_DIRECT
// (EINVAL on open), or when asked, it falls back to buffered I/O, evicts
// the file from the page cache (posix_fadvise DONTNEED) before each
// pattern, and labels the result, e.g. "buffered: O_DIRECT refused by
// fuse". On tmpfs and ramfs the file is memory whatever the kernel accepts:
// the result is labelled "page cache / RAM (tmpfs: O_DIRECT not
// supported)", never O_DIRECT storage.
//
// What it refuses: a directory that does not exist or is not a directory,
// a read-only filesystem, and a test file that would not leave 5% of the
// filesystem (at least 4 MiB, at most 1 GiB) free. It only ever removes the
// file it created (numalab-iobench-<pid>.dat, made with O_EXCL), on success,
// on error and on Ctrl-C; a process killed with SIGKILL leaves it behind.
//
// # Accuracy against fio
//
// fio_test.go runs the same patterns on the same file with numalab and with
// fio (the Debian package), interleaved (numalab then fio, then fio then
// numalab, ...), and wants the medians of IOPS within 10%:
//
//	go test ./internal/iobench -run TestFio -fio -fio.dir /var/tmp -v
//
// It skips unless -fio is given (it takes about 3 minutes: 7 rounds of 2 s
// windows per pattern) and when fio is not installed; -fio.rounds,
// -fio.duration, -fio.size and -fio.only change it. It logs every fio
// command line; they are of this form, on the test file numalab made:
//
//	fio --name=numalab --filename=FILE --size=SIZE --direct=1 --ioengine=psync \
//	    --rw=randread --bs=8192 --numjobs=QD --thread --group_reporting \
//	    --time_based --runtime=2 --norandommap --randrepeat=0 --output-format=json
//
// with --rw=read --bs=1048576 --numjobs=1 for sequential reads and
// --rw=randrw --rwmixread=70 for the mix. On a shared virtual disk single
// rounds differ by ±20%; only medians of several rounds are comparable.
package iobench
