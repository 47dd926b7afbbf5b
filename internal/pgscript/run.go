package pgscript

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Conn is what the interpreter needs of a connection; numalab's
// engine.Conn is one. Query calls row once per result row; the slice may
// be reused by the next row.
type Conn interface {
	Exec(ctx context.Context, query string, args ...any) error
	Query(ctx context.Context, query string, args []any, row func(vals []any) error) error
}

// Placeholders is how an engine writes a bound parameter in SQL.
type Placeholders int

const (
	// Dollar numbers parameters, $1, $2, ... (PostgreSQL, DuckDB); a
	// variable used twice is one parameter.
	Dollar Placeholders = iota
	// Question writes each parameter ? (SQLite, MariaDB); a variable used
	// twice is bound twice.
	Question
)

// Options configure a Set's clients.
type Options struct {
	// Placeholders is the engine's parameter style.
	Placeholders Placeholders
	// Seed seeds every client's generator (with its id) and is
	// :random_seed; :default_seed, the seed of hash and permute, is
	// derived from it.
	Seed uint64
	// Round, above 0, is mixed into every client's generator (not into
	// :default_seed): run sql numbers its cells so, and each cell draws
	// apart from the others, the same again when the run is repeated.
	Round uint64
	// Scale is :scale; 0 means 1.
	Scale int64
	// Defines are variables set before the first transaction
	// (--define NAME=VALUE), typed as ParseDefine says. They override
	// :scale, :random_seed and :default_seed, not :client_id.
	Defines map[string]string
	// MaxTries is how many times a transaction is tried when it fails
	// with an error Retryable accepts (pgbench --max-tries); 0 means 1.
	MaxTries int
	// Retryable says which errors are serialization failures or
	// deadlocks, worth retrying the transaction for. Nil: none.
	Retryable func(error) bool
	// Sleep sleeps for \sleep; nil sleeps with a timer, ending early with
	// ctx's error when ctx is done.
	Sleep func(ctx context.Context, d time.Duration) error
	// Observe, if set, is told each command's end: the script's index in
	// the Set, the command's index in the script, how long it took and
	// its error (per-command latencies, as pgbench -r).
	Observe func(script, command int, elapsed time.Duration, err error)
}

// Weighted is a script and its weight in a Set.
type Weighted struct {
	Script *Script
	Weight int
}

// Set is the scripts a run chooses from, prepared for one engine:
// placeholders written, variables numbered across the scripts.
type Set struct {
	opt     Options
	scripts []prepared
	total   int64
	names   []string // variables, by global number
	index   map[string]int
	initial []value // every client's variables before its first transaction, but client_id
	clientV int     // client_id's number
}

type prepared struct {
	s      *Script
	weight int64
	global []int    // the script's variable numbers to the set's
	sql    []string // per command: its SQL in the engine's style
	args   [][]int  // per command: the variables bound, in order (global numbers)
}

// ParseDefine splits a --define flag's NAME=VALUE.
func ParseDefine(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, "=")
	if !ok || !validName(name) {
		return "", "",
			fmt.Errorf("reading --define %q: expected NAME=VALUE, NAME of letters, digits and _ (as in --define scale=10)", s)
	}
	return name, value, nil
}

// NewSet prepares scripts for clients of one engine.
func NewSet(opt Options, scripts ...Weighted) (*Set, error) {
	if len(scripts) == 0 {
		return nil, errors.New("preparing scripts: no script given (expected at least one)")
	}
	if opt.Scale == 0 {
		opt.Scale = 1
	}
	if opt.MaxTries < 1 {
		opt.MaxTries = 1
	}
	if opt.Sleep == nil {
		opt.Sleep = sleep
	}
	s := &Set{opt: opt, index: map[string]int{}}
	num := func(name string) int {
		if i, ok := s.index[name]; ok {
			return i
		}
		s.index[name] = len(s.names)
		s.names = append(s.names, name)
		return len(s.names) - 1
	}
	s.clientV = num("client_id")
	for _, w := range scripts {
		if w.Weight < 0 {
			return nil, fmt.Errorf("preparing script %s: weight %d is negative (expected 0 or more)", w.Script.Name, w.Weight)
		}
		ps := prepared{s: w.Script, weight: int64(w.Weight)}
		for _, v := range w.Script.vars {
			ps.global = append(ps.global, num(v))
		}
		for _, c := range w.Script.Commands {
			q, a := render(c, ps.global, opt.Placeholders)
			ps.sql = append(ps.sql, q)
			ps.args = append(ps.args, a)
		}
		s.total += ps.weight
		s.scripts = append(s.scripts, ps)
	}
	if s.total == 0 {
		return nil, errors.New("preparing scripts: every weight is 0 (expected at least one script of weight 1 or more)")
	}
	s.initial = make([]value, len(s.names))
	set := func(name string, v value) {
		if i, ok := s.index[name]; ok {
			s.initial[i] = v
		}
	}
	seed := opt.Seed
	set("scale", intValue(opt.Scale))
	set("random_seed", intValue(int64(opt.Seed)))
	set("default_seed", intValue(int64(splitmix64(&seed))))
	for name, val := range opt.Defines {
		if !validName(name) {
			return nil, fmt.Errorf("preparing scripts: --define %s: expected a name of letters, digits and _", name)
		}
		set(name, definedValue(val))
	}
	return s, nil
}

