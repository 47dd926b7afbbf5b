package engine

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
int sqlite3_bind_parameter_count(sqlite3_stmt*);
typedef struct sqlite3_value sqlite3_value;
sqlite3_value *sqlite3_column_value(sqlite3_stmt*, int);
int sqlite3_value_type(sqlite3_value*);
long long sqlite3_value_int64(sqlite3_value*);
double sqlite3_value_double(sqlite3_value*);
const unsigned char *sqlite3_value_text(sqlite3_value*);
const void *sqlite3_value_blob(sqlite3_value*);
int sqlite3_value_bytes(sqlite3_value*);
const char *sqlite3_errmsg(sqlite3*);
int sqlite3_extended_errcode(sqlite3*);
void sqlite3_interrupt(sqlite3*);

// SQLite's fundamental types, SQLITE_ROW and SQLITE_DONE; NL_NOMEM: the
// statement's row buffer could not grow.
enum { NL_INTEGER = 1, NL_FLOAT = 2, NL_TEXT = 3, NL_BLOB = 4, NL_NULL = 5, NL_ROW = 100, NL_DONE = 101,
	NL_NOMEM = 1000 };

// A batch of rows ends after the row that fills NL_MAXROWS rows or
// NL_MAXTEXT bytes of text.
enum { NL_MAXROWS = 256, NL_MAXTEXT = 64 << 10 };

// nl_val is an argument to bind or a column of a buffered row; text and
// blobs are n bytes at offset i of the arguments' or the batch's text.
typedef struct {
	int kind;
	int n;
	long long i;
	double f;
} nl_val;

// nl_call is a statement, its arguments and its current batch of rows,
// in C memory (passed to C as an integer: cgo checks no pointer in it).
typedef struct {
	sqlite3_stmt *st;
	int ncols, nparams, nargs;
	nl_val *args;
	char *argtext;     // the arguments' text and blobs
	size_t argcap;
	int keep;          // buffer the rows' columns (else step and drop them)
	int nrows, rowcap; // rows in the batch, room in cols
	nl_val *cols;      // nrows rows of ncols columns
	char *text;        // the rows' text and blobs, ntext bytes of textcap
	size_t ntext, textcap;
} nl_call;

// nl_rows makes room in c for n rows' columns.
static int nl_rows(nl_call *c, int n) {
	nl_val *cols = realloc(c->cols, ((size_t)n * (size_t)c->ncols + 1) * sizeof *cols);
	if (cols == NULL)
		return NL_NOMEM;
	c->cols = cols;
	c->rowcap = n;
	return 0;
}

// nl_copy appends a text or blob column's n bytes at p to c's text, as v.
static int nl_copy(nl_call *c, nl_val *v, const void *p, int n) {
	v->n = p ? n : 0;
	v->i = (long long)c->ntext;
	if (v->n == 0)
		return 0;
	if (c->ntext + (size_t)n > c->textcap) {
		size_t cap = c->textcap * 2;
		while (cap < c->ntext + (size_t)n)
			cap *= 2;
		char *t = realloc(c->text, cap);
		if (t == NULL)
			return NL_NOMEM;
		c->text = t;
		c->textcap = cap;
	}
	memcpy(c->text + c->ntext, p, (size_t)n);
	c->ntext += (size_t)n;
	return 0;
}

// nl_batch steps c's statement until a batch of rows is full or the
// statement ends, copying each row's columns into c (its text too: a
// column's memory is SQLite's only until the next step), as a C program
// reads its rows: one cgo call a batch. It returns NL_ROW when the batch
// is full (more rows may follow), else the last step's code.
static int nl_batch(uintptr_t call) {
	nl_call *c = (nl_call *)call;
	sqlite3_stmt *st = c->st;
	c->nrows = 0;
	c->ntext = 0;
	for (;;) {
		int rc = sqlite3_step(st);
		if (rc != NL_ROW)
			return rc;
		if (!c->keep)
			continue;
		if (c->nrows == c->rowcap && nl_rows(c, c->rowcap * 2) != 0)
			return NL_NOMEM;
		nl_val *v = c->cols + (size_t)c->nrows * (size_t)c->ncols;
		for (int i = 0; i < c->ncols; i++, v++) {
			// The column's value, read through sqlite3_value_*: one
			// look-up of the column, not one a call.
			sqlite3_value *x = sqlite3_column_value(st, i);
			v->kind = sqlite3_value_type(x);
			switch (v->kind) {
			case NL_INTEGER:
				v->i = sqlite3_value_int64(x);
				break;
			case NL_FLOAT:
				v->f = sqlite3_value_double(x);
				break;
			case NL_TEXT:
				rc = nl_copy(c, v, sqlite3_value_text(x), sqlite3_value_bytes(x));
				break;
			case NL_BLOB:
				rc = nl_copy(c, v, sqlite3_value_blob(x), sqlite3_value_bytes(x));
				break;
			}
			if (rc == NL_NOMEM)
				return rc;
		}
		if (++c->nrows == NL_MAXROWS || c->ntext >= NL_MAXTEXT)
			return NL_ROW;
	}
}

