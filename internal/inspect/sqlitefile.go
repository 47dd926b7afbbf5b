package inspect

// Reading an SQLite file's b-trees page by page, for the space each one
// occupies. SQLite's own dbstat virtual table does the same, but
// mattn/go-sqlite3 compiles it only with the build tag sqlite_dbstat; this
// reader needs no tag. It follows the file format
// (https://www.sqlite.org/fileformat2.html) and reads the file through an
// io.ReaderAt opened read-only.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrNotSQLite is wrapped by errors for a file that is not an SQLite database.
var ErrNotSQLite = errors.New("not an SQLite database")

// sqliteMagic begins every SQLite 3 database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// sqliteHeader are the fields of the 100-byte file header this reader uses.
type sqliteHeader struct {
	pageSize  int64 // bytes per page
	reserve   int64 // bytes reserved at the end of each page
	pageCount int64 // pages in the file
	freeTrunk uint32
	freeCount int64 // pages on the freelist
	autoVac   bool  // pointer-map pages exist
}

// usable is the usable size U of a page.
func (h sqliteHeader) usable() int64 { return h.pageSize - h.reserve }

// parseSQLiteHeader reads the file header; size is the file's length.
func parseSQLiteHeader(b []byte, size int64) (sqliteHeader, error) {
	if len(b) < 100 || !bytes.Equal(b[:16], sqliteMagic) {
		return sqliteHeader{}, fmt.Errorf("%w: the file does not begin with %q", ErrNotSQLite, "SQLite format 3")
	}
	var h sqliteHeader
	ps := int64(binary.BigEndian.Uint16(b[16:]))
	if ps == 1 {
		ps = 65536
	}
	if ps < 512 || ps&(ps-1) != 0 {
		return h, fmt.Errorf("%w: page size %d is not a power of two from 512 to 65536", ErrNotSQLite, ps)
	}
	h.pageSize = ps
	h.reserve = int64(b[20])
	h.pageCount = int64(binary.BigEndian.Uint32(b[28:]))
	// The in-header page count is valid only if written by a version that
	// keeps it (version-valid-for equals the change counter); otherwise the
	// file's size decides.
	if h.pageCount == 0 || binary.BigEndian.Uint32(b[92:]) != binary.BigEndian.Uint32(b[24:]) {
		h.pageCount = size / ps
	}
	h.freeTrunk = binary.BigEndian.Uint32(b[32:])
	h.freeCount = int64(binary.BigEndian.Uint32(b[36:]))
	h.autoVac = binary.BigEndian.Uint32(b[52:]) != 0
	return h, nil
}

// btreeSpace is what one b-tree occupies.
type btreeSpace struct {
	pages    int64 // b-tree and overflow pages
	overflow int64 // of which overflow pages
	unused   int64 // bytes free inside those pages (incl. reserved bytes)
	leafCell int64 // cells on leaf pages: rows of a table, entries of an index
	cells    int64 // cells on all pages (index b-trees keep entries on interior pages too)
	index    bool  // an index b-tree (an index, or a WITHOUT ROWID table)
}

// entries is the number of rows (table b-tree) or index entries.
func (s btreeSpace) entries() int64 {
	if s.index {
		return s.cells
	}
	return s.leafCell
}

// sqliteFile walks the b-trees of one file.
type sqliteFile struct {
	r    io.ReaderAt
	h    sqliteHeader
	seen []uint64 // bit set of pages already counted, to stop on a corrupt file's loops
	buf  []byte   // the b-tree page being read
	obuf []byte   // the overflow page being read
}

func newSQLiteFile(r io.ReaderAt, size int64) (*sqliteFile, error) {
	hdr := make([]byte, 100)
	if _, err := r.ReadAt(hdr, 0); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: the file is shorter than SQLite's 100-byte header", ErrNotSQLite)
		}
		return nil, err
	}
	h, err := parseSQLiteHeader(hdr, size)
	if err != nil {
		return nil, err
	}
	return &sqliteFile{r: r, h: h, seen: make([]uint64, h.pageCount/64+1),
		buf: make([]byte, h.pageSize), obuf: make([]byte, h.pageSize)}, nil
}

