package result

import (
	"encoding/json"
	"time"
)

// Run is what one numalab command measured, with everything needed to trace
// a number back to what produced it.
type Run struct {
	ID       int64           `json:"id"`
	Kind     string          `json:"kind"`    // "probe-mem", "oltp", "report", "topo", ...
	Command  string          `json:"command"` // the command line, passwords removed
	Config   json.RawMessage `json:"config"`  // the command's full configuration as JSON
	Version  string          `json:"version"` // numalab's version
	Host     string          `json:"host"`
	Machine  *Topology       `json:"machine,omitempty"`
	Started  time.Time       `json:"started"`
	Finished time.Time       `json:"finished,omitzero"`
	// Received is when a PostgreSQL store first stored the run, by the
	// server's clock (kept by copies): Started is the writing host's, so
	// the two tell a host's clock from the store's. Zero for a run first
	// stored in SQLite (one host's clock) or before stores kept it.
	Received time.Time `json:"received,omitzero"`
	// Status is "running" while the command runs, then "complete",
	// "interrupted" (Ctrl-C: what was measured is kept) or "failed"; a
	// running run whose process is gone reads back as "abandoned".
	Status   string `json:"status"`
	Headline string `json:"headline,omitempty"` // one-line figure for listings, with units
	Error    string `json:"error,omitempty"`
	Results  []Item `json:"results,omitempty"`
}

// Run statuses.
const (
	StatusRunning     = "running"
	StatusComplete    = "complete"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
	StatusAbandoned   = "abandoned"
)

// Item is one stored result of a run, in the order it was measured: a
// latency ladder, a cell, a matrix. Kind names the Go type in Body.
type Item struct {
	Seq  int             `json:"seq"`
	Kind string          `json:"kind"`
	Body json.RawMessage `json:"body"`
}

// MachineRun is the run whose recorded topology stands for the machine of
// runs: the memory probe's, else the earliest run that recorded one; nil
// when none did.
func MachineRun(runs []*Run) *Run {
	var pick *Run
	for _, r := range runs {
		if r.Machine == nil {
			continue
		}
		if r.Kind == RunProbeMem {
			return r
		}
		if pick == nil || r.ID < pick.ID {
			pick = r
		}
	}
	return pick
}
