package pgscript

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// ErrSyntax is wrapped by every error of Parse.
var ErrSyntax = errors.New("syntax error")

// SyntaxError is a script that cannot be parsed: where, and what was
// expected there.
type SyntaxError struct {
	Script       string
	Line, Column int // 1-based; the column counts bytes
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.Script, e.Line, e.Column, e.Msg)
}

func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// Script is one parsed script file: its commands, with everything the
// interpreter needs resolved.
type Script struct {
	Name     string
	Commands []Command
	vars     []string // the script's variables, by number
}

// Command is one SQL command or meta-command of a script.
type Command struct {
	Line int    // where it starts, 1-based
	Text string // as written, on one line, for reports and errors

	kind cmdKind
	expr *node // \set, \if, \elif

	// \set's variable, \sleep's (or -1 for a constant)
	v int
	// \sleep's constant and unit
	sleep     int64
	sleepUnit time.Duration

	// \if, \elif, \else: the next branch of the same \if (an \elif, \else
	// or \endif), and its \endif.
	next, end int

	// SQL: the text around the variables, parts[0] :vars[0] parts[1] ...
	parts   []string
	refs    []int
	rows    bool // returns rows: run by Query
	txn     int  // 1 begins a transaction block, -1 ends it
	assign  cmdKind
	columns []int // \gset or \aset: the variable each column goes into
}

type cmdKind uint8

const (
	cmdSQL cmdKind = iota
	cmdSet
	cmdSleep
	cmdIf
	cmdElif
	cmdElse
	cmdEndif
	cmdGset // assign of a SQL command
	cmdAset
)

// parser reads one script.
type parser struct {
	name  string
	src   string
	lines []int // offsets where lines start
	s     *Script
	index map[string]int
	conds []condFrame
	// sql collects the SQL command under way.
	sqlStart int // -1: none
	sqlRefs  []varRef
}

type condFrame struct {
	heads   []int // the \if and its \elif and \else
	elseAt  int   // -1 until an \else
	line    int
	textOff int
}

type varRef struct {
	from, to int // the reference ":name" in src
	name     string
}

// Parse reads a whole script in pgbench 15's language. name is the
// script's name in errors (its file name).
func Parse(name string, r io.Reader) (*Script, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading script %s: %w", name, err)
	}
	p := &parser{name: name, src: string(b), s: &Script{Name: name}, index: map[string]int{}, sqlStart: -1}
	p.lines = append(p.lines, 0)
	for i := 0; i < len(p.src); i++ {
		if p.src[i] == '\n' {
			p.lines = append(p.lines, i+1)
		}
	}
	if err := p.script(); err != nil {
		return nil, err
	}
	if n := len(p.conds); n > 0 {
		f := p.conds[n-1]
		return nil, p.errorf(f.textOff, "\\if without a matching \\endif (expected \\endif before the end of the script)")
	}
	if len(p.s.Commands) == 0 {
		return nil, p.errorf(len(p.src), "the script has no command (expected SQL or a meta-command)")
	}
	return p.s, nil
}

func (p *parser) lineCol(off int) (int, int) {
	l, _ := slices.BinarySearch(p.lines, off+1)
	return l, off - p.lines[l-1] + 1
}

func (p *parser) errorf(off int, format string, args ...any) error {
	l, c := p.lineCol(off)
	return &SyntaxError{Script: p.name, Line: l, Column: c, Msg: fmt.Sprintf(format, args...)}
}

// variable numbers a variable of the script.
func (p *parser) variable(name string) int {
	if i, ok := p.index[name]; ok {
		return i
	}
	p.index[name] = len(p.s.vars)
	p.s.vars = append(p.s.vars, name)
	return len(p.s.vars) - 1
}

func (p *parser) script() error {
	src := p.src
	pos := 0
	for pos < len(src) {
		c := src[pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			pos++
			continue
		case c == '-' && strings.HasPrefix(src[pos:], "--"):
			pos = endOfLine(src, pos)
			continue
		case c == '/' && strings.HasPrefix(src[pos:], "/*"):
			end, err := p.blockComment(pos)
			if err != nil {
				return err
			}
			pos = end
			continue
		case c == ';':
			if err := p.endSQL(pos); err != nil {
				return err
			}
			pos++
			continue
		case c == '\\':
			if pos+1 < len(src) && src[pos+1] == ';' {
				return p.errorf(pos, `\; (compound statements) is not supported: end each command with ";"`)
			}
			if err := p.endSQL(pos); err != nil {
				return err
			}
			end, err := p.meta(pos)
			if err != nil {
				return err
			}
			pos = end
			continue
		}
		if p.sqlStart < 0 {
			p.sqlStart = pos
		}
		switch {
		case c == '\'':
			escapes := pos > 0 && (src[pos-1] == 'e' || src[pos-1] == 'E') && (pos < 2 || !isIdentChar(src[pos-2]))
			end, err := p.quoted(pos, '\'', escapes, "string")
			if err != nil {
				return err
			}
			pos = end
		case c == '"':
			end, err := p.quoted(pos, '"', false, "quoted identifier")
			if err != nil {
				return err
			}
			pos = end
		case c == '$' && (pos == 0 || !isIdentChar(src[pos-1])):
			end, err := p.dollar(pos)
			if err != nil {
				return err
			}
			pos = end
		case c == ':':
			end, err := p.colon(pos)
			if err != nil {
				return err
			}
			pos = end
		case isIdentChar(c):
			for pos < len(src) && isIdentChar(src[pos]) {
				pos++
			}
		default:
			pos++
		}
	}
	return p.endSQL(len(src))
}