// mark records page n as counted; false if it was already, or is not a
// page of the file.
func (f *sqliteFile) mark(n uint32) bool {
	w, bit := n/64, uint64(1)<<(n%64)
	if n < 1 || int64(n) > f.h.pageCount || f.seen[w]&bit != 0 {
		return false
	}
	f.seen[w] |= bit
	return true
}

// page reads page n (1-based) into b.
func (f *sqliteFile) page(n uint32, b []byte) ([]byte, error) {
	if n < 1 || int64(n) > f.h.pageCount {
		return nil, fmt.Errorf("page %d is outside the file's %d pages: the file is corrupt", n, f.h.pageCount)
	}
	if !f.mark(n) {
		return nil, fmt.Errorf("page %d is used twice: the file is corrupt", n)
	}
	if _, err := f.r.ReadAt(b, (int64(n)-1)*f.h.pageSize); err != nil {
		return nil, fmt.Errorf("reading page %d: %w", n, err)
	}
	return b, nil
}

// freelist counts the freelist's trunk and leaf pages by walking it.
func (f *sqliteFile) freelist() (int64, error) {
	var n int64
	for t := f.h.freeTrunk; t != 0; {
		b, err := f.page(t, f.buf)
		if err != nil {
			return n, fmt.Errorf("walking the freelist: %w", err)
		}
		leaves := binary.BigEndian.Uint32(b[4:])
		if int64(leaves) > f.h.usable()/4-2 {
			return n, fmt.Errorf("walking the freelist: trunk page %d claims %d leaves: the file is corrupt", t, leaves)
		}
		for i := range leaves {
			if !f.mark(binary.BigEndian.Uint32(b[8+4*i:])) {
				return n, fmt.Errorf("walking the freelist: page %d listed twice or outside the file: the file is corrupt",
					binary.BigEndian.Uint32(b[8+4*i:]))
			}
		}
		n += 1 + int64(leaves)
		t = binary.BigEndian.Uint32(b)
	}
	return n, nil
}

