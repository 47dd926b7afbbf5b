package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/numalab/numalab/internal/engine"
)

// ErrPostgresFile refuses --db with PostgreSQL.
var ErrPostgresFile = errors.New("-db: a file is for --engine sqlite or duckdb (PostgreSQL and MariaDB take --dsn)")

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
	return Bad("db", path, fmt.Sprintf("is %s database, not %s: give --engine %s, or a --db file that does not exist to load a new %s one",
		engineArticle[got], engineTitle[name], got, engineTitle[name]))
}

var (
	engineTitle   = map[string]string{"sqlite": "SQLite", "duckdb": "DuckDB"}
	engineArticle = map[string]string{"sqlite": "an SQLite", "duckdb": "a DuckDB"}
)

// DB are --engine, --db and --dsn: the database that a command reads, a
// file (SQLite, DuckDB) or a PostgreSQL server.
type DB struct {
	fs                *flag.FlagSet
	Engine, Path, DSN *string
}

// AddDB defines the three flags on fs; path is --db's default.
func AddDB(fs *flag.FlagSet, path, pathUsage, dsnUsage string) *DB {
	return &DB{fs: fs,
		Engine: fs.String("engine", "", "sqlite, duckdb, postgres or mariadb (default: from the --db file's first bytes; postgres with --dsn)"),
		Path:   fs.String("db", path, pathUsage),
		DSN:    fs.String("dsn", "", dsnUsage),
	}
}

// Resolve checks the three flags together and names the engine: --engine,
// else postgres with --dsn, else the one the --db file's first bytes say
// (engine.FileEngine). A --db file must exist.
func (d *DB) Resolve() (string, Errs) {
	var errs Errs
	name, path, dsn := *d.Engine, *d.Path, *d.DSN
	file := path != "" && (dsn == "" || Given(d.fs, "db"))
	switch {
	case (name == "postgres" || name == "mariadb") && Given(d.fs, "db"):
		errs = append(errs, ErrPostgresFile)
	case file && dsn != "":
		errs = append(errs, errors.New("-db and -dsn: give one database, not both"))
	case !file && dsn == "":
		errs = append(errs, errors.New("give --db FILE (SQLite, DuckDB) or --dsn DSN (PostgreSQL)"))
	}
	switch name {
	case "":
		if dsn != "" {
			return "postgres", errs
		}
	case "sqlite", "duckdb":
		errs.BadIf(dsn != "", "engine", name, "reads a file: give --db FILE, not --dsn")
		if err := CheckFileEngine(name, path); file && err != nil {
			errs = append(errs, err)
		}
	case "postgres", "mariadb":
		errs.BadIf(dsn == "", "engine", name, "reads a server: give --dsn DSN")
		return name, errs
	default:
		errs.BadIf(true, "engine", name, "is not an engine (want sqlite, duckdb, postgres or mariadb)")
		return name, errs
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
		errs = append(errs, fmt.Errorf("-db: %w", err))
	case name == "":
		name = got
	}
	return name, errs
}

// ConnectTimeout defines --connect-timeout, one flag for every command
// that connects to a server: how long connecting may take. Its default,
// 0, is engine.DefaultConnectTimeout.
func ConnectTimeout(fs *flag.FlagSet) *time.Duration {
	return RangedDuration(fs, "connect-timeout", 0, 100*time.Millisecond, time.Hour, connectTimeoutUsage)
}

var connectTimeoutUsage = fmt.Sprintf("how long connecting to a server (--dsn's or numalab's own) may take before numalab gives up, naming it, 100ms to 1h (default %v)", engine.DefaultConnectTimeout)

// ConnectTimeoutSetting is --connect-timeout's setting, with ConnectTimeout's
// flag, left out of argv when not given.
func ConnectTimeoutSetting(p *time.Duration) Setting {
	return Optional(DurationIn("connect-timeout", p, 100*time.Millisecond, time.Hour)).Flag(connectTimeoutUsage)
}