func endOfLine(src string, pos int) int {
	if i := strings.IndexByte(src[pos:], '\n'); i >= 0 {
		return pos + i
	}
	return len(src)
}

// blockComment skips a /* comment */, nested as in PostgreSQL.
func (p *parser) blockComment(pos int) (int, error) {
	depth := 0
	for i := pos; i+1 < len(p.src); i++ {
		switch p.src[i : i+2] {
		case "/*":
			depth++
			i++
		case "*/":
			depth--
			i++
			if depth == 0 {
				return i + 1, nil
			}
		}
	}
	return 0, p.errorf(pos, "unterminated /* comment (expected */)")
}

// quoted skips a string or quoted identifier starting at pos; a doubled
// quote is one, and with escapes (E'...') a backslash escapes.
func (p *parser) quoted(pos int, q byte, escapes bool, what string) (int, error) {
	for i := pos + 1; i < len(p.src); i++ {
		switch p.src[i] {
		case '\\':
			if escapes {
				i++
			}
		case q:
			if i+1 < len(p.src) && p.src[i+1] == q {
				i++
				continue
			}
			return i + 1, nil
		}
	}
	return 0, p.errorf(pos, "unterminated %s (expected %c)", what, q)
}

// dollar skips a dollar-quoted string $tag$...$tag$ at pos, or a lone $.
func (p *parser) dollar(pos int) (int, error) {
	i := pos + 1
	if i < len(p.src) && isIdentStart(p.src[i]) {
		for i < len(p.src) && isIdentChar(p.src[i]) {
			i++
		}
	}
	if i >= len(p.src) || p.src[i] != '$' {
		return pos + 1, nil // a parameter ($1) or part of a word
	}
	tag := p.src[pos : i+1]
	end := strings.Index(p.src[i+1:], tag)
	if end < 0 {
		return 0, p.errorf(pos, "unterminated dollar-quoted string (expected %s)", tag)
	}
	return i + 1 + end + len(tag), nil
}

// colon reads what follows a ':' in SQL: a variable, or a cast (::), or a
// lone colon.
func (p *parser) colon(pos int) (int, error) {
	src := p.src
	i := pos + 1
	if i < len(src) && src[i] == ':' {
		for i < len(src) && src[i] == ':' {
			i++
		}
		return i, nil
	}
	if i < len(src) && (src[i] == '\'' || src[i] == '"') {
		return 0,
			p.errorf(pos, "psql's quoted variable :%c...%c is not pgbench's: bind the variable as :name", src[i], src[i])
	}
	for i < len(src) && isIdentChar(src[i]) {
		i++
	}
	if i == pos+1 {
		return i, nil
	}
	p.sqlRefs = append(p.sqlRefs, varRef{from: pos, to: i, name: src[pos+1 : i]})
	return i, nil
}

// endSQL ends the SQL command under way, if any, at end (a semicolon, a
// meta-command or the end of the script).
func (p *parser) endSQL(end int) error {
	if p.sqlStart < 0 {
		return nil
	}
	start := p.sqlStart
	refs := p.sqlRefs
	p.sqlStart, p.sqlRefs = -1, nil
	for end > start && strings.ContainsRune(" \t\r\n\f\v", rune(p.src[end-1])) {
		end--
	}
	text := p.src[start:end]
	line, _ := p.lineCol(start)
	cmd := Command{Line: line, Text: oneLine(text), kind: cmdSQL}
	last := start
	for _, r := range refs {
		cmd.parts = append(cmd.parts, p.src[last:r.from])
		cmd.refs = append(cmd.refs, p.variable(r.name))
		last = r.to
	}
	cmd.parts = append(cmd.parts, p.src[last:end])
	words := sqlWords(text, 1)
	first := ""
	if len(words) > 0 {
		first = words[0]
	}
	switch first {
	case "select", "with", "values", "table", "show", "explain", "pragma", "describe", "summarize", "call":
		cmd.rows = true
	case "begin", "start":
		cmd.txn = 1
	case "commit", "end", "rollback", "abort":
		if !slices.Contains(sqlWords(text, -1), "to") { // ROLLBACK TO SAVEPOINT stays inside
			cmd.txn = -1
		}
	}
	if !cmd.rows && slices.Contains(sqlWords(text, -1), "returning") {
		cmd.rows = true
	}
	p.s.Commands = append(p.s.Commands, cmd)
	return nil
}

// oneLine is text with each run of white space one blank.
func oneLine(text string) string { return strings.Join(strings.Fields(text), " ") }
