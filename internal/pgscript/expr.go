package pgscript

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// op is what an expression node computes.
type op uint8

const (
	opConst op = iota
	opVar
	opNeg // 0 - x, overflow-checked
	opAdd
	opSub
	opMul
	opDiv
	opMod
	opBitAnd
	opBitOr
	opBitXor
	opShl
	opShr
	opEq
	opNe
	opLt
	opLe
	opAnd
	opOr
	opNot
	opIs   // a IS b, b null or a boolean: same type and value
	opCase // args: when, then, when, then, ..., else
	opFunc
)

// node is a parsed expression. Everything is resolved at parse time:
// constants are values, variables numbers, functions their entries.
type node struct {
	op   op
	val  value // opConst
	v    int   // opVar: the script's variable number
	fn   *function
	args []*node
}

// function is one of pgbench's functions: its arity and its evaluation.
// min and max bound the number of arguments (max -1: any number).
// A function whose call misses optional trailing arguments gets them from
// fill (hash's and permute's seed is :default_seed, as in pgbench).
type function struct {
	name     string
	min, max int
	fill     string
	eval     func(c *Client, args []value) (value, error)
}

// lexer tokens of expressions.
type tokKind uint8

const (
	tEOF tokKind = iota
	tInt
	tDouble
	tMaxIntPlusOne // 9223372036854775808, valid only after a minus
	tIdent         // function names and keywords
	tVar
	tOp
	tLParen
	tRParen
	tComma
)

type token struct {
	kind tokKind
	off  int    // byte offset in the script
	text string // identifiers lowercased, operators as written
	i    int64
	f    float64
}

// exprLexer reads an expression from src[pos:end], continuation lines
// (a backslash ending a line) included.
type exprLexer struct {
	p   *parser
	pos int
	end int
	tok token
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }
func isDigit(c byte) bool     { return c >= '0' && c <= '9' }

// skipSpace skips blanks and continuations from pos, not beyond end.
func skipSpace(src string, pos, end int) int {
	for pos < end {
		switch c := src[pos]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			pos++
		case c == '\\' && pos+1 < end && src[pos+1] == '\n':
			pos += 2
		case c == '\\' && pos+2 < end && src[pos+1] == '\r' && src[pos+2] == '\n':
			pos += 3
		case c == '\n': // only inside a continuation's range
			pos++
		default:
			return pos
		}
	}
	return pos
}

func (l *exprLexer) next() error {
	src := l.p.src
	l.pos = skipSpace(src, l.pos, l.end)
	t := token{off: l.pos}
	if l.pos >= l.end {
		l.tok = t
		return nil
	}
	c := src[l.pos]
	start := l.pos
	switch {
	case isDigit(c) || c == '.' && l.pos+1 < l.end && isDigit(src[l.pos+1]):
		p := l.pos
		for p < l.end && isDigit(src[p]) {
			p++
		}
		double := false
		if p < l.end && src[p] == '.' {
			double = true
			p++
			for p < l.end && isDigit(src[p]) {
				p++
			}
		}
		if p < l.end && (src[p] == 'e' || src[p] == 'E') {
			q := p + 1
			if q < l.end && (src[q] == '+' || src[q] == '-') {
				q++
			}
			if q < l.end && isDigit(src[q]) {
				double = true
				for q < l.end && isDigit(src[q]) {
					q++
				}
				p = q
			}
		}
		if p < l.end && isIdentChar(src[p]) {
			return l.p.errorf(p, "expected an operator after the number %q, found %q", src[start:p], src[p:p+1])
		}
		t.text = src[start:p]
		l.pos = p
		if double {
			f, err := strconv.ParseFloat(t.text, 64)
			if err != nil {
				return l.p.errorf(start, "double constant %s is out of range", t.text)
			}
			t.kind, t.f = tDouble, f
		} else {
			i, err := strconv.ParseInt(t.text, 10, 64)
			switch {
			case err == nil:
				t.kind, t.i = tInt, i
			case strings.TrimLeft(t.text, "0") == "9223372036854775808":
				t.kind = tMaxIntPlusOne
			default:
				return l.p.errorf(start, "bigint constant %s is out of range", t.text)
			}
		}
	case isIdentStart(c):
		p := l.pos
		for p < l.end && isIdentChar(src[p]) {
			p++
		}
		t.kind, t.text = tIdent, strings.ToLower(src[start:p])
		l.pos = p
	case c == ':':
		p := l.pos + 1
		for p < l.end && isIdentChar(src[p]) {
			p++
		}
		if p == l.pos+1 {
			return l.p.errorf(start, "expected a variable name after ':'")
		}
		t.kind, t.text = tVar, src[start+1:p]
		l.pos = p
	case c == '(':
		t.kind, l.pos = tLParen, l.pos+1
	case c == ')':
		t.kind, l.pos = tRParen, l.pos+1
	case c == ',':
		t.kind, l.pos = tComma, l.pos+1
	default:
		for _, o := range []string{"<>", "!=", "<=", ">=", "<<", ">>", "+", "-", "*", "/", "%", "<", ">",
			"=", "&", "|", "#", "~"} {
			if strings.HasPrefix(src[l.pos:l.end], o) {
				t.kind, t.text = tOp, o
				l.pos += len(o)
				l.tok = t
				return nil
			}
		}
		return l.p.errorf(start, "unexpected character %q in an expression", src[start:start+1])
	}
	l.tok = t
	return nil
}

