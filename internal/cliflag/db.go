package cliflag

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/setting"
)

// ErrPostgresFile refuses --db with PostgreSQL.
var ErrPostgresFile = setting.New("db",
	"a file is for --engine "+engine.List(engine.IsEmbedded)+" ("+engine.Titles(engine.IsServer)+" take --dsn)")

// CheckFileEngine refuses a --db file whose first bytes say it belongs to
// another engine than name: opened by the wrong engine it fails late and
// obscurely (DuckDB tries to download its SQLite extension). A file that
// is missing, or of neither engine, passes: the caller loads it or
// refuses it with its own reason.
func CheckFileEngine(name, path string) error {
	got, err := engine.FileEngine(path)
	if err != nil || got == name {
		return nil
	}
	g, _ := engine.Lookup(got)
	w, _ := engine.Lookup(name)
	return Bad("db", path,
		fmt.Sprintf("is %s database, not %s: give --engine %s, or a --db file that does not exist to load a new %s one",
			g.Article, w.Title, got, w.Title))
}

// DB are --engine, --db and --dsn: the database that a command reads, a
// file (SQLite, DuckDB) or a PostgreSQL server.
type DB struct {
	fs                *flag.FlagSet
	Engine, Path, DSN *string
}

// AddDB defines the three flags on fs; path is --db's default.
func AddDB(fs *flag.FlagSet, path, pathUsage, dsnUsage string) *DB {
	return &DB{fs: fs,
		Engine: fs.String("engine", "",
			engine.List(nil)+" (default: from the --db file's first bytes; "+engine.DefaultServer+" with --dsn)"),
		Path: fs.String("db", path, pathUsage),
		DSN:  fs.String("dsn", "", dsnUsage),
	}
}

// Resolve checks the three flags together and names the engine: --engine,
// else postgres with --dsn, else the one the --db file's first bytes say
// (engine.FileEngine). A --db file must exist.
func (d *DB) Resolve() (string, Errs) {
	var errs Errs
	name, path, dsn := *d.Engine, *d.Path, *d.DSN
	spec, known := engine.Lookup(name)
	file := path != "" && (dsn == "" || Given(d.fs, "db"))
	switch {
	case spec.Server && Given(d.fs, "db"):
		errs = append(errs, ErrPostgresFile)
	case file && dsn != "":
		errs = append(errs, setting.Together([]string{"db", "dsn"}, "give one database, not both"))
	case !file && dsn == "":
		errs = append(errs, errors.New("give --db FILE (SQLite, DuckDB) or --dsn DSN (PostgreSQL)"))
	}
	switch {
	case name == "":
		if dsn != "" {
			return engine.DefaultServer, errs
		}
	case !known:
		errs.BadIf(true, "engine", name, "is not an engine (want "+engine.List(nil)+")")
		return name, errs
	case spec.Server:
		errs.BadIf(dsn == "", "engine", name, "reads a server: give --dsn DSN")
		return name, errs
	default:
		errs.BadIf(dsn != "", "engine", name, "reads a file: give --db FILE, not --dsn")
		if err := CheckFileEngine(name, path); file && err != nil {
			errs = append(errs, err)
		}
	}
	if !file {
		return name, errs
	}
	got, err := engine.FileEngine(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		errs.BadIf(true, "db", path, "is no such database file: check the path")
	case errors.Is(err, engine.ErrUnknownFile):
		errs.BadIf(name == "", "db", path, "is neither SQLite nor DuckDB by its first bytes: give --engine if it is one")
	case err != nil:
		errs = append(errs, setting.Wrap("db", err))
	case name == "":
		name = got
	}
	return name, errs
}

// ConnectTimeout defines --connect-timeout, one flag for every command
// that connects to a server: how long connecting may take. Its default,
// 0, is the engine's: engine.DefaultConnectTimeout for a --dsn server,
// engine.OwnServerConnectTimeout for numalab's own.
func ConnectTimeout(fs *flag.FlagSet) *time.Duration {
	return RangedDuration(fs, "connect-timeout", 0, 100*time.Millisecond, time.Hour, connectTimeoutUsage)
}

var connectTimeoutUsage = fmt.Sprintf("how long connecting to a server (--dsn's or numalab's own) "+
	"may take before numalab gives up, naming it, 100ms to 1h (default %v for a --dsn server, %v for numalab's own)",
	engine.DefaultConnectTimeout, engine.OwnServerConnectTimeout)

// ConnectTimeoutSetting is --connect-timeout's setting, with ConnectTimeout's
// flag, left out of argv when not given.
func ConnectTimeoutSetting(p *time.Duration) Setting {
	return Optional(DurationIn("connect-timeout", p, 100*time.Millisecond, time.Hour)).Flag(connectTimeoutUsage)
}

// EngineSettings are --engine, --dsn, --connect-timeout and --db as
// settings of a command that loads its own data (run tpch, run report),
// with their flags (engines and dbDefault as EngineUsage and DBUsage take
// them), each checked against the registry as it is set: --engine an
// engine; --dsn only for a server engine, --db only for an embedded one
// (--engine is set before them).
func EngineSettings(name, dsn *string, timeout *time.Duration, db *string, engines, dbDefault string) Settings {
	spec := func() engine.Spec { s, _ := engine.Lookup(*name); return s }
	return Settings{
		Validated(Str("engine", name), func(v string) error {
			if _, ok := engine.Lookup(v); !ok {
				return Bad("engine", v, "is not an engine: want "+engine.List(nil))
			}
			return nil
		}).Flag(EngineUsage(engines)),
		Validated(DSN(dsn), func(v string) error {
			if v != "" && !spec().Server {
				return setting.Errorf("dsn",
					"a DSN is for --engine %s (the %s data is a file: use --db)", engine.List(engine.IsServer), *name)
			}
			return nil
		}).Flag(DSNUsage),
		ConnectTimeoutSetting(timeout),
		Validated(Optional(Str("db", db)), func(v string) error {
			if v != "" && spec().Server {
				return ErrPostgresFile
			}
			return nil
		}).Flag(DBUsage(dbDefault)),
	}
}

// EngineUsage is --engine's help: the engines a command takes ("" for
// every engine of the registry).
func EngineUsage(engines string) string { return "engine: " + cmp.Or(engines, engine.List(nil)) }

// DSNUsage is --dsn's help in every command that opens its own database.
var DSNUsage = "for " + engine.List(engine.IsServer) +
	" (mariadb: MySQL 8 too), the server's `DSN` (default: a throwaway server numalab starts and stops)"

// DBUsage is --db's help, the file named def by default.
func DBUsage(def string) string {
	return "database `file` for " + engine.List(engine.IsEmbedded) + " (default " + def + ")"
}

// EnginesDOP lists the engines for a command with --dop, saying which
// run a query on one thread only.
func EnginesDOP() string {
	return engine.List(nil) + " (" + engine.List(func(s engine.Spec) bool { return !s.Parallel.Query }) +
		": one thread a query, --dop 1)"
}

// DOPs is --dop, the degrees of parallelism to sweep, each checked
// against the engine spec gives (read when the flag is set) and this
// machine's CPUs.
func DOPs(p *[]int, spec func() engine.Spec) Setting {
	return Validated(Ints("dop", p), func(v string) error {
		if err := spec().CheckDOP(*p, runtime.NumCPU()); err != nil {
			return Bad("dop", v, err.Error())
		}
		return nil
	})
}
