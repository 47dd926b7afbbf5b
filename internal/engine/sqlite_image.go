package engine

/*
typedef struct sqlite3 sqlite3;
int sqlite3_deserialize(sqlite3*, const char*, unsigned char*, long long, long long, unsigned);

// nl_image_attach makes p (n bytes, owned by the caller and kept alive
// until the connection closes) db's main database, read-only
// (SQLITE_DESERIALIZE_READONLY = 4): SQLite reads the pages in place.
static int nl_image_attach(sqlite3 *db, void *p, long long n) {
	return sqlite3_deserialize(db, "main", (unsigned char*)p, n, n, 4);
}
*/
import "C"

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"unsafe"

	"github.com/mattn/go-sqlite3"
)

// The SQLite image hook: a SQLite database file's bytes that the caller
// holds in memory of its own choosing (its page size, its node) opened as
// an Engine whose connections read those bytes in place. go-sqlite3's
// own Deserialize copies the image into memory SQLite allocates, whose
// page size the caller cannot choose; here each connection's handle comes
// from SQLite's public automatic-extension hook (sqlite_handle.go) and
// sqlite3_deserialize is called on it, so no driver internals are touched.

// OpenSQLiteImage opens the SQLite database image mem, read-only and in
// place, as an Engine of the "sqlite" dialect: DB and every connection
// from Connect read mem's pages where they are (mmap_size covering it), not
// a copy. The caller keeps mem unchanged and alive until the engine and
// every connection are closed. It refuses an empty image; Bulk refuses to
// write, Prewarm has nothing to read.
func OpenSQLiteImage(mem []byte) (Engine, error) {
	if len(mem) == 0 {
		return nil, errors.New("opening a sqlite image: the image is empty (expected a SQLite database file's bytes)")
	}
	e := &sqliteImage{sqliteEngine: &sqliteEngine{}, mem: mem}
	e.db = sql.OpenDB(imageConnector{mem})
	e.db.SetMaxIdleConns(2)
	// A first query proves the image is a database now, not at a
	// stream's first transaction.
	var n int
	if err := e.db.QueryRow("SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
		e.db.Close()
		return nil, fmt.Errorf("opening a sqlite image of %d bytes: %w (expected a SQLite database file's bytes)",
			len(mem), err)
	}
	return e, nil
}

// sqliteImage is SQLite over a caller's image: sqliteEngine's methods but
// for where the pages come from.
type sqliteImage struct {
	*sqliteEngine
	mem []byte
}

var _ Engine = (*sqliteImage)(nil)

// Connect opens one stream's connection over the image.
func (e *sqliteImage) Connect(ctx context.Context) (Conn, error) {
	c, h, err := openImageConn(e.mem)
	if err != nil {
		return nil, err
	}
	return &sqliteConn{c: c, h: h}, nil
}

// Bulk refuses: the image is read-only.
func (e *sqliteImage) Bulk(ctx context.Context, table string, columns []string) (Bulk, error) {
	return nil, fmt.Errorf(
		"loading %s into a sqlite image: the image is read-only (load a file, then read it into memory)", table)
}

// Prewarm reads nothing: the image is in memory already.
func (e *sqliteImage) Prewarm(ctx context.Context) (PrewarmStats, error) {
	return PrewarmStats{Bytes: int64(len(e.mem)), Objects: 1, Method: "none: an image in memory"}, nil
}

// imageConnector opens DB's connections over the image.
type imageConnector struct{ mem []byte }

func (c imageConnector) Connect(context.Context) (driver.Conn, error) {
	dc, _, err := openImageConn(c.mem)
	if err != nil {
		return nil, err
	}
	return dc, nil
}
func (c imageConnector) Driver() driver.Driver { return &sqlite3.SQLiteDriver{} }

// openImageConn opens an in-memory connection and makes mem its main
// database, read in place: mmap_size covers mem, so pages are read where
// they are rather than copied to SQLite's cache.
func openImageConn(mem []byte) (*sqlite3.SQLiteConn, sqliteHandle, error) {
	c, h, err := openWithHandle(func() (*sqlite3.SQLiteConn, error) {
		dc, err := (&sqlite3.SQLiteDriver{}).Open(":memory:")
		if err != nil {
			return nil, fmt.Errorf("opening an in-memory SQLite connection: %w", err)
		}
		return dc.(*sqlite3.SQLiteConn), nil
	})
	if err != nil {
		return nil, h, fmt.Errorf("opening a sqlite image: %w", err)
	}
	if rc := C.nl_image_attach(h.db, unsafe.Pointer(unsafe.SliceData(mem)), C.longlong(len(mem))); rc != 0 {
		c.Close()
		return nil, h, fmt.Errorf("opening a sqlite image of %d bytes: SQLite error %d", len(mem), int(rc))
	}
	if _, err := c.Exec(fmt.Sprintf("PRAGMA mmap_size = %d", len(mem)), nil); err != nil {
		c.Close()
		return nil, h, fmt.Errorf("opening a sqlite image: setting mmap_size: %w", err)
	}
	return c, h, nil
}
