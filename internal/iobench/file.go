package iobench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/units"
)

const (
	// align is the alignment of every buffer, offset and length: O_DIRECT
	// wants the logical block size (512 B or 4 KiB); a page covers both.
	align = 4096
	// sizeUnit is what a test file's size is rounded down to, so that every
	// block size up to 1 MiB divides it.
	sizeUnit = 1 << 20
	// MinSize is the smallest test file: a few of the largest blocks.
	MinSize = 4 * sizeUnit
	// DefaultSize is the test file's size when free space allows.
	DefaultSize = 1 << 30
	// fillChunk is the size of one write while filling the test file.
	fillChunk = 1 << 20
)

// ErrNoSpace is wrapped by every error about free space: a size bigger than
// the free space, or a filesystem that filled up while the file was made.
var ErrNoSpace = errors.New("not enough free space")

// ErrReadOnly is wrapped when the directory is on a read-only filesystem.
var ErrReadOnly = errors.New("read-only filesystem")

// space is what statfs says about the filesystem of a directory.
type space struct {
	fsType   string
	avail    int64 // bytes an unprivileged writer may use
	total    int64 // bytes in the filesystem; 0 = not reported (ramfs)
	readOnly bool
}

// known reports whether the filesystem reports its capacity at all; ramfs
// and some pseudo filesystems report 0 blocks.
func (s space) known() bool { return s.total > 0 }

// headroom is the free space a test file must leave: 5% of the
// filesystem, at least 4 MiB and at most 1 GiB, so that the probe does not
// fill the disk a database lives on.
func headroom(total int64) int64 {
	return min(max(total/20, 4<<20), 1<<30)
}

// usable is the largest test file that leaves the headroom free.
func (s space) usable() int64 {
	return max(s.avail-headroom(s.total), 0)
}

// defaultSize picks the test file's size: limit (DefaultSize unless
// --quick asks for less) when there is room, else half of what may be
// used, rounded down to whole MiB; 0 when even MinSize does not fit.
func defaultSize(s space, limit int64) int64 {
	if !s.known() {
		return limit
	}
	size := min(limit, s.usable()/2) / sizeUnit * sizeUnit
	if size < MinSize {
		return 0
	}
	return size
}

// checkSize refuses a size that is too small or does not fit.
func checkSize(dir string, size int64, s space) error {
	if size < MinSize {
		return fmt.Errorf("test file size %s is too small (want at least %s; try --size 256MiB)",
			units.Bytes(size), units.Bytes(MinSize))
	}
	if s.known() && size > s.usable() {
		return fmt.Errorf("test file size %s is bigger than the free space in %s (%s free, of which %s is kept free; "+
			"try --size %s or another --path): %w",
			units.Bytes(size), dir, units.Bytes(s.avail), units.Bytes(headroom(s.total)), suggest(s.usable()), ErrNoSpace)
	}
	return nil
}

// suggest is a --size worth trying when only n bytes may be used: half of
// it, in whole GiB or else whole MiB, so that --size accepts it.
func suggest(n int64) string {
	n /= 2
	switch {
	case n >= 1<<30:
		return units.Bytes(n >> 30 << 30).String()
	case n >= MinSize:
		return units.Bytes(n >> 20 << 20).String()
	}
	return units.Bytes(MinSize).String() + " on a filesystem with more room"
}

func statDir(dir string) (space, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return space{}, fmt.Errorf("checking free space in %s: %w", dir, err)
	}
	bs := int64(st.Bsize)
	if st.Frsize > 0 {
		bs = int64(st.Frsize)
	}
	return space{
		fsType:   fsName(int64(st.Type)),
		avail:    int64(st.Bavail) * bs,
		total:    int64(st.Blocks) * bs,
		readOnly: st.Flags&unix.ST_RDONLY != 0,
	}, nil
}

// fsName names a filesystem from its statfs magic number.
func fsName(magic int64) string {
	switch uint32(magic) {
	case unix.EXT4_SUPER_MAGIC:
		return "ext4" // also ext2 and ext3: they share the magic
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	case unix.RAMFS_MAGIC:
		return "ramfs"
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlayfs"
	case unix.NFS_SUPER_MAGIC:
		return "nfs"
	case unix.FUSE_SUPER_MAGIC:
		return "fuse"
	case unix.V9FS_MAGIC:
		return "9p"
	case unix.F2FS_SUPER_MAGIC:
		return "f2fs"
	case 0x2fc12fc1:
		return "zfs"
	case unix.EROFS_SUPER_MAGIC_V1:
		return "erofs"
	case unix.SQUASHFS_MAGIC:
		return "squashfs"
	}
	return fmt.Sprintf("0x%x", uint32(magic))
}

