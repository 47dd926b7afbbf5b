package transtats

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Sizes and defaults.
const (
	DefaultRows = 5_000_000   // rows of tran_stats when not told
	MaxRows     = 200_000_000 // the most Load accepts
	DefaultRate = 5000        // rows per second of tran_begin (R)
)

// Start is tran_begin of the first second: the fixed start time of the data.
var Start = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// TimeFormat is how times are written as text (SQLite stores them so; the
// text sorts in time order).
const TimeFormat = "2006-01-02 15:04:05"

// The distinct values of the six dimension columns, in id order (id 1 is the
// first). Row i takes server_config i mod 40, users i mod 5, cpus i mod 8,
// thread_name i mod 100, tran_type and tran_status i mod 3.
var (
	serverConfigs = func() []string {
		s := make([]string, 40)
		for k := range s {
			s[k] = fmt.Sprintf("X580 G%02d", k)
		}
		return s
	}()
	threadNames = func() []string {
		s := make([]string, 100)
		for k := range s {
			s[k] = "VC" + strconv.Itoa(k)
		}
		return s
	}()
	tranTypes    = []string{"READ-ONLY", "WRITE-ONLY", "READ-WRITE"}
	tranStatuses = []string{"SUCCESS", "FAILURE", "ROLLBACK"}
	usersValues  = []int64{10, 20, 30, 40, 50}
	cpusValues   = []int64{10, 20, 30, 40, 50, 60, 70, 80}
	// filler is 'abc' padded with spaces to 100 characters.
	filler = "abc" + strings.Repeat(" ", 97)
)

// DimensionRows is the row count of dimension, the cross join of the six
// dimension tables: 40 × 100 × 3 × 3 × 5 × 8.
var DimensionRows = int64(
	len(serverConfigs) * len(threadNames) * len(tranTypes) * len(tranStatuses) * len(usersValues) * len(cpusValues))

// Dim is one dimension table: its name, its id and value columns, and its
// values in id order.
type Dim struct {
	Table, IDColumn, Column string
	Text                    []string // for a text column
	Ints                    []int64  // for an integer column
}

// Len is the number of distinct values.
func (d Dim) Len() int { return len(d.Text) + len(d.Ints) }

// Dims are the six dimension tables, in the order of dimension's columns.
func Dims() []Dim {
	return []Dim{
		{Table: "dim_server_config", IDColumn: "server_config_id", Column: "server_config", Text: serverConfigs},
		{Table: "dim_thread_name", IDColumn: "thread_name_id", Column: "thread_name", Text: threadNames},
		{Table: "dim_tran_type", IDColumn: "tran_type_id", Column: "tran_type", Text: tranTypes},
		{Table: "dim_tran_status", IDColumn: "tran_status_id", Column: "tran_status", Text: tranStatuses},
		{Table: "dim_users", IDColumn: "users_id", Column: "users", Ints: usersValues},
		{Table: "dim_cpus", IDColumn: "cpus_id", Column: "cpus", Ints: cpusValues},
	}
}

// Row is row i of tran_stats. Times are whole seconds after Start.
type Row struct {
	ServerConfig  string
	Users, CPUs   int64
	ThreadName    string
	TranCount     int64
	TranType      string
	TranStatus    string
	Begin, End    int64 // seconds after Start
	ResultsetSize int64
	Filler        string
}

// RowAt returns row i (1-based) of a table loaded at rate rows per second.
// It is a pure function of i and rate: any two loads hold the same rows.
func RowAt(i, rate int64) Row {
	begin := i / rate
	return Row{
		ServerConfig:  serverConfigs[i%40],
		Users:         (i%5 + 1) * 10,
		CPUs:          (i%8 + 1) * 10,
		ThreadName:    threadNames[i%100],
		TranCount:     i,
		TranType:      tranTypes[i%3],
		TranStatus:    tranStatuses[i%3],
		Begin:         begin,
		End:           begin + i%50,
		ResultsetSize: i % 100,
		Filler:        filler,
	}
}

// TimeAt is the time sec seconds after Start.
func TimeAt(sec int64) time.Time { return Start.Add(time.Duration(sec) * time.Second) }

// LastSecond is the last tran_begin (in seconds after Start) of n rows at
// rate: row n's. The first is row 1's, 1/rate (0 unless rate is 1).
func LastSecond(n, rate int64) int64 { return n / rate }

// timeText formats seconds after Start as text, caching the last few
// seconds: a loader asks for the same ~50 seconds over and over.
type timeText struct {
	secs  [64]int64
	texts [64]string
}

func newTimeText() *timeText {
	t := &timeText{}
	for k := range t.secs {
		t.secs[k] = -1
	}
	return t
}

func (t *timeText) at(sec int64) string {
	k := sec & 63
	if t.secs[k] != sec {
		t.secs[k] = sec
		t.texts[k] = TimeAt(sec).Format(TimeFormat)
	}
	return t.texts[k]
}

// CheckSize checks a row count and rate, saying what would work instead.
func CheckSize(rows, rate int64) error {
	if rows < 1 || rows > MaxRows {
		return fmt.Errorf("%d rows is not between 1 and %d (try %d)", rows, MaxRows, DefaultRows)
	}
	if rate < 1 {
		return fmt.Errorf("%d rows per second is not a positive rate (try %d)", rate, DefaultRate)
	}
	return nil
}
