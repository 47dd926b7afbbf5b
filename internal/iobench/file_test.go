package iobench

import (
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestHeadroom(t *testing.T) {
	for _, tt := range []struct{ total, want int64 }{
		{0, 4 << 20},
		{8 << 20, 4 << 20},
		{1 << 30, (1 << 30) / 20},
		{100 << 30, 1 << 30},
	} {
		if got := headroom(tt.total); got != tt.want {
			t.Errorf("headroom(%d) = %d, want %d", tt.total, got, tt.want)
		}
	}
}

func TestDefaultSize(t *testing.T) {
	for _, tt := range []struct {
		name  string
		s     space
		limit int64
		want  int64
	}{
		{"plenty", space{avail: 80 << 30, total: 250 << 30}, DefaultSize, DefaultSize},
		{"quick", space{avail: 80 << 30, total: 250 << 30}, 256 << 20, 256 << 20},
		// 1 GiB free of 2 GiB: 102.4 MiB headroom, half the rest, whole MiB.
		{"short", space{avail: 1 << 30, total: 2 << 30}, DefaultSize, 460 << 20},
		{"too little", space{avail: 10 << 20, total: 2 << 30}, DefaultSize, 0},
		{"not reported", space{fsType: "ramfs"}, 256 << 20, 256 << 20},
	} {
		if got := defaultSize(tt.s, tt.limit); got != tt.want {
			t.Errorf("%s: defaultSize = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestCheckSize(t *testing.T) {
	s := space{avail: 100 << 20, total: 1 << 30} // headroom 51.2 MiB
	for _, tt := range []struct {
		size    int64
		wantErr string
		noSpace bool
	}{
		{32 << 20, "", false},
		{48 << 20, "", false},
		{49 << 20, "bigger than the free space in /d (100MiB free, of which 51.2MiB is kept free; try --size 24MiB", true},
		{1 << 20, "too small", false},
	} {
		err := checkSize("/d", tt.size, s)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("checkSize(%d) = %v, want nil", tt.size, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("checkSize(%d) = %v, want an error containing %q", tt.size, err, tt.wantErr)
		case tt.noSpace != errors.Is(err, ErrNoSpace):
			t.Errorf("checkSize(%d) = %v: errors.Is(ErrNoSpace) = %v, want %v", tt.size, err, !tt.noSpace, tt.noSpace)
		}
	}
	if err := checkSize("/r", 1<<40, space{fsType: "ramfs"}); err != nil {
		t.Errorf("a filesystem that reports no capacity: checkSize = %v, want nil", err)
	}
}

func TestFsName(t *testing.T) {
	if got := fsName(unix.EXT4_SUPER_MAGIC); got != "ext4" {
		t.Errorf("ext4 magic: %q", got)
	}
	if got := fsName(unix.TMPFS_MAGIC); got != "tmpfs" {
		t.Errorf("tmpfs magic: %q", got)
	}
	if got := fsName(0x12345678); got != "0x12345678" {
		t.Errorf("unknown magic: %q", got)
	}
}

// testFile is where Create puts the test file in dir.
func testFile(dir string) string { return filepath.Join(dir, FileName(os.Getpid())) }

func assertGone(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(testFile(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("test file %s left behind (stat: %v)", testFile(dir), err)
	}
}

func TestCreateFillsIncompressibleAndRemoves(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(context.Background(), dir, 8<<20, DefaultSize, 0, false, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Path() != testFile(dir) || f.Size() != 8<<20 {
		t.Errorf("file %s of %d bytes, want %s of %d", f.Path(), f.Size(), testFile(dir), 8<<20)
	}
	b, err := os.ReadFile(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 8<<20 {
		t.Fatalf("file holds %d bytes, want %d", len(b), 8<<20)
	}
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, flate.BestCompression)
	w.Write(b[:1<<20])
	w.Close()
	if z.Len() < 1<<20 {
		t.Errorf("the first MiB compresses to %d bytes: the data is not incompressible", z.Len())
	}
	if bytes.Equal(b[:1<<20], b[1<<20:2<<20]) {
		t.Error("the first two MiB are equal: the PRNG repeats per chunk")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, dir)
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v, want nil", err)
	}
}

func TestCreateBadPath(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ dir, want string }{
		{filepath.Join(dir, "missing"), "does not exist"},
		{plain, "is not a directory"},
	} {
		f, err := Create(context.Background(), tt.dir, 0, DefaultSize, 0, false, 1, nil)
		if err == nil {
			f.Close()
			t.Fatalf("Create(%s) succeeded, want an error", tt.dir)
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--path") {
			t.Errorf("Create(%s) = %v, want an error containing %q and naming --path", tt.dir, err, tt.want)
		}
	}
}

func TestCreateSizeBiggerThanFree(t *testing.T) {
	dir := t.TempDir()
	sp, err := statDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !sp.known() {
		t.Skipf("%s (%s) reports no capacity", dir, sp.fsType)
	}
	size := (sp.avail/sizeUnit + 1) * sizeUnit
	f, err := Create(context.Background(), dir, size, DefaultSize, 0, false, 1, nil)
	if err == nil {
		f.Close()
		t.Fatal("Create succeeded with a size bigger than the free space")
	}
	if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "try --size") {
		t.Errorf("Create = %v, want ErrNoSpace with a suggestion", err)
	}
	assertGone(t, dir)
}

func TestCreateNeverTouchesOthersFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(testFile(dir), []byte("not numalab's"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Create(context.Background(), dir, MinSize, DefaultSize, 0, false, 1, nil)
	if err == nil {
		f.Close()
		t.Fatal("Create succeeded over an existing file")
	}
	if !strings.Contains(err.Error(), "already exists") {
		t.Errorf("Create = %v, want an 'already exists' error", err)
	}
	if b, err := os.ReadFile(testFile(dir)); err != nil || string(b) != "not numalab's" {
		t.Errorf("the existing file was changed or removed: %q, %v", b, err)
	}
}

func TestCreateCancelledRemoves(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, err := Create(ctx, dir, 16<<20, DefaultSize, 0, false, 1, func(string) {
		if calls++; calls == 2 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Create cancelled while filling = %v, want context.Canceled", err)
	}
	assertGone(t, dir)
}

// mountTmpfs mounts a tmpfs (or ramfs) with opts on a new directory, or
// skips the test with the reason it cannot.
func mountTmpfs(t *testing.T, fstype, opts string) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount(fstype, dir, fstype, 0, opts); err != nil {
		t.Skipf("cannot mount a %s here (needs root in a mount namespace that allows it): %v", fstype, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}

func TestCreateReadOnlyFilesystem(t *testing.T) {
	dir := mountTmpfs(t, "tmpfs", "ro,size=16m")
	f, err := Create(context.Background(), dir, MinSize, DefaultSize, 0, false, 1, nil)
	if err == nil {
		f.Close()
		t.Fatal("Create succeeded on a read-only filesystem")
	}
	if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("Create = %v, want ErrReadOnly", err)
	}
	// Past the statfs check, open itself must say the same.
	sp, _ := statDir(dir)
	if _, err := create(context.Background(), dir, MinSize, 0, false, 1,
		sp, func(string) {}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("create on a read-only filesystem = %v, want ErrReadOnly", err)
	}
	assertGone(t, dir)
}

func TestCreateFullFilesystem(t *testing.T) {
	dir := mountTmpfs(t, "tmpfs", "size=12m")
	// A size the statfs check refuses.
	if _, err := Create(context.Background(), dir, 16<<20, DefaultSize, 0, false, 1, nil); !errors.Is(err, ErrNoSpace) {
		t.Errorf("Create(16 MiB on 12 MiB) = %v, want ErrNoSpace", err)
	}
	assertGone(t, dir)
	// Past the check, the filesystem fills while the file is made.
	sp, _ := statDir(dir)
	_, err := create(context.Background(), dir, 16<<20, 0, false, 1, sp, func(string) {})
	if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "filesystem is full") {
		t.Errorf("create(16 MiB on 12 MiB) = %v, want a 'filesystem is full' ErrNoSpace", err)
	}
	assertGone(t, dir)
	// A filesystem that is already full: no default size fits.
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, 10<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(context.Background(), dir, 0, DefaultSize, 0, false, 1, nil); !errors.Is(err, ErrNoSpace) ||
		!strings.Contains(err.Error(), "too little") {
		t.Errorf("Create on a full filesystem = %v, want a 'too little' ErrNoSpace", err)
	}
	assertGone(t, dir)
	if _, err := os.Stat(filler); err != nil {
		t.Errorf("the filler file is gone: %v", err)
	}
}

// TestCreateSpanIsSparse spreads 8 MiB of data over a 64 MiB span: the
// file is 64 MiB long, each 1 MiB chunk starts 8 MiB after the one before
// and holds data, the gaps read as zeros, and on a filesystem that keeps
// holes little more than the data is allocated. Random reads of the
// whole span land in chunks only.
func TestCreateSpanIsSparse(t *testing.T) {
	dir := t.TempDir()
	sp, err := statDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Create(context.Background(), dir, 8<<20, DefaultSize, 64<<20, false, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Span() != 64<<20 || f.stride != 8<<20 || f.at(0) != 0 || f.at(1<<20) != 8<<20 || f.at(3<<20+4096) != 24<<20+4096 {
		t.Errorf("span %d, stride %d, at(1 MiB) %d; want 64 MiB, 8 MiB, 8 MiB", f.Span(), f.stride, f.at(1<<20))
	}
	var st unix.Stat_t
	if err := unix.Stat(f.Path(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Size != 64<<20 {
		t.Errorf("file is %d bytes long, want the 64 MiB span", st.Size)
	}
	if f.sparse != slices.Contains(sparseFS, sp.fsType) {
		t.Errorf("sparse %v on %s", f.sparse, sp.fsType)
	}
	if f.sparse && st.Blocks*512 > 16<<20 {
		t.Errorf("%d bytes allocated on %s for 8 MiB of data over 64 MiB: not sparse", st.Blocks*512, sp.fsType)
	}
	b, err := os.ReadFile(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	for c := range 8 {
		chunk, gap := b[c*8<<20:c*8<<20+1<<20], b[c*8<<20+1<<20:c*8<<20+2<<20]
		if bytes.Count(chunk, []byte{0}) > 1<<14 || bytes.Count(gap, []byte{0}) != 1<<20 {
			t.Fatalf("chunk %d: %d zero bytes of data, %d zero bytes after it; want random data, then a hole",
				c, bytes.Count(chunk, []byte{0}), bytes.Count(gap, []byte{0}))
		}
	}
	p, err := f.Measure(context.Background(), Spec{Name: RandRead, BlockSize: PageSize, QD: 2}, 200*time.Millisecond, 1)
	if err != nil || p.Read.Ops == 0 {
		t.Errorf("random reads over the span: %+v, %v", p.Read, err)
	}
}

// TestCheckSpan refuses a span below the data or not in whole MiB, and a
// span larger than the free space on a filesystem not known to keep holes.
func TestCheckSpan(t *testing.T) {
	ext4 := space{fsType: "ext4", avail: 10 << 30, total: 100 << 30}
	fat := space{fsType: "0x4d44", avail: 10 << 30, total: 100 << 30}
	for _, c := range []struct {
		s          space
		size, span int64
		want       string
	}{
		{ext4, 1 << 30, 8 << 30, ""},
		{ext4, 1 << 30, 64 << 30, ""}, // holes: only the data needs room
		{fat, 1 << 30, 8 << 30, ""},
		{fat, 1 << 30, 64 << 30, "needs that much free space"},
		{ext4, 1 << 30, 512 << 20, "below the test file"},
		{ext4, 1 << 30, 8<<30 + 4096, "whole number of MiB"},
	} {
		err := checkSpan("/d", c.size, c.span, c.s)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("checkSpan(%d of %d on %s) = %v, want %q", c.size, c.span, c.s.fsType, err, c.want)
		}
	}
}

// TestCreateSpanAboveLargestFile: a span longer than a file may be here
// (RLIMIT_FSIZE stands in for a filesystem's largest file: ext4's is
// 16 TiB) is refused naming --span, its value and the largest file,
// found by bisection, and leaves nothing behind.
func TestCreateSpanAboveLargestFile(t *testing.T) {
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: 64 << 20, Max: old.Max}); err != nil {
		t.Skipf("cannot lower RLIMIT_FSIZE: %v", err)
	}
	defer unix.Setrlimit(unix.RLIMIT_FSIZE, &old)
	dir := t.TempDir()
	sp, err := statDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = create(context.Background(), dir, MinSize, 1<<30, false, 1, sp, func(string) {})
	want := "--span 1GiB (1073741824 bytes) is more than one file may hold on " + sp.fsType + " in " +
		dir + ": the largest it takes is 64MiB (67108864 bytes"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("create with a 1 GiB span and 64 MiB files: %v\nwant %q", err, want)
	}
	assertGone(t, dir)
}
