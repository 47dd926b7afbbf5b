package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/setting"
	"github.com/numalab/numalab/internal/store"
)

// Store adds --store to a command that reads or writes runs. Its default
// is DefaultStore; --help shows it without its password.
func Store(fs *flag.FlagSet) *string {
	v := storeValue(DefaultStore())
	fs.Var(&v, "store", "results `store`: an SQLite file (created if missing) or a postgres:// URL that many "+
		"hosts share (schema numalab_results); $NUMALAB_STORE sets the default")
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

// CheckFileFlags refuses a file flag of fs, --store or --db, whose value
// (given, or --store's default from $NUMALAB_STORE) looks like a
// connection string (result.LooksLikeDSN), before anything opens or
// creates a file by that name; the value is quoted without its password.
// Parse calls it, so every command's flags pass through it.
func CheckFileFlags(fs *flag.FlagSet) error {
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		var values []string
		switch v := unwrap(f.Value).(type) {
		case *storeValue:
			values = []string{string(*v)}
		case *storeList:
			values = *v
		default:
			if f.Name != "db" {
				return
			}
			values = []string{v.String()}
		}
		for _, v := range values {
			if err := CheckFileName(f.Name, v); err != nil {
				if f.Name == "store" && !Given(fs, "store") {
					err = fmt.Errorf("$NUMALAB_STORE (the default --store): %w", err)
				}
				errs = append(errs, err)
			}
		}
	})
	return errors.Join(errs...)
}

// CheckFileName refuses value, given to the file flag name (store, db),
// when it looks like a connection string: a PostgreSQL URL is a store,
// anything else of the kind no file is ever named after.
func CheckFileName(name, value string) error {
	switch {
	case name == "store":
		if err := store.CheckTarget(value); err != nil {
			return setting.Wrap("store", err)
		}
	case result.LooksLikeDSN(value):
		return Bad(name, result.Redact(value),
			"looks like a connection string, not a file; a server's database is given as --dsn, with --engine "+
				engine.List(engine.IsServer))
	}
	return nil
}

// unwrap is a flag's own value, as ParseChecked wraps it during the parse.
func unwrap(v flag.Value) flag.Value {
	switch c := v.(type) {
	case checked:
		return c.Value
	case checkedBool:
		return c.Value
	}
	return v
}
