package engine

/*
typedef struct sqlite3 sqlite3;
int sqlite3_auto_extension(void (*)(void));

// A connection opened on this thread while nl_conn_want is set is
// remembered (nl_conn_db): SQLite calls every automatic extension's entry
// point with each new connection's handle, which go-sqlite3 keeps to
// itself.
static __thread int nl_conn_want;
static __thread sqlite3 *nl_conn_db;

static int nl_conn_entry(sqlite3 *db, char **err, const void *api) {
	if (nl_conn_want) {
		nl_conn_db = db;
		nl_conn_want = 0;
	}
	return 0;
}

static int nl_conn_register(void) {
	return sqlite3_auto_extension((void (*)(void))nl_conn_entry);
}

static void nl_conn_expect(void) { nl_conn_want = 1; nl_conn_db = 0; }

// nl_conn_take returns the connection remembered on this thread (NULL if
// none) and forgets it.
static sqlite3 *nl_conn_take(void) {
	sqlite3 *db = nl_conn_db;
	nl_conn_want = 0;
	nl_conn_db = 0;
	return db;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/mattn/go-sqlite3"
)

// A SQLite connection's C handle, taken from SQLite's public
// automatic-extension hook as go-sqlite3 opens the connection: the image
// path (sqlite_image.go) deserializes onto it and prepared statements
// (sqlite_stmt.go) run on it. No driver internals are touched.

// sqliteHandle is a connection's sqlite3 handle, valid until go-sqlite3
// closes the connection.
type sqliteHandle struct{ db *C.sqlite3 }

var (
	registerConnHook sync.Once
	connHookErr      error
)

// openWithHandle calls open, which opens one go-sqlite3 connection on the
// calling goroutine, and returns the connection with its handle.
func openWithHandle(open func() (*sqlite3.SQLiteConn, error)) (*sqlite3.SQLiteConn, sqliteHandle, error) {
	registerConnHook.Do(func() {
		if rc := C.nl_conn_register(); rc != 0 {
			connHookErr = fmt.Errorf("registering the sqlite connection hook: SQLite error %d", int(rc))
		}
	})
	if connHookErr != nil {
		return nil, sqliteHandle{}, connHookErr
	}
	// The hook remembers the connection in the opening thread's storage.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	C.nl_conn_expect()
	c, err := open()
	db := C.nl_conn_take()
	if err != nil {
		return nil, sqliteHandle{}, err
	}
	if db == nil {
		c.Close()
		return nil, sqliteHandle{}, errors.New(
			"opening a sqlite connection: SQLite did not hand over its handle (automatic extensions off?)")
	}
	return c, sqliteHandle{db}, nil
}