// File is a test file that this process created and will remove.
type File struct {
	path     string
	size     int64 // bytes of data
	span     int64 // the file's length when its data is spread out; 0: size
	stride   int64 // from one 1 MiB chunk of data to the next (sizeUnit: dense)
	sparse   bool  // the gaps between chunks are holes
	fd       int
	direct   bool
	buffered string // why not O_DIRECT, when !direct
	space    space
	fill     time.Duration
	closed   bool
}

// FileName is the test file's name in its directory for a process id.
func FileName(pid int) string { return fmt.Sprintf("numalab-iobench-%d.dat", pid) }

// Create makes the test file in dir: size bytes (0 picks a size that fits,
// at most limit), allocated, filled with incompressible data from a PRNG
// seeded by seed, and fsynced. It opens the file with O_DIRECT; when the
// filesystem refuses (EINVAL) or lives in memory (tmpfs, ramfs), or when
// buffered is true, it uses buffered I/O and says why in the File. On any error the file, if it was
// made, is removed; after success the caller must Close the File, which
// removes it. Create never touches a file it did not make: the name holds
// the process id and is opened with O_EXCL.
//
// With span above size the data is spread over span bytes: 1 MiB chunks,
// evenly spaced, the file span long with holes between them where the
// filesystem has holes (sparse); reads then cover span while only size
// bytes are written.
func Create(ctx context.Context, dir string, size, limit, span int64, buffered bool, seed uint64,
	progress func(string)) (*File, error) {
	if progress == nil {
		progress = func(string) {}
	}
	size, sp, err := preflight(dir, size, limit, span)
	if err != nil {
		return nil, err
	}
	return create(ctx, dir, size, span, buffered, seed, sp, progress)
}

// Preflight checks, before anything is written, that a test file of size
// bytes (0 = chosen from the free space, at most limit) can be made in
// dir, and returns the size that would be used. Create checks the same.
func Preflight(dir string, size, limit, span int64) (int64, error) {
	size, _, err := preflight(dir, size, limit, span)
	return size, err
}

// sparseFS are the filesystems known to keep a file's unwritten
// stretches as holes: a span over them costs only its data.
var sparseFS = []string{"ext4", "xfs", "btrfs", "tmpfs", "f2fs", "zfs", "nfs", "overlayfs"}

// checkSpan refuses a span that is not whole MiB, is below the data, or
// needs more room than there is: the whole span on a filesystem not
// known to keep holes.
func checkSpan(dir string, size, span int64, s space) error {
	switch {
	case span%sizeUnit != 0:
		return fmt.Errorf("span %s is not a whole number of MiB (try --span 8GiB)", units.Bytes(span))
	case span < size:
		return fmt.Errorf("span %s is below the test file's %s of data (want a span at least as large; try --span %s)",
			units.Bytes(span), units.Bytes(size), units.Bytes(size*8))
	case !slices.Contains(sparseFS, s.fsType) && s.known() && span > s.usable():
		return fmt.Errorf("span %s needs that much free space on %s, which is not known to keep a file's gaps as "+
			"holes (%s free, of which %s is kept free; try a smaller --span or another --path): %w",
			units.Bytes(span), s.fsType, units.Bytes(s.avail), units.Bytes(headroom(s.total)), ErrNoSpace)
	}
	return nil
}