// nl_start resets c's statement, binds its arguments (text and blobs
// copied, as SQLITE_TRANSIENT asks) and reads the first batch of rows: one
// cgo call. A bind that fails returns its code, negated.
static int nl_start(uintptr_t call) {
	nl_call *c = (nl_call *)call;
	sqlite3_stmt *st = c->st;
	c->nrows = 0;
	sqlite3_reset(st);
	if (c->nargs < c->nparams) // else every parameter is bound again
		sqlite3_clear_bindings(st);
	for (int i = 0; i < c->nargs; i++) {
		const nl_val *a = &c->args[i];
		int rc;
		switch (a->kind) {
		case NL_INTEGER:
			rc = sqlite3_bind_int64(st, i + 1, a->i);
			break;
		case NL_FLOAT:
			rc = sqlite3_bind_double(st, i + 1, a->f);
			break;
		case NL_TEXT:
			rc = sqlite3_bind_text(st, i + 1, c->argtext + a->i, a->n, (void (*)(void*))-1);
			break;
		case NL_BLOB:
			rc = sqlite3_bind_blob(st, i + 1, c->argtext + a->i, a->n, (void (*)(void*))-1);
			break;
		default:
			rc = sqlite3_bind_null(st, i + 1);
		}
		if (rc != 0)
			return -rc;
	}
	return nl_batch(call);
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
// one cgo call resets the statement, binds its arguments and steps it
// until it ends or a batch of rows (NL_MAXROWS rows or NL_MAXTEXT bytes of
// text) is full, every column of every row copied into the statement's own
// C memory (allocated at Prepare and grown when a batch needs more; passed
// as an integer, so cgo checks no pointer); the row function then reads
// the batch's rows without crossing into C (a batch is read whole before
// the row function sees its first row); a longer result takes a cgo call a
// batch. No driver values, no lock, no allocation but a text column's
// string when it is not the column's last text (and, through Query, the
// boxed arguments: QueryInts takes integers unboxed). Through
// go-sqlite3's driver statements (a cgo call a bind and a column, a rows
// object and a C buffer a query, every value boxed) a tpcc-ro transaction
// spent 45,000 instructions outside sqlite3_step under callgrind, a C loop
// making the same calls 4,600; a cgo call a row 15,500; this path
// 10,600-10,900, with its integers unboxed 9,880-9,970 at load average 2-6
// (tpcc's BenchmarkCallgrindInstructions; docs/workloads/tpcc-ro.md).
//
// Values are as SQLite stores them: a column's declared type changes
// nothing (go-sqlite3's Conn.Query turns DATE, DATETIME and TIMESTAMP
// columns into times and BOOLEAN ones into booleans; a Row does not).

// sqliteStmt is a statement prepared on a connection's handle, with its
// arguments and current batch of rows in C memory.
type sqliteStmt struct {
	db   *C.sqlite3
	c    *C.nl_call // its args have room for room arguments
	room int
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
	s.c.st, s.c.ncols, s.c.nparams = st, C.sqlite3_column_count(st), C.sqlite3_bind_parameter_count(st)
	s.c.textcap, s.c.text = 1024, (*C.char)(C.malloc(1024))
	// Never NULL: an empty string is bound as text, not NULL.
	s.c.argcap, s.c.argtext = 64, (*C.char)(C.malloc(64))
	if s.c.text == nil || s.c.argtext == nil || C.nl_rows(s.c, 16) != 0 {
		s.Close()
		return nil, fmt.Errorf("preparing %q: out of C memory", query)
	}
	s.row.prev = make([]string, s.c.ncols)
	s.grow(0)
	return s, nil
}

// grow makes room in C memory for nargs arguments.
func (s *sqliteStmt) grow(nargs int) {
	size := C.size_t(max(nargs, 1)) * C.size_t(unsafe.Sizeof(C.nl_val{}))
	s.c.args = (*C.nl_val)(C.realloc(unsafe.Pointer(s.c.args), size))
	if s.c.args == nil {
		panic("sqlite statement: out of C memory")
	}
	s.room = nargs
}

// bind sets the C arguments from args; an error when one has a type
// SQLite cannot take.
func (s *sqliteStmt) bind(args []any) error {
	if len(args) > s.room {
		s.grow(len(args))
	}
	vals := unsafe.Slice(s.c.args, len(args))
	off := 0
	for i, a := range args {
		if x, ok := a.(int); ok { // the common case, its code small
			vals[i].kind, vals[i].i = C.NL_INTEGER, C.longlong(x)
		} else if off = s.bindValue(&vals[i], a, off); off < 0 {
			return fmt.Errorf("binding argument %d: a %T (sqlite takes int, int64, float64, string, []byte, bool or nil)",
				i+1, a)
		}
	}
	s.c.nargs = C.int(len(args))
	return nil
}

// bindValue sets v from a, a's text or blob copied to offset off of the
// arguments' text, and returns the offset after it; -1 when SQLite cannot
// take a's type.
func (s *sqliteStmt) bindValue(v *C.nl_val, a any, off int) int {
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
		return s.bindText(v, C.NL_TEXT, x, off)
	case []byte:
		if x == nil {
			v.kind = C.NL_NULL
			break
		}
		return s.bindText(v, C.NL_BLOB, unsafe.String(unsafe.SliceData(x), len(x)), off)
	default:
		return -1
	}
	return off
}

