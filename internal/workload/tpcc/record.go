package tpcc

import (
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
)

// KindLoad is the stored item kind of a LoadRecord: an OLTP run stores one
// after each prewarm, the last one holding every prewarm so far.
const KindLoad result.Kind[LoadRecord] = "tpcc.Load"

// LoadRecord is what an OLTP run stores about the TPC-C database it used.
type LoadRecord struct {
	Engine     string          `json:"engine"`
	Where      string          `json:"where"`  // file, or server (password hidden)
	Loaded     bool            `json:"loaded"` // false: an existing database was reused
	Stats      *LoadStats      `json:"stats,omitempty"`
	RowsPerSec float64         `json:"rows_per_s,omitempty"`
	Meta       Meta            `json:"meta"`
	Prewarm    []PrewarmRecord `json:"prewarm"`
}

// PrewarmRecord says where the data was put and where it was found.
type PrewarmRecord struct {
	DataNode int          `json:"data_node"` // -1: read from wherever numalab ran
	Stats    PrewarmStats `json:"stats"`
	// Pages are the SQLite file's page-cache pages by node; PostgreSQL's
	// shared memory is in Stats.Placement; DuckDB's cannot be located.
	Pages   *place.PageSummary `json:"pages,omitempty"`
	Seconds float64            `json:"seconds"`
}
