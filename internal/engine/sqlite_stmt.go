package engine

/*
#include <stdint.h>
#include <stdlib.h>

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
int sqlite3_prepare_v2(sqlite3*, const char*, int, sqlite3_stmt**, const char**);
int sqlite3_finalize(sqlite3_stmt*);
int sqlite3_reset(sqlite3_stmt*);
int sqlite3_clear_bindings(sqlite3_stmt*);
int sqlite3_bind_int64(sqlite3_stmt*, int, long long);
int sqlite3_bind_double(sqlite3_stmt*, int, double);
int sqlite3_bind_text(sqlite3_stmt*, int, const char*, int, void (*)(void*));
int sqlite3_bind_blob(sqlite3_stmt*, int, const void*, int, void (*)(void*));
int sqlite3_bind_null(sqlite3_stmt*, int);
int sqlite3_step(sqlite3_stmt*);
int sqlite3_column_count(sqlite3_stmt*);
int sqlite3_column_type(sqlite3_stmt*, int);
long long sqlite3_column_int64(sqlite3_stmt*, int);
double sqlite3_column_double(sqlite3_stmt*, int);
const unsigned char *sqlite3_column_text(sqlite3_stmt*, int);
const void *sqlite3_column_blob(sqlite3_stmt*, int);
int sqlite3_column_bytes(sqlite3_stmt*, int);
const char *sqlite3_errmsg(sqlite3*);
int sqlite3_extended_errcode(sqlite3*);
void sqlite3_interrupt(sqlite3*);

// SQLite's fundamental types, and SQLITE_ROW, SQLITE_DONE.
enum { NL_INTEGER = 1, NL_FLOAT = 2, NL_TEXT = 3, NL_BLOB = 4, NL_NULL = 5, NL_ROW = 100, NL_DONE = 101 };

// nl_val is an argument to bind or a column of the current row: text and
// blobs are p and n (a column's point into SQLite's memory until the next
// step; an argument's into the statement's own buffer).
typedef struct {
	int kind;
	int n;
	long long i;
	double f;
	const void *p;
} nl_val;

// nl_call is a statement and its columns and arguments, in C memory
// (passed to C as an integer: cgo checks no pointer in it).
typedef struct {
	sqlite3_stmt *st;
	int ncols, nargs;
	nl_val *vals; // ncols columns, then nargs arguments
} nl_call;

// nl_step takes one step of c's statement and reads the row's columns,
// as a C program reads a row: one cgo call a row.
static int nl_step(uintptr_t call) {
	nl_call *c = (nl_call *)call;
	sqlite3_stmt *st = c->st;
	int rc = sqlite3_step(st);
	if (rc != NL_ROW)
		return rc;
	for (int i = 0; i < c->ncols; i++) {
		nl_val *v = &c->vals[i];
		v->kind = sqlite3_column_type(st, i);
		switch (v->kind) {
		case NL_INTEGER:
			v->i = sqlite3_column_int64(st, i);
			break;
		case NL_FLOAT:
			v->f = sqlite3_column_double(st, i);
			break;
		case NL_TEXT:
			v->p = sqlite3_column_text(st, i);
			v->n = sqlite3_column_bytes(st, i);
			break;
		case NL_BLOB:
			v->p = sqlite3_column_blob(st, i);
			v->n = sqlite3_column_bytes(st, i);
			break;
		}
	}
	return rc;
}

// nl_start resets c's statement, binds its arguments (text and blobs
// copied, as SQLITE_TRANSIENT asks) and takes the first step: one cgo
// call. A bind that fails returns its code, negated.
static int nl_start(uintptr_t call) {
	nl_call *c = (nl_call *)call;
	sqlite3_stmt *st = c->st;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	for (int i = 0; i < c->nargs; i++) {
		const nl_val *a = &c->vals[c->ncols + i];
		int rc;
		switch (a->kind) {
		case NL_INTEGER:
			rc = sqlite3_bind_int64(st, i + 1, a->i);
			break;
		case NL_FLOAT:
			rc = sqlite3_bind_double(st, i + 1, a->f);
			break;
		case NL_TEXT:
			rc = sqlite3_bind_text(st, i + 1, a->p, a->n, (void (*)(void*))-1);
			break;
		case NL_BLOB:
			rc = sqlite3_bind_blob(st, i + 1, a->p, a->n, (void (*)(void*))-1);
			break;
		default:
			rc = sqlite3_bind_null(st, i + 1);
		}
		if (rc != 0)
			return -rc;
	}
	return nl_step(call);
}
*/
import "C"

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/mattn/go-sqlite3"
)