func preflight(dir string, size, limit, span int64) (int64, space, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return 0, space{}, fmt.Errorf(
			"probing storage: directory %q does not exist (--path takes an existing directory on the storage to test)", dir)
	case err != nil:
		return 0, space{}, fmt.Errorf("probing storage: %w", err)
	case !st.IsDir():
		return 0, space{}, fmt.Errorf("probing storage: %q is not a directory (--path takes a directory on the storage "+
			"to test; the test file is made inside it)", dir)
	}
	sp, err := statDir(dir)
	if err != nil {
		return 0, sp, err
	}
	if sp.readOnly {
		return 0, sp, fmt.Errorf("probing storage: %s is on a read-only filesystem (the probe writes a test file; "+
			"give a writable directory with --path): %w", dir, ErrReadOnly)
	}
	if size == 0 {
		if size = defaultSize(sp, limit); size == 0 {
			return 0, sp, fmt.Errorf("probing storage: only %s free in %s, too little for a %s test file with %s kept "+
				"free (free some space or give another --path): %w",
				units.Bytes(sp.avail), dir, units.Bytes(MinSize), units.Bytes(headroom(sp.total)), ErrNoSpace)
		}
	}
	if err := checkSize(dir, size, sp); err != nil {
		return 0, sp, fmt.Errorf("probing storage: %w", err)
	}
	if span > 0 {
		if err := checkSpan(dir, size, span, sp); err != nil {
			return 0, sp, fmt.Errorf("probing storage: %w", err)
		}
	}
	return size, sp, nil
}

// create makes the file once the checks passed; tests call it directly to
// reach the errors the checks would catch earlier.
func create(ctx context.Context, dir string, size, span int64, buffered bool, seed uint64, sp space,
	progress func(string)) (_ *File, err error) {
	path := filepath.Join(dir, FileName(os.Getpid()))
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_EXCL|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	switch {
	case errors.Is(err, unix.EROFS):
		return nil, fmt.Errorf("probing storage: %s is on a read-only filesystem (the probe writes a test file; "+
			"give a writable directory with --path): %w", dir, ErrReadOnly)
	case errors.Is(err, unix.EEXIST):
		return nil, fmt.Errorf("probing storage: %s already exists and was not made by this run (another numalab "+
			"with the same process id, or one that was killed: remove it by hand if no probe is running)", path)
	case errors.Is(err, unix.ENOSPC):
		return nil,
			fmt.Errorf("probing storage: creating %s: the filesystem is full (free some space or give another --path): %w",
				path, ErrNoSpace)
	case err != nil:
		return nil, fmt.Errorf("probing storage: creating test file %s: %w", path, err)
	}
	f := &File{path: path, size: size, stride: sizeUnit, fd: fd, space: sp}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	if span > size {
		// Chunks evenly spaced over the span; the file is span long, with
		// holes between them where the filesystem keeps holes.
		f.span, f.stride, f.sparse = span, span/(size/sizeUnit)/sizeUnit*sizeUnit, slices.Contains(sparseFS, sp.fsType)
		if err := unix.Ftruncate(fd, span); errors.Is(err, unix.EFBIG) {
			most := largestFile(fd, span)
			return nil, fmt.Errorf("probing storage: --span %s (%d bytes) is more than one file may hold on %s in %s: "+
				"the largest it takes is %s (%d bytes; give a smaller --span): %w",
				units.Bytes(span), span, sp.fsType, dir, units.Bytes(most), most, err)
		} else if err != nil {
			return nil, f.writeErr("extending", err)
		}
	} else if err := unix.Fallocate(fd, 0, 0, size); err != nil && !errors.Is(err, unix.EOPNOTSUPP) {
		return nil, f.writeErr("allocating", err)
	}
	switch {
	case buffered:
		f.buffered = "buffered: asked for (--buffered)"
	case sp.fsType == "tmpfs" || sp.fsType == "ramfs":
		// The file is memory: whether or not the kernel accepts
		// O_DIRECT on it, what gets measured is RAM, not storage.
		f.buffered = "page cache / RAM (" + sp.fsType + ": O_DIRECT not supported)"
	default:
		dfd, err := unix.Open(path, unix.O_RDWR|unix.O_DIRECT|unix.O_CLOEXEC, 0)
		switch {
		case errors.Is(err, unix.EINVAL):
			f.buffered = "buffered: O_DIRECT refused by " + sp.fsType
		case err != nil:
			return nil, fmt.Errorf("probing storage: opening %s with O_DIRECT: %w", path, err)
		default:
			unix.Close(f.fd)
			f.fd, f.direct = dfd, true
		}
	}
	t0 := time.Now()
	if err := f.fillData(ctx, seed, progress); err != nil {
		return nil, err
	}
	if err := unix.Fsync(f.fd); err != nil {
		return nil, f.writeErr("syncing", err)
	}
	f.fill = time.Since(t0)
	if err := f.dropCache(); err != nil {
		return nil, err
	}
	return f, nil
}