// render writes a SQL command's text in the engine's placeholder style
// and lists the variables to bind.
func render(c Command, global []int, ph Placeholders) (string, []int) {
	if c.kind != cmdSQL {
		return "", nil
	}
	var b strings.Builder
	var args []int
	for i, part := range c.parts {
		b.WriteString(part)
		if i == len(c.refs) {
			break
		}
		g := global[c.refs[i]]
		if ph == Question {
			b.WriteByte('?')
			args = append(args, g)
			continue
		}
		n := -1
		for j, a := range args {
			if a == g {
				n = j
			}
		}
		if n < 0 {
			n = len(args)
			args = append(args, g)
		}
		b.WriteString("$" + strconv.Itoa(n+1))
	}
	return b.String(), args
}

// SQL is a command's SQL as the engine receives it ("" for a
// meta-command).
func (s *Set) SQL(script, command int) string { return s.scripts[script].sql[command] }

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Client is one client's (stream's) state: its variables, which persist
// from one transaction to the next, and its random generator. It belongs
// to one goroutine.
type Client struct {
	set    *Set
	id     int
	rng    prng
	vars   []value
	saved  []value // vars when the transaction began, for a retry
	global []int   // the running script's variable numbers to the set's
	stack  []value // function arguments under evaluation
	args   []any
	cur    *Command // the \gset or \aset command whose rows are read
	rows   int
	onRow  func([]any) error
	inTx   bool
}

// Client makes client id's state; its generator is seeded by the set's
// seed and id.
func (s *Set) Client(id int) *Client {
	c := &Client{set: s, id: id, rng: clientPRNG(s.opt.Seed, id, s.opt.Round)}
	c.vars = append([]value(nil), s.initial...)
	c.vars[s.clientV] = intValue(int64(id))
	c.saved = make([]value, len(c.vars))
	c.stack = make([]value, 0, 16)
	c.onRow = c.row
	return c
}

// Mark is a client's variables and generator at one moment, to go back
// to (Client.Rewind): a transaction run from a mark twice runs with the
// same inputs both times, as the page-size experiment's cold and hot
// runs do.
type Mark struct {
	rng  prng
	vars []value
}

// Mark keeps the client's variables and generator in m.
func (c *Client) Mark(m *Mark) {
	m.rng = c.rng
	m.vars = append(m.vars[:0], c.vars...)
}

// Rewind gives the client back the variables and generator kept in m.
func (c *Client) Rewind(m *Mark) {
	c.rng = m.rng
	copy(c.vars, m.vars)
}

// Choose picks the next transaction's script by weight, from the
// client's generator (no draw when there is one script).
func (c *Client) Choose() int {
	if len(c.set.scripts) == 1 {
		return 0
	}
	w := int64(c.rng.uint64Range(0, uint64(c.set.total-1)))
	for i, p := range c.set.scripts {
		if w < p.weight {
			return i
		}
		w -= p.weight
	}
	return len(c.set.scripts) - 1
}