// SQLite's prepared statements run on the connection's handle
// (sqlite_handle.go) through SQLite's C API, making a C program's calls:
// one cgo call to reset, bind and take the first step, one a row after
// that, every column of the row read in that call into the statement's
// own C memory (allocated at Prepare; passed as an integer, so cgo checks
// no pointer); no driver values, no allocation, no lock. Through
// go-sqlite3's driver statements (a cgo call a bind and a column, a rows
// object and a C buffer a query, every value boxed) a tpcc-ro transaction
// spent 45,000 instructions outside sqlite3_step under callgrind, a C loop
// making the same calls 4,500; this path 15,600 (tpcc's
// BenchmarkCallgrindInstructions).
//
// Values are as SQLite stores them: a column's declared type changes
// nothing (go-sqlite3's Conn.Query turns DATE, DATETIME and TIMESTAMP
// columns into times and BOOLEAN ones into booleans; a Row does not).

// sqliteStmt is a statement prepared on a connection's handle, with its
// arguments and current row in C memory.
type sqliteStmt struct {
	db   *C.sqlite3
	c    *C.nl_call // its vals have room for room arguments
	room int
	text *C.char // the arguments' text and blobs, copied
	ntxt int
	row  sqliteRow
}

// Prepare prepares query on the connection's handle. A statement's rows
// have the columns its query has at Prepare.
func (c *sqliteConn) Prepare(_ context.Context, query string) (Stmt, error) {
	q := C.CString(query)
	defer C.free(unsafe.Pointer(q))
	var st *C.sqlite3_stmt
	if rc := C.sqlite3_prepare_v2(c.h.db, q, -1, &st, nil); rc != 0 {
		return nil, fmt.Errorf("preparing %q: %w", query, sqliteErr(c.h.db, rc))
	}
	if st == nil {
		return nil, fmt.Errorf("preparing %q: no statement in it", query)
	}
	s := &sqliteStmt{db: c.h.db, c: (*C.nl_call)(C.calloc(1, C.size_t(unsafe.Sizeof(C.nl_call{}))))}
	if s.c == nil {
		C.sqlite3_finalize(st)
		return nil, fmt.Errorf("preparing %q: out of C memory", query)
	}
	s.c.st, s.c.ncols = st, C.sqlite3_column_count(st)
	s.grow(0)
	s.growText(64) // never NULL: an empty string is bound as text, not NULL
	return s, nil
}

// grow makes room in C memory for the columns and nargs arguments.
func (s *sqliteStmt) grow(nargs int) {
	ncols := int(s.c.ncols)
	n := max(ncols+nargs, 1)
	s.c.vals = (*C.nl_val)(C.realloc(unsafe.Pointer(s.c.vals), C.size_t(n)*C.size_t(unsafe.Sizeof(C.nl_val{}))))
	if s.c.vals == nil {
		panic("sqlite statement: out of C memory")
	}
	s.room = nargs
	s.row.cols = unsafe.Slice(s.c.vals, n)[:ncols:ncols]
}

// growText makes room in C memory for n bytes of arguments' text.
func (s *sqliteStmt) growText(n int) {
	s.text = (*C.char)(C.realloc(unsafe.Pointer(s.text), C.size_t(n)))
	if s.text == nil {
		panic("sqlite statement: out of C memory")
	}
	s.ntxt = n
}

// bind sets the C arguments from args; an error when one has a type
// SQLite cannot take.
func (s *sqliteStmt) bind(args []any) error {
	if len(args) > s.room {
		s.grow(len(args))
	}
	text := 0
	for _, a := range args {
		switch x := a.(type) {
		case string:
			text += len(x)
		case []byte:
			text += len(x)
		}
	}
	if text > s.ntxt {
		s.growText(text)
	}
	ncols := int(s.c.ncols)
	vals := unsafe.Slice(s.c.vals, ncols+len(args))[ncols:]
	buf := unsafe.Slice((*byte)(unsafe.Pointer(s.text)), s.ntxt)
	off := 0
	for i, a := range args {
		v := &vals[i]
		switch x := a.(type) {
		case nil:
			v.kind = C.NL_NULL
		case int:
			v.kind, v.i = C.NL_INTEGER, C.longlong(x)
		case int64:
			v.kind, v.i = C.NL_INTEGER, C.longlong(x)
		case int32:
			v.kind, v.i = C.NL_INTEGER, C.longlong(x)
		case bool:
			v.kind, v.i = C.NL_INTEGER, 0
			if x {
				v.i = 1
			}
		case float64:
			v.kind, v.f = C.NL_FLOAT, C.double(x)
		case string:
			v.kind, v.n, v.p = C.NL_TEXT, C.int(len(x)), unsafe.Pointer(unsafe.SliceData(buf[off:]))
			off += copy(buf[off:], x)
		case []byte:
			if x == nil {
				v.kind = C.NL_NULL
				continue
			}
			v.kind, v.n, v.p = C.NL_BLOB, C.int(len(x)), unsafe.Pointer(unsafe.SliceData(buf[off:]))
			off += copy(buf[off:], x)
		default:
			return fmt.Errorf("binding argument %d: a %T (sqlite takes int, int64, float64, string, []byte, bool or nil)",
				i+1, a)
		}
	}
	s.c.nargs = C.int(len(args))
	return nil
}