// largestFile is the longest, in whole MiB, that the file fd may be made
// by truncation, below tooBig, which it may not: the filesystem's largest
// file (or the process's RLIMIT_FSIZE), found by bisection. It leaves the
// file empty.
func largestFile(fd int, tooBig int64) int64 {
	lo, hi := int64(0), tooBig/sizeUnit // lo MiB fit, hi do not
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if unix.Ftruncate(fd, mid*sizeUnit) == nil {
			lo = mid
		} else {
			hi = mid
		}
	}
	unix.Ftruncate(fd, 0)
	return lo * sizeUnit
}

// writeErr explains a failed write to the test file; a full filesystem
// wraps ErrNoSpace.
func (f *File) writeErr(what string, err error) error {
	if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
		return fmt.Errorf("probing storage: %s test file %s: the filesystem is full (%s was free before; try a smaller "+
			"--size or another --path): %w",
			what, f.path, units.Bytes(f.space.avail), ErrNoSpace)
	}
	return fmt.Errorf("probing storage: %s test file %s: %w", what, f.path, err)
}

// fillData writes the whole file sequentially with PRNG output.
func (f *File) fillData(ctx context.Context, seed uint64, progress func(string)) error {
	buf, err := alignedBuf(fillChunk)
	if err != nil {
		return err
	}
	defer unix.Munmap(buf)
	rng := rand.NewPCG(seed, 0x6e756d616c6162) // "numalab"
	for off := int64(0); off < f.size; off += fillChunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		fillRandom(buf, rng)
		n := int(min(fillChunk, f.size-off))
		w, err := unix.Pwrite(f.fd, buf[:n], f.at(off))
		if err == nil && w != n {
			err = unix.ENOSPC // a short write to a regular file means no room
		}
		if err != nil {
			return f.writeErr("filling", err)
		}
		progress(fmt.Sprintf("io: filling test file %s: %d%% of %s", f.path, (off+int64(n))*100/f.size, units.Bytes(f.size)))
	}
	return nil
}

// dropCache evicts the file from the page cache when I/O is buffered, so a
// pattern does not start from pages the previous one left.
func (f *File) dropCache() error {
	if f.direct {
		return nil
	}
	if err := unix.Fdatasync(f.fd); err != nil {
		return f.writeErr("syncing", err)
	}
	if err := unix.Fadvise(f.fd, 0, max(f.size, f.span), unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("probing storage: dropping %s from the page cache: %w", f.path, err)
	}
	return nil
}

// fillRandom fills b (a multiple of 8 bytes long) from rng.
func fillRandom(b []byte, rng *rand.PCG) {
	for i := 0; i+8 <= len(b); i += 8 {
		v := rng.Uint64()
		b[i], b[i+1], b[i+2], b[i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		b[i+4], b[i+5], b[i+6], b[i+7] = byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
	}
}

// alignedBuf maps n bytes outside the Go heap, page-aligned for O_DIRECT.
func alignedBuf(n int) ([]byte, error) {
	n = (n + align - 1) / align * align
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("allocating an aligned %d-byte I/O buffer: %w", n, err)
	}
	return b, nil
}

// at is where in the file the data's byte off lies: chunk off/1 MiB
// starts stride bytes after the one before it.
func (f *File) at(off int64) int64 {
	return off/sizeUnit*f.stride + off%sizeUnit
}

// Span is how far the data is spread: the file's length when it was
// given a span, else its size.
func (f *File) Span() int64 { return max(f.span, f.size) }

// Path is the test file's path.
func (f *File) Path() string { return f.path }

// Size is the test file's size in bytes.
func (f *File) Size() int64 { return f.size }

// Direct reports whether I/O bypasses the page cache (O_DIRECT).
func (f *File) Direct() bool { return f.direct }

// Close closes and removes the test file. It is safe to call more than
// once; only the first call does anything.
func (f *File) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	cerr := unix.Close(f.fd)
	rerr := os.Remove(f.path)
	if rerr != nil {
		rerr = fmt.Errorf("removing test file: %w", rerr)
	}
	if cerr != nil {
		cerr = fmt.Errorf("closing test file %s: %w", f.path, cerr)
	}
	return errors.Join(cerr, rerr)
}