// describe names a token for an error message.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of line"
	case tVar:
		return ":" + t.text
	case tLParen:
		return `"("`
	case tRParen:
		return `")"`
	case tComma:
		return `","`
	case tMaxIntPlusOne:
		return "9223372036854775808"
	}
	return strconv.Quote(t.text)
}

// Binary operator precedence, loosest first, as pgbench's grammar.
const (
	precOr = 1 + iota
	precAnd
	precNot
	precIs
	precCmp
	precBit
	precAdd
	precMul
	precUnary
)

// binary says which binary or postfix operator t is, if any.
func binary(t token) (o op, prec int, ok bool) {
	switch t.kind {
	case tOp:
		switch t.text {
		case "+":
			return opAdd, precAdd, true
		case "-":
			return opSub, precAdd, true
		case "*":
			return opMul, precMul, true
		case "/":
			return opDiv, precMul, true
		case "%":
			return opMod, precMul, true
		case "&":
			return opBitAnd, precBit, true
		case "|":
			return opBitOr, precBit, true
		case "#":
			return opBitXor, precBit, true
		case "<<":
			return opShl, precBit, true
		case ">>":
			return opShr, precBit, true
		case "=":
			return opEq, precCmp, true
		case "<>", "!=":
			return opNe, precCmp, true
		case "<", ">":
			return opLt, precCmp, true
		case "<=", ">=":
			return opLe, precCmp, true
		}
	case tIdent:
		switch t.text {
		case "or":
			return opOr, precOr, true
		case "and":
			return opAnd, precAnd, true
		case "is", "isnull", "notnull":
			return opIs, precIs, true
		}
	}
	return 0, 0, false
}

// exprParser parses one expression, naming variables through p.
type exprParser struct {
	p *parser
	l exprLexer
}

// parseExpr parses src[from:to] as one whole expression.
func (p *parser) parseExpr(from, to int) (*node, error) {
	e := &exprParser{p: p, l: exprLexer{p: p, pos: from, end: to}}
	if err := e.l.next(); err != nil {
		return nil, err
	}
	n, err := e.expr(0)
	if err != nil {
		return nil, err
	}
	if e.l.tok.kind != tEOF {
		return nil, p.errorf(e.l.tok.off, "expected an operator or end of line, found %s", e.l.tok.describe())
	}
	return n, nil
}