func (s *sqliteStmt) Query(ctx context.Context, args []any, row func(Row) error) error {
	if err := s.bind(args); err != nil {
		return err
	}
	if ctx.Done() != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		// A cancellable context interrupts the call (a goroutine and a
		// channel a call: pass context.Background() in a hot path).
		interrupted := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			C.sqlite3_interrupt(s.db)
			close(interrupted)
		})
		defer func() {
			if !stop() {
				<-interrupted // no interrupt may outlive the call
			}
		}()
	}
	call := C.uintptr_t(uintptr(unsafe.Pointer(s.c)))
	rc := C.nl_start(call)
	for rc == C.NL_ROW {
		if row != nil {
			if err := row(&s.row); err != nil {
				C.sqlite3_reset(s.c.st)
				return err
			}
		}
		rc = C.nl_step(call)
	}
	if rc == C.NL_DONE {
		return nil
	}
	if rc < 0 {
		return fmt.Errorf("binding arguments: %w", sqliteErr(s.db, -rc))
	}
	err := sqliteErr(s.db, rc)
	C.sqlite3_reset(s.c.st)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (s *sqliteStmt) Close() error {
	if s.c == nil {
		return nil
	}
	rc, db := C.sqlite3_finalize(s.c.st), s.db
	C.free(unsafe.Pointer(s.c.vals))
	C.free(unsafe.Pointer(s.c))
	C.free(unsafe.Pointer(s.text))
	*s = sqliteStmt{}
	if rc != 0 {
		return fmt.Errorf("closing a sqlite statement: %w", sqliteErr(db, rc))
	}
	return nil
}

// sqliteErr is the connection's last error, code rc: a sqlite3.Error
// with SQLite's message.
func sqliteErr(db *C.sqlite3, rc C.int) error {
	code := C.sqlite3_extended_errcode(db)
	if code&0xff != rc&0xff {
		code = rc
	}
	return fmt.Errorf("%s: %w", C.GoString(C.sqlite3_errmsg(db)),
		sqlite3.Error{Code: sqlite3.ErrNo(code & 0xff), ExtendedCode: sqlite3.ErrNoExtended(int(code))})
}

// sqliteRow is the statement's current row, in its C memory.
type sqliteRow struct{ cols []C.nl_val }

func (r *sqliteRow) Len() int        { return len(r.cols) }
func (r *sqliteRow) Null(i int) bool { return r.cols[i].kind == C.NL_NULL }

// bytes is a text or blob column's bytes in SQLite's memory, valid until
// the next step.
func (r *sqliteRow) bytes(i int) string {
	v := &r.cols[i]
	if v.n == 0 {
		return ""
	}
	return unsafe.String((*byte)(v.p), int(v.n))
}

func (r *sqliteRow) Int(i int) int64 {
	switch v := &r.cols[i]; v.kind {
	case C.NL_INTEGER:
		return int64(v.i)
	case C.NL_FLOAT:
		return int64(v.f)
	case C.NL_TEXT, C.NL_BLOB:
		n, _ := strconv.ParseInt(r.bytes(i), 10, 64)
		return n
	}
	return 0
}

func (r *sqliteRow) Float(i int) float64 {
	switch v := &r.cols[i]; v.kind {
	case C.NL_INTEGER:
		return float64(v.i)
	case C.NL_FLOAT:
		return float64(v.f)
	case C.NL_TEXT, C.NL_BLOB:
		f, _ := strconv.ParseFloat(r.bytes(i), 64)
		return f
	}
	return 0
}

func (r *sqliteRow) Text(i int) string {
	switch v := &r.cols[i]; v.kind {
	case C.NL_INTEGER:
		return textOf(int64(v.i))
	case C.NL_FLOAT:
		return textOf(float64(v.f))
	case C.NL_TEXT, C.NL_BLOB:
		return strings.Clone(r.bytes(i))
	}
	return ""
}
