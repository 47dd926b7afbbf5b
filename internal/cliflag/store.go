package cliflag

import (
	"errors"
	"flag"
	"os"
	"strings"

	"github.com/numalab/numalab/internal/result"
)

// Store adds --store to a command that reads or writes runs. Its default
// is DefaultStore; --help shows it without its password.
func Store(fs *flag.FlagSet) *string {
	v := storeValue(DefaultStore())
	fs.Var(&v, "store", "results `store`: an SQLite file (created if missing) or a postgres:// URL that many hosts share (schema numalab_results); $NUMALAB_STORE sets the default")
	return (*string)(&v)
}

// DefaultStore is $NUMALAB_STORE, else numalab.db.
func DefaultStore() string {
	if v := os.Getenv("NUMALAB_STORE"); v != "" {
		return v
	}
	return "numalab.db"
}

// storeValue is a store flag's value, printed without its password.
type storeValue string

func (v *storeValue) String() string {
	if v == nil {
		return ""
	}
	return result.Redact(string(*v))
}

func (v *storeValue) Set(s string) error {
	*v = storeValue(s)
	return nil
}

// Stores adds --store to a command that reads several stores: one a
// flag, none given meaning DefaultStore.
func Stores(fs *flag.FlagSet, usage string) *[]string {
	var v storeList
	fs.Var(&v, "store", usage)
	return (*[]string)(&v)
}

type storeList []string

func (s *storeList) String() string { return strings.Join(*s, ",") }

func (s *storeList) Set(v string) error {
	if v == "" {
		return errors.New("empty store")
	}
	*s = append(*s, v)
	return nil
}