func (e *exprParser) expect(k tokKind, what string) error {
	if e.l.tok.kind != k {
		return e.p.errorf(e.l.tok.off, "expected %s, found %s", what, e.l.tok.describe())
	}
	return e.l.next()
}

func (e *exprParser) keyword(w string) bool { return e.l.tok.kind == tIdent && e.l.tok.text == w }

func (e *exprParser) expr(minPrec int) (*node, error) {
	lhs, err := e.unary()
	if err != nil {
		return nil, err
	}
	for {
		t := e.l.tok
		o, prec, ok := binary(t)
		if !ok || prec < minPrec {
			return lhs, nil
		}
		if err := e.l.next(); err != nil {
			return nil, err
		}
		switch {
		case o == opIs:
			lhs, err = e.is(t, lhs)
		default:
			next := prec + 1 // left associative
			var rhs *node
			if rhs, err = e.expr(next); err != nil {
				return nil, err
			}
			if t.text == ">" || t.text == ">=" {
				lhs, rhs = rhs, lhs
			}
			lhs = &node{op: o, args: []*node{lhs, rhs}}
		}
		if err != nil {
			return nil, err
		}
		if prec == precCmp || prec == precIs { // non-associative
			if _, p2, ok := binary(e.l.tok); ok && p2 == prec {
				return nil, e.p.errorf(e.l.tok.off, "expected parentheses around a comparison before %s", e.l.tok.describe())
			}
		}
	}
}

// is parses what follows IS (or ISNULL, NOTNULL): [NOT] NULL|TRUE|FALSE.
func (e *exprParser) is(t token, lhs *node) (*node, error) {
	negate := t.text == "notnull"
	rhs := value{k: kNull}
	if t.text == "is" {
		if e.keyword("not") {
			negate = true
			if err := e.l.next(); err != nil {
				return nil, err
			}
		}
		switch {
		case e.keyword("null"):
		case e.keyword("true"):
			rhs = boolValue(true)
		case e.keyword("false"):
			rhs = boolValue(false)
		default:
			return nil, e.p.errorf(e.l.tok.off, "expected NULL, TRUE or FALSE after IS, found %s", e.l.tok.describe())
		}
		if err := e.l.next(); err != nil {
			return nil, err
		}
	}
	n := &node{op: opIs, args: []*node{lhs, {op: opConst, val: rhs}}}
	if negate {
		n = &node{op: opNot, args: []*node{n}}
	}
	return n, nil
}

func (e *exprParser) unary() (*node, error) {
	t := e.l.tok
	switch {
	case t.kind == tOp && (t.text == "-" || t.text == "+" || t.text == "~"):
		if err := e.l.next(); err != nil {
			return nil, err
		}
		if t.text == "-" && e.l.tok.kind == tMaxIntPlusOne {
			return &node{op: opConst, val: intValue(math.MinInt64)}, e.l.next()
		}
		x, err := e.expr(precUnary)
		if err != nil {
			return nil, err
		}
		switch t.text {
		case "-":
			return &node{op: opNeg, args: []*node{x}}, nil
		case "~":
			return &node{op: opBitXor, args: []*node{{op: opConst, val: intValue(-1)}, x}}, nil
		}
		return x, nil
	case t.kind == tIdent && t.text == "not":
		if err := e.l.next(); err != nil {
			return nil, err
		}
		x, err := e.expr(precNot)
		if err != nil {
			return nil, err
		}
		return &node{op: opNot, args: []*node{x}}, nil
	}
	return e.primary()
}

