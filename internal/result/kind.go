package result

import (
	"encoding/json"
	"fmt"
)

// Run kinds: the command that stored a run.
const (
	RunProbeMem = "probe-mem" // numalab probe mem
	RunProbeIO  = "probe-io"  // numalab probe io
	RunOLTP     = "oltp"      // numalab run oltp
	RunSQL      = "sql"       // numalab run sql: the user's pgbench scripts
	RunQueries  = "report"    // numalab run report: transtats reporting queries
)

// Kind names one kind of stored item; T is the Go type of its body. Every
// kind is declared once, as a constant next to its type (here, or in the
// package that owns the type), and both the command that stores an item and
// the code that reads it use that constant: the compiler, not a string,
// ties a reader to what was written.
//
// The name is the item's kind in the store; changing it or T's JSON
// breaks every stored run of that kind.
type Kind[T any] string

// Item kinds whose bodies are types of this package.
const (
	KindCell        Kind[Cell]        = "drive.Cell"            // one OLTP cell (numalab run oltp)
	KindBulkLoad    Kind[BulkLoad]    = "transtats.Load"        // how transtats data got into the engine
	KindQueryCell   Kind[QueryCell]   = "transtats.QueryCell"   // one reporting cell (numalab run report)
	KindPlanFinding Kind[PlanFinding] = "transtats.PlanFinding" // a plan that changed
	KindIOPattern   Kind[IOPattern]   = "result.IOPattern"      // one storage pattern, as soon as it is measured
	KindIOProbe     Kind[IOProbe]     = "result.IOProbe"        // the whole storage probe
)

// Entry is an item on its way to the store: a body with its kind. Only
// Kind.Of makes one, so a body is always stored under its own kind.
type Entry struct {
	kind string
	body any
}

// Of makes v an entry of kind k.
func (k Kind[T]) Of(v T) Entry { return Entry{kind: string(k), body: v} }

// Kind is the entry's kind as stored.
func (e Entry) Kind() string { return e.kind }

// Body is what is stored as the entry's JSON.
func (e Entry) Body() any { return e.body }

// All decodes every item of kind k in r, in the order they were stored.
func (k Kind[T]) All(r *Run) ([]T, error) {
	var out []T
	for _, it := range r.Results {
		if it.Kind != string(k) {
			continue
		}
		var v T
		if err := json.Unmarshal(it.Body, &v); err != nil {
			return nil, fmt.Errorf("reading item %d (%s) of run %d: %w", it.Seq, k, r.ID, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// Last decodes the last item of kind k in r; nil when r has none.
func (k Kind[T]) Last(r *Run) (*T, error) {
	all, err := k.All(r)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	return &all[len(all)-1], nil
}

// Entry is the item as an entry again, to store it elsewhere as it was read
// (copying runs between stores).
func (it Item) Entry() Entry { return Entry{kind: it.Kind, body: it.Body} }
