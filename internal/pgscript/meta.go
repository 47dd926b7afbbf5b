package pgscript

// The meta-commands of a script (\set, \sleep, \if and its branches,
// \gset and \aset), as the parser reads them.

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// metaEnd is where the meta-command at pos ends: the end of its line, a
// backslash before the newline continuing it.
func (p *parser) metaEnd(pos int) int {
	for {
		e := endOfLine(p.src, pos)
		if e >= len(p.src) {
			return e
		}
		if strings.HasSuffix(p.src[:e], "\\") || strings.HasSuffix(p.src[:e], "\\\r") {
			pos = e + 1
			continue
		}
		return e
	}
}

// meta parses the meta-command at pos, returning where it ends.
func (p *parser) meta(pos int) (int, error) {
	src := p.src
	end := p.metaEnd(pos)
	w := pos + 1
	for w < end && isIdentChar(src[w]) {
		w++
	}
	name := src[pos+1 : w]
	line, _ := p.lineCol(pos)
	cmd := Command{Line: line, Text: oneLine(strings.ReplaceAll(src[pos:end], "\\\n", " "))}
	args := p.words(w, end)
	switch strings.ToLower(name) {
	case "set":
		if len(args) == 0 {
			return 0, p.errorf(skipSpace(src, w, end), `\set: expected a variable name, found end of line`)
		}
		v := args[0]
		if !validName(v.s) {
			return 0, p.errorf(v.off, `\set: expected a variable name (letters, digits, _), found %q`, v.s)
		}
		from := v.off + len(v.s)
		if skipSpace(src, from, end) >= end {
			return 0, p.errorf(end, `\set: expected an expression after %q, found end of line`, v.s)
		}
		x, err := p.parseExpr(from, end)
		if err != nil {
			return 0, prefix(err, `\set: `)
		}
		cmd.kind, cmd.v, cmd.expr = cmdSet, p.variable(v.s), x
	case "sleep":
		if err := p.sleep(&cmd, w, end, args); err != nil {
			return 0, err
		}
	case "if", "elif":
		k := cmdIf
		if strings.ToLower(name) == "elif" {
			k = cmdElif
		}
		if skipSpace(src, w, end) >= end {
			return 0, p.errorf(end, `\%s: expected a condition, found end of line`, name)
		}
		x, err := p.parseExpr(w, end)
		if err != nil {
			return 0, prefix(err, `\`+name+`: `)
		}
		cmd.kind, cmd.expr = k, x
	case "else", "endif":
		if len(args) > 0 {
			return 0, p.errorf(args[0].off, `\%s: expected end of line, found %q`, name, args[0].s)
		}
		cmd.kind = cmdElse
		if strings.ToLower(name) == "endif" {
			cmd.kind = cmdEndif
		}
	case "gset", "aset":
		return end, p.assign(pos, name, args)
	case "shell", "setshell":
		return 0, p.errorf(pos, `\%s is refused: a benchmark run starts no shell (run the command before the benchmark `+
			`and pass its output with --define NAME=VALUE)`, name)
	case "":
		return 0, p.errorf(pos, `expected a meta-command after "\", found %q`, src[pos+1:min(pos+2, end)])
	default:
		return 0,
			p.errorf(pos, `unknown meta-command \%s (expected \set, \sleep, \if, \elif, \else, \endif, \gset or \aset)`, name)
	}
	if err := p.conditional(&cmd, pos); err != nil {
		return 0, err
	}
	p.s.Commands = append(p.s.Commands, cmd)
	return end, nil
}

// prefix puts a meta-command's name before a syntax error's message.
func prefix(err error, pre string) error {
	var se *SyntaxError
	if errors.As(err, &se) {
		se.Msg = pre + se.Msg
	}
	return err
}

type word struct {
	off int
	s   string
}

// words splits src[from:to] at white space (continuations included).
func (p *parser) words(from, to int) []word {
	var ws []word
	i := from
	for {
		i = skipSpace(p.src, i, to)
		if i >= to {
			return ws
		}
		j := i
		for j < to && !strings.ContainsRune(" \t\r\n\f\v", rune(p.src[j])) &&
			!(p.src[j] == '\\' && j+1 < to && (p.src[j+1] == '\n' || p.src[j+1] == '\r')) {
			j++
		}
		ws = append(ws, word{off: i, s: p.src[i:j]})
		i = j
	}
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}

// sleep parses \sleep's arguments: an integer or a :variable, and a unit
// (us, ms or s, default s), which may follow the integer without a blank.
func (p *parser) sleep(cmd *Command, w, end int, args []word) error {
	if len(args) == 0 {
		return p.errorf(end, `\sleep: expected a time (an integer or a :variable), found end of line`)
	}
	if len(args) > 2 {
		return p.errorf(args[2].off, `\sleep: expected end of line after the unit, found %q`, args[2].s)
	}
	cmd.kind, cmd.v, cmd.sleepUnit = cmdSleep, -1, time.Second
	a := args[0]
	unit := ""
	unitOff := 0
	if len(args) == 2 {
		unit, unitOff = args[1].s, args[1].off
	}
	if strings.HasPrefix(a.s, ":") {
		if !validName(a.s[1:]) {
			return p.errorf(a.off, `\sleep: expected a variable name after ':', found %q`, a.s)
		}
		cmd.v = p.variable(a.s[1:])
	} else {
		i := 0
		if i < len(a.s) && (a.s[i] == '+' || a.s[i] == '-') {
			i++
		}
		j := i
		for j < len(a.s) && isDigit(a.s[j]) {
			j++
		}
		if j == i || j < len(a.s) && (len(args) == 2 || !isIdentStart(a.s[j])) {
			return p.errorf(a.off, `\sleep: expected an integer time or a :variable, found %q`, a.s)
		}
		n, err := strconv.ParseInt(a.s[:j], 10, 64)
		if err != nil {
			return p.errorf(a.off, `\sleep: the time %s is out of range`, a.s[:j])
		}
		cmd.sleep = n
		if j < len(a.s) {
			unit, unitOff = a.s[j:], a.off+j
		}
	}
	switch strings.ToLower(unit) {
	case "", "s":
	case "ms":
		cmd.sleepUnit = time.Millisecond
	case "us":
		cmd.sleepUnit = time.Microsecond
	default:
		return p.errorf(unitOff, `\sleep: expected a unit us, ms or s, found %q`, unit)
	}
	return nil
}

// assign attaches \gset or \aset to the SQL command just before it.
func (p *parser) assign(pos int, name string, args []word) error {
	if len(args) > 1 {
		return p.errorf(args[1].off, `\%s: expected at most one argument (a prefix), found %q`, name, args[1].s)
	}
	pre := ""
	if len(args) == 1 {
		pre = args[0].s
		if !validName(pre) {
			return p.errorf(args[0].off, `\%s: expected a variable name prefix (letters, digits, _), found %q`, name, pre)
		}
	}
	n := len(p.s.Commands)
	if n == 0 || p.s.Commands[n-1].kind != cmdSQL || p.s.Commands[n-1].assign != 0 {
		return p.errorf(pos, `\%s must follow an SQL command`, name)
	}
	cmd := &p.s.Commands[n-1]
	cmd.assign = cmdGset
	if strings.ToLower(name) == "aset" {
		cmd.assign = cmdAset
	}
	cols, err := columnNames(strings.Join(cmd.parts, "?"))
	if err != nil {
		return p.errorf(pos, `\%s: %v`, name, err)
	}
	for _, c := range cols {
		cmd.columns = append(cmd.columns, p.variable(pre+c))
	}
	cmd.rows = true
	cmd.Text += ` \` + name
	if pre != "" {
		cmd.Text += " " + pre
	}
	return nil
}

// conditional checks \if's nesting and links its branches.
func (p *parser) conditional(cmd *Command, pos int) error {
	i := len(p.s.Commands) // cmd's index
	name := map[cmdKind]string{cmdElif: `\elif`, cmdElse: `\else`, cmdEndif: `\endif`}[cmd.kind]
	switch cmd.kind {
	case cmdIf:
		p.conds = append(p.conds, condFrame{heads: []int{i}, elseAt: -1, textOff: pos})
		return nil
	case cmdElif, cmdElse, cmdEndif:
	default:
		return nil
	}
	n := len(p.conds)
	if n == 0 {
		return p.errorf(pos, `%s without a matching \if`, name)
	}
	f := &p.conds[n-1]
	if f.elseAt >= 0 && cmd.kind != cmdEndif {
		return p.errorf(pos, `%s after \else (expected \endif)`, name)
	}
	last := f.heads[len(f.heads)-1]
	p.s.Commands[last].next = i
	switch cmd.kind {
	case cmdElse:
		f.elseAt = i
		fallthrough
	case cmdElif:
		f.heads = append(f.heads, i)
		return nil
	}
	for _, h := range f.heads {
		p.s.Commands[h].end = i
	}
	p.conds = p.conds[:n-1]
	return nil
}