func (e *exprParser) primary() (*node, error) {
	t := e.l.tok
	switch t.kind {
	case tInt:
		return &node{op: opConst, val: intValue(t.i)}, e.l.next()
	case tDouble:
		return &node{op: opConst, val: doubleValue(t.f)}, e.l.next()
	case tMaxIntPlusOne:
		return nil, e.p.errorf(t.off, "bigint constant 9223372036854775808 is out of range")
	case tVar:
		return &node{op: opVar, v: e.p.variable(t.text)}, e.l.next()
	case tLParen:
		if err := e.l.next(); err != nil {
			return nil, err
		}
		x, err := e.expr(0)
		if err != nil {
			return nil, err
		}
		return x, e.expect(tRParen, `")"`)
	case tIdent:
		switch t.text {
		case "true", "false":
			return &node{op: opConst, val: boolValue(t.text == "true")}, e.l.next()
		case "null":
			return &node{op: opConst, val: value{k: kNull}}, e.l.next()
		case "case":
			return e.caseExpr()
		}
		return e.call(t)
	case tEOF:
		return nil, e.p.errorf(t.off, "expected an operand, found end of line")
	}
	return nil, e.p.errorf(t.off, "expected an operand, found %s", t.describe())
}

func (e *exprParser) caseExpr() (*node, error) {
	if err := e.l.next(); err != nil {
		return nil, err
	}
	n := &node{op: opCase}
	for e.keyword("when") {
		if err := e.l.next(); err != nil {
			return nil, err
		}
		cond, err := e.expr(0)
		if err != nil {
			return nil, err
		}
		if !e.keyword("then") {
			return nil, e.p.errorf(e.l.tok.off, "expected THEN in CASE, found %s", e.l.tok.describe())
		}
		if err := e.l.next(); err != nil {
			return nil, err
		}
		then, err := e.expr(0)
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, cond, then)
	}
	if len(n.args) == 0 {
		return nil,
			e.p.errorf(e.l.tok.off, "expected WHEN after CASE (pgbench has no CASE x WHEN form), found %s", e.l.tok.describe())
	}
	els := &node{op: opConst, val: value{k: kNull}}
	if e.keyword("else") {
		if err := e.l.next(); err != nil {
			return nil, err
		}
		var err error
		if els, err = e.expr(0); err != nil {
			return nil, err
		}
	}
	if !e.keyword("end") {
		return nil, e.p.errorf(e.l.tok.off, "expected WHEN, ELSE or END in CASE, found %s", e.l.tok.describe())
	}
	n.args = append(n.args, els)
	return n, e.l.next()
}

func (e *exprParser) call(name token) (*node, error) {
	fn := functions[name.text]
	if fn == nil {
		return nil, e.p.errorf(name.off, "unknown function %s (expected one of pgbench's: %s)", name.text, functionNames())
	}
	if err := e.l.next(); err != nil {
		return nil, err
	}
	if e.l.tok.kind != tLParen {
		return nil,
			e.p.errorf(e.l.tok.off, "expected \"(\" after the function name %s, found %s", name.text, e.l.tok.describe())
	}
	if err := e.l.next(); err != nil {
		return nil, err
	}
	n := &node{op: opFunc, fn: fn}
	if e.l.tok.kind != tRParen {
		for {
			a, err := e.expr(0)
			if err != nil {
				return nil, err
			}
			n.args = append(n.args, a)
			if e.l.tok.kind != tComma {
				break
			}
			if err := e.l.next(); err != nil {
				return nil, err
			}
		}
	}
	if e.l.tok.kind != tRParen {
		return nil,
			e.p.errorf(e.l.tok.off, "expected \",\" or \")\" in the arguments of %s, found %s", name.text, e.l.tok.describe())
	}
	if got := len(n.args); got < fn.min || fn.max >= 0 && got > fn.max {
		return nil, e.p.errorf(name.off, "%s takes %s, not %d", name.text, fn.arity(), got)
	}
	for len(n.args) < fn.max && fn.fill != "" {
		n.args = append(n.args, &node{op: opVar, v: e.p.variable(fn.fill)})
	}
	return n, e.l.next()
}

func (f *function) arity() string {
	switch {
	case f.max < 0:
		return fmt.Sprintf("at least %d argument", f.min) + plural(f.min)
	case f.min == f.max:
		return fmt.Sprintf("%d argument", f.min) + plural(f.min)
	}
	return fmt.Sprintf("%d to %d arguments", f.min, f.max)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