// btree walks the b-tree rooted at page root.
func (f *sqliteFile) btree(root uint32) (btreeSpace, error) {
	var s btreeSpace
	stack := []uint32{root}
	first := true
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		b, err := f.page(n, f.buf)
		if err != nil {
			return s, err
		}
		off := 0
		if n == 1 {
			off = 100
		}
		typ := b[off]
		leaf := typ == 0x0a || typ == 0x0d
		isIndex := typ == 0x02 || typ == 0x0a
		if typ != 0x02 && typ != 0x05 && typ != 0x0a && typ != 0x0d {
			return s, fmt.Errorf("page %d has b-tree page type %#x: the file is corrupt", n, typ)
		}
		if first {
			s.index = isIndex
			first = false
		} else if s.index != isIndex {
			return s, fmt.Errorf("page %d mixes table and index pages in one b-tree: the file is corrupt", n)
		}
		hsize := 12
		if leaf {
			hsize = 8
		}
		ncell := int(binary.BigEndian.Uint16(b[off+3:]))
		content := int(binary.BigEndian.Uint16(b[off+5:]))
		if content == 0 {
			content = 65536
		}
		ptrEnd := off + hsize + 2*ncell
		if ptrEnd > content || int64(content) > f.h.usable() {
			return s, fmt.Errorf("page %d: %d cells do not fit: the file is corrupt", n, ncell)
		}
		free := int64(content-ptrEnd) + int64(b[off+7]) + f.h.reserve
		for fb, k := int(binary.BigEndian.Uint16(b[off+1:])), 0; fb != 0; k++ {
			if fb+4 > int(f.h.usable()) || k > int(f.h.pageSize)/4 {
				return s, fmt.Errorf("page %d: bad freeblock list: the file is corrupt", n)
			}
			free += int64(binary.BigEndian.Uint16(b[fb+2:]))
			fb = int(binary.BigEndian.Uint16(b[fb:]))
		}
		s.pages++
		s.unused += free
		s.cells += int64(ncell)
		if leaf {
			s.leafCell += int64(ncell)
		} else {
			stack = append(stack, binary.BigEndian.Uint32(b[off+8:]))
		}
		for i := range ncell {
			c := int(binary.BigEndian.Uint16(b[off+hsize+2*i:]))
			if c < ptrEnd || c >= int(f.h.usable()) {
				return s, fmt.Errorf("page %d: cell %d at offset %d: the file is corrupt", n, i, c)
			}
			if !leaf {
				stack = append(stack, binary.BigEndian.Uint32(b[c:]))
				c += 4
				if typ == 0x05 { // interior table cell: child and rowid only
					continue
				}
			}
			payload, k := uvarint(b[c:f.h.usable()])
			if k == 0 {
				return s, fmt.Errorf("page %d: cell %d: bad varint: the file is corrupt", n, i)
			}
			c += k
			if typ == 0x0d { // table leaf: the rowid follows
				_, k = uvarint(b[c:f.h.usable()])
				c += k
			}
			local := f.localPayload(int64(payload), isIndex)
			if local >= int64(payload) {
				continue
			}
			if int64(c)+local+4 > f.h.usable() {
				return s, fmt.Errorf("page %d: cell %d overruns the page: the file is corrupt", n, i)
			}
			ovf := binary.BigEndian.Uint32(b[int64(c)+local:])
			po, pu, err := f.overflow(ovf, int64(payload)-local)
			if err != nil {
				return s, fmt.Errorf("page %d: cell %d: %w", n, i, err)
			}
			s.pages += po
			s.overflow += po
			s.unused += pu
		}
	}
	return s, nil
}

// localPayload is how much of a payload of p bytes stays on the b-tree page;
// the rest goes to overflow pages.
func (f *sqliteFile) localPayload(p int64, index bool) int64 {
	u := f.h.usable()
	x := u - 35
	if index {
		x = (u-12)*64/255 - 23
	}
	if p <= x {
		return p
	}
	m := (u-12)*32/255 - 23
	k := m + (p-m)%(u-4)
	if k <= x {
		return k
	}
	return m
}

// overflow follows an overflow chain carrying rest bytes: its pages and
// their unused bytes.
func (f *sqliteFile) overflow(n uint32, rest int64) (pages, unused int64, err error) {
	per := f.h.usable() - 4
	for rest > 0 {
		if n == 0 {
			return pages, unused, fmt.Errorf("overflow chain ends %d bytes early: the file is corrupt", rest)
		}
		b, err := f.page(n, f.obuf)
		if err != nil {
			return pages, unused, err
		}
		here := min(rest, per)
		pages++
		unused += per - here + f.h.reserve
		rest -= here
		n = binary.BigEndian.Uint32(b)
	}
	return pages, unused, nil
}

// ptrmapPages is the number of pointer-map pages in an auto-vacuum file.
func (f *sqliteFile) ptrmapPages() int64 {
	if !f.h.autoVac {
		return 0
	}
	// Pointer-map pages are page 2 and then every U/5+1 pages.
	per := f.h.usable()/5 + 1
	var n int64
	for p := int64(2); p <= f.h.pageCount; p += per {
		n++
	}
	return n
}

// lockBytePage reports whether the file has the page holding SQLite's lock
// bytes (at 1 GiB), which no b-tree uses.
func (f *sqliteFile) lockBytePage() int64 {
	if f.h.pageCount*f.h.pageSize > 1<<30 {
		return 1
	}
	return 0
}

// uvarint decodes SQLite's big-endian varint (1 to 9 bytes); it returns the
// value and the bytes read, 0 if b is too short.
func uvarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 9 && i < len(b); i++ {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}
