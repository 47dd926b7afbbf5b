package eval

/*
typedef struct sqlite3 sqlite3;
int sqlite3_deserialize(sqlite3*, const char*, unsigned char*, long long, long long, unsigned);

// nl_deserialize makes p (n bytes, owned by the caller and kept alive
// until the connection closes) the connection's main database, read-only
// (SQLITE_DESERIALIZE_READONLY = 4): SQLite reads the pages in place.
static int nl_deserialize(void *db, void *p, long long n) {
	return sqlite3_deserialize((sqlite3*)db, "main", (unsigned char*)p, n, n, 4);
}
*/
import "C"

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/mattn/go-sqlite3"
)

// deserialize makes mem the main database of c, read in place. The go-sqlite3
// driver's own Deserialize copies the image into memory SQLite allocates,
// whose page size the caller cannot choose, so the connection's handle is
// taken from the driver's unexported field and sqlite3_deserialize called on
// it directly.
func deserialize(c *sqlite3.SQLiteConn, mem []byte) error {
	f := reflect.ValueOf(c).Elem().FieldByName("db")
	if !f.IsValid() || f.Kind() != reflect.Pointer {
		return fmt.Errorf("deserializing a database image: this go-sqlite3 has no connection handle where numalab expects one (field db)")
	}
	if rc := C.nl_deserialize(f.UnsafePointer(), unsafe.Pointer(&mem[0]), C.longlong(len(mem))); rc != 0 {
		return fmt.Errorf("deserializing a database image of %d bytes: SQLite error %d", len(mem), int(rc))
	}
	return nil
}