// bindText copies x to offset off of the arguments' text, as v of kind
// (NL_TEXT or NL_BLOB), and returns the offset after it.
func (s *sqliteStmt) bindText(v *C.nl_val, kind C.int, x string, off int) int {
	if need := C.size_t(off + len(x)); need > s.c.argcap {
		t := (*C.char)(C.realloc(unsafe.Pointer(s.c.argtext), max(need, 2*s.c.argcap)))
		if t == nil {
			panic("sqlite statement: out of C memory")
		}
		s.c.argtext, s.c.argcap = t, max(need, 2*s.c.argcap)
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(s.c.argtext)), s.c.argcap)[off:], x)
	v.kind, v.n, v.i = kind, C.int(len(x)), C.longlong(off)
	return off + len(x)
}

func (s *sqliteStmt) Query(ctx context.Context, args []any, row func(Row) error) error {
	if err := s.bind(args); err != nil {
		return err
	}
	if ctx.Done() == nil {
		return s.run(ctx, row)
	}
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
	return s.run(ctx, row)
}

// QueryInts is Query with integer arguments, unboxed (in Query's []any Go
// allocates every integer above 255), on a background context: what a
// workload's hot path asks a statement for when its arguments are
// integers.
func (s *sqliteStmt) QueryInts(args []int64, row func(Row) error) error {
	if len(args) > s.room {
		s.grow(len(args))
	}
	vals := unsafe.Slice(s.c.args, len(args))
	for i, a := range args {
		vals[i].kind, vals[i].i = C.NL_INTEGER, C.longlong(a)
	}
	s.c.nargs = C.int(len(args))
	return s.run(context.Background(), row)
}

// run runs the statement with its arguments bound and calls row for each
// row; ctx is only asked, when a step fails, whether it was cancelled.
func (s *sqliteStmt) run(ctx context.Context, row func(Row) error) error {
	s.c.keep = 0
	if row != nil {
		s.c.keep = 1
	}
	call := C.uintptr_t(uintptr(unsafe.Pointer(s.c)))
	rc := C.nl_start(call)
	for {
		if s.c.nrows > 0 && row != nil {
			if err := s.rows(row); err != nil {
				C.sqlite3_reset(s.c.st)
				return err
			}
		}
		if rc != C.NL_ROW {
			break
		}
		rc = C.nl_batch(call)
	}
	switch {
	case rc == C.NL_DONE:
		return nil
	case rc < 0:
		return fmt.Errorf("binding arguments: %w", sqliteErr(s.db, -rc))
	case rc == C.NL_NOMEM:
		C.sqlite3_reset(s.c.st)
		return fmt.Errorf("reading rows: out of C memory")
	}
	err := sqliteErr(s.db, rc)
	C.sqlite3_reset(s.c.st)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// rows calls row for each row of the batch.
func (s *sqliteStmt) rows(row func(Row) error) error {
	ncols := int(s.c.ncols)
	cols := unsafe.Slice(s.c.cols, int(s.c.nrows)*ncols)
	s.row.text = unsafe.Pointer(s.c.text)
	for range s.c.nrows {
		s.row.cols, cols = cols[:ncols:ncols], cols[ncols:]
		if err := row(&s.row); err != nil {
			return err
		}
	}
	return nil
}

func (s *sqliteStmt) Close() error {
	if s.c == nil {
		return nil
	}
	rc, db := C.sqlite3_finalize(s.c.st), s.db
	C.free(unsafe.Pointer(s.c.args))
	C.free(unsafe.Pointer(s.c.cols))
	C.free(unsafe.Pointer(s.c.text))
	C.free(unsafe.Pointer(s.c.argtext))
	C.free(unsafe.Pointer(s.c))
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

// sqliteRow is a row of the statement's batch, in its C memory; prev is
// each column's last text.
type sqliteRow struct {
	cols []C.nl_val
	text unsafe.Pointer // the batch's text
	prev []string
}

func (r *sqliteRow) Len() int        { return len(r.cols) }
func (r *sqliteRow) Null(i int) bool { return r.cols[i].kind == C.NL_NULL }

// bytes is a text or blob column's bytes in the batch's memory, valid
// until the next batch.
func (r *sqliteRow) bytes(i int) string {
	v := &r.cols[i]
	if v.n == 0 {
		return ""
	}
	return unsafe.String((*byte)(unsafe.Add(r.text, v.i)), int(v.n))
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
		// The column's last text when it is the same, as on PostgreSQL:
		// a repeated value costs a comparison, not an allocation.
		if b := r.bytes(i); b != r.prev[i] {
			r.prev[i] = strings.Clone(b)
		}
		return r.prev[i]
	}
	return ""
}
