package sqlscript

import (
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/pgscript"
)

// dialect is how a script binds a parameter on its engine, and which
// errors are worth retrying the transaction for (a serialization failure
// or a deadlock): both as the engine's SQL spells them.
type dialect struct {
	placeholders pgscript.Placeholders
	retryable    func(error) bool
}

// dialectOf is the engine named name's registry entry and dialect; ok
// false for an engine run sql does not know.
func dialectOf(name string) (engine.Spec, dialect, bool) {
	spec, ok := engine.Lookup(name)
	if !ok || spec.SQL == nil {
		return spec, dialect{}, false
	}
	d := dialect{placeholders: pgscript.Question, retryable: spec.SQL.Retryable}
	if spec.SQL.Numbered() {
		d.placeholders = pgscript.Dollar
	}
	return spec, d, true
}

// Engines lists the engines run sql runs on.
func Engines() string {
	return engine.List(func(s engine.Spec) bool { return s.SQL != nil })
}