// Error is a failed command: which, where, and why.
type Error struct {
	Script  string
	Line    int
	Command string // the command's text, on one line
	Err     error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d: %s: %v", e.Script, e.Line, e.Command, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Run runs one transaction of script (an index in the set) on conn: the
// whole script, from the start again (variables and generator as they
// were) when it fails with an error the options' Retryable accepts, up to
// MaxTries times. It returns how many times it ran the script, and the
// last failure: an *Error wrapping the engine's or the expression's error.
// After a failure inside a transaction block (after BEGIN) it sends
// ROLLBACK.
func (c *Client) Run(ctx context.Context, conn Conn, script int) (tries int, err error) {
	p := &c.set.scripts[script]
	copy(c.saved, c.vars)
	rng := c.rng
	for tries = 1; ; tries++ {
		err = c.run(ctx, conn, script, p)
		if err == nil {
			return tries, nil
		}
		if c.inTx {
			c.inTx = false
			if rerr := conn.Exec(ctx, "ROLLBACK"); rerr != nil {
				return tries, fmt.Errorf("%w; then rolling back: %v", err, rerr)
			}
		}
		retry := c.set.opt.Retryable
		if tries >= c.set.opt.MaxTries || retry == nil || !retry(err) || ctx.Err() != nil {
			return tries, err
		}
		copy(c.vars, c.saved)
		c.rng = rng
	}
}

func (c *Client) run(ctx context.Context, conn Conn, script int, p *prepared) error {
	c.global = p.global
	cmds := p.s.Commands
	observe := c.set.opt.Observe
	var start time.Time
	for pc := 0; pc < len(cmds); {
		if observe != nil {
			start = time.Now()
		}
		cur := pc
		var err error
		pc, err = c.step(ctx, conn, p, pc)
		if observe != nil {
			observe(script, cur, time.Since(start), err)
		}
		if err != nil {
			cmd := &cmds[cur]
			return &Error{Script: p.s.Name, Line: cmd.Line, Command: cmd.Text, Err: err}
		}
	}
	return nil
}

// step runs command pc and returns the next one's index.
func (c *Client) step(ctx context.Context, conn Conn, p *prepared, pc int) (int, error) {
	cmd := &p.s.Commands[pc]
	switch cmd.kind {
	case cmdSQL:
		return pc + 1, c.sql(ctx, conn, p, pc, cmd)
	case cmdSet:
		v, err := c.eval(cmd.expr)
		if err != nil {
			return 0, err
		}
		c.vars[c.global[cmd.v]] = v
		return pc + 1, nil
	case cmdSleep:
		n := cmd.sleep
		if cmd.v >= 0 {
			v := c.vars[c.global[cmd.v]]
			if v.k == kUnset {
				return 0, fmt.Errorf("undefined variable %q", c.set.names[c.global[cmd.v]])
			}
			v, err := v.numeric()
			if err != nil {
				return 0, err
			}
			if n, err = v.toInt(); err != nil {
				return 0, fmt.Errorf("sleeping for :%s: %w", c.set.names[c.global[cmd.v]], err)
			}
		}
		return pc + 1, c.set.opt.Sleep(ctx, time.Duration(n)*cmd.sleepUnit)
	case cmdIf:
		return c.branch(p, pc)
	case cmdElif, cmdElse: // reached at the end of a branch taken
		return cmd.end + 1, nil
	}
	return pc + 1, nil // \endif
}

// branch evaluates the conditions of an \if and its \elifs from pc, and
// returns the first command of the branch taken.
func (c *Client) branch(p *prepared, pc int) (int, error) {
	for {
		cmd := &p.s.Commands[pc]
		switch cmd.kind {
		case cmdElse:
			return pc + 1, nil
		case cmdEndif:
			return pc + 1, nil
		}
		v, err := c.eval(cmd.expr)
		if err != nil {
			return 0, err
		}
		t, err := v.truth()
		if err != nil {
			return 0, err
		}
		if t {
			return pc + 1, nil
		}
		pc = cmd.next
	}
}

func (c *Client) sql(ctx context.Context, conn Conn, p *prepared, pc int, cmd *Command) error {
	c.args = c.args[:0]
	for _, g := range p.args[pc] {
		v := c.vars[g]
		if v.k == kUnset {
			return fmt.Errorf("undefined variable %q", c.set.names[g])
		}
		c.args = append(c.args, v.arg())
	}
	q := p.sql[pc]
	var err error
	switch {
	case cmd.assign != 0:
		c.cur, c.rows = cmd, 0
		err = conn.Query(ctx, q, c.args, c.onRow)
		if err == nil && cmd.assign == cmdGset && c.rows != 1 {
			err = fmt.Errorf(`\gset: expected one row, got %d`, c.rows)
		}
	case cmd.rows:
		err = conn.Query(ctx, q, c.args, discard)
	default:
		err = conn.Exec(ctx, q, c.args...)
	}
	if err == nil && cmd.txn != 0 {
		c.inTx = cmd.txn > 0
	}
	return err
}

func discard([]any) error { return nil }

// row stores a row's values into the \gset or \aset command's variables.
func (c *Client) row(vals []any) error {
	c.rows++
	cols := c.cur.columns
	if len(vals) != len(cols) {
		return fmt.Errorf("the query returned %d columns, where the script names %d (for \\gset or \\aset)",
			len(vals), len(cols))
	}
	if c.cur.assign == cmdGset && c.rows > 1 {
		return nil // counted, and refused after the query
	}
	for i, v := range vals {
		c.vars[c.global[cols[i]]] = queryValue(v)
	}
	return nil
}
