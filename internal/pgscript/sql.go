package pgscript

import (
	"fmt"
	"strings"
)

// sqlTok is a token of a SQL command, as far as this package reads SQL:
// to know its first keyword and the names of its result columns.
type sqlTok struct {
	s      string // an identifier lowercased (quoted: as written), else the text
	ident  bool
	quoted bool
	depth  int // parentheses around it
}

// sqlTokens splits a command's text (variables already replaced) into
// tokens, skipping comments. Strings are one token each.
func sqlTokens(text string) []sqlTok {
	var toks []sqlTok
	depth := 0
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case strings.ContainsRune(" \t\r\n\f\v", rune(c)):
			i++
		case strings.HasPrefix(text[i:], "--"):
			i = endOfLine(text, i)
		case strings.HasPrefix(text[i:], "/*"):
			if j := strings.Index(text[i:], "*/"); j >= 0 {
				i += j + 2
			} else {
				i = len(text)
			}
		case c == '"':
			j := i + 1
			var b strings.Builder
			for j < len(text) {
				if text[j] == '"' {
					if j+1 < len(text) && text[j+1] == '"' {
						b.WriteByte('"')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(text[j])
				j++
			}
			toks = append(toks, sqlTok{s: b.String(), ident: true, quoted: true, depth: depth})
			i = j + 1
		case c == '\'':
			j := i + 1
			for j < len(text) && !(text[j] == '\'' && (j+1 >= len(text) || text[j+1] != '\'')) {
				if text[j] == '\'' {
					j++
				}
				j++
			}
			toks = append(toks, sqlTok{s: text[i:min(j+1, len(text))], depth: depth})
			i = j + 1
		case isIdentStart(c):
			j := i
			for j < len(text) && (isIdentChar(text[j]) || text[j] == '$') {
				j++
			}
			toks = append(toks, sqlTok{s: strings.ToLower(text[i:j]), ident: true, depth: depth})
			i = j
		case isDigit(c):
			j := i
			for j < len(text) && (isIdentChar(text[j]) || text[j] == '.') {
				j++
			}
			toks = append(toks, sqlTok{s: text[i:j], depth: depth})
			i = j
		case c == '(':
			toks = append(toks, sqlTok{s: "(", depth: depth})
			depth++
			i++
		case c == ')':
			depth--
			toks = append(toks, sqlTok{s: ")", depth: depth})
			i++
		case strings.HasPrefix(text[i:], "::"):
			toks = append(toks, sqlTok{s: "::", depth: depth})
			i += 2
		default:
			toks = append(toks, sqlTok{s: text[i : i+1], depth: depth})
			i++
		}
	}
	return toks
}

// sqlWords is the first n (n < 0: all) unquoted words outside parentheses,
// lowercased.
func sqlWords(text string, n int) []string {
	var ws []string
	for _, t := range sqlTokens(text) {
		if n >= 0 && len(ws) >= n {
			break
		}
		if t.ident && !t.quoted && t.depth == 0 {
			ws = append(ws, t.s)
		}
	}
	return ws
}

// Words that end a select list.
var selectListEnd = map[string]bool{
	"from": true, "where": true, "group": true, "having": true, "window": true, "order": true,
	"limit": true, "offset": true, "fetch": true, "for": true, "union": true, "intersect": true,
	"except": true, "into": true,
}

// columnNames names the result columns of a query for \gset and \aset,
// the same whichever engine runs it: a column's alias (AS name, or a name
// after the expression), else its column's name (t.abalance is abalance),
// else, for a function call, the function's name (as PostgreSQL names
// count(*) count). Any other column must be given an alias.
func columnNames(text string) ([]string, error) {
	toks := sqlTokens(text)
	start := -1
	for i, t := range toks {
		if t.depth == 0 && !t.quoted && (t.s == "select" || t.s == "returning") {
			start = i + 1 // the last RETURNING, or the first SELECT, at depth 0
			if t.s == "select" {
				break
			}
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("cannot find the result columns of this command (expected SELECT ... or ... RETURNING ...)")
	}
	for start < len(toks) && !toks[start].quoted && (toks[start].s == "distinct" || toks[start].s == "all") {
		start++
	}
	var names []string
	item := []sqlTok{}
	flush := func() error {
		name, err := columnName(item)
		if err != nil {
			return err
		}
		names = append(names, name)
		item = item[:0]
		return nil
	}
	for _, t := range toks[start:] {
		if t.depth == 0 && !t.quoted && (selectListEnd[t.s] || t.s == ";") {
			break
		}
		if t.depth == 0 && t.s == "," {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		item = append(item, t)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return names, nil
}

func columnName(item []sqlTok) (string, error) {
	text := func() string {
		var b []string
		for _, t := range item {
			b = append(b, t.s)
		}
		return strings.Join(b, " ")
	}
	n := len(item)
	if n == 0 {
		return "", fmt.Errorf("a result column is empty")
	}
	last := item[n-1]
	if n >= 2 && last.ident && last.depth == 0 && (last.quoted || !isKeywordBeforeName(last.s)) {
		prev := item[n-2]
		if prev.s == "as" && !prev.quoted {
			return checkName(last.s)
		}
		if prev.ident || prev.s == ")" || strings.HasPrefix(prev.s, "'") || isDigit(prev.s[0]) {
			if prev.s != "." && !isKeywordBeforeName(prev.s) {
				return checkName(last.s)
			}
		}
	}
	// drop casts: x::int is named x
	for i, t := range item {
		if t.depth == 0 && t.s == "::" {
			item = item[:i]
			n = i
			break
		}
	}
	if n > 0 && item[0].ident {
		i := 0
		for i+2 < n && item[i+1].s == "." && item[i+2].ident {
			i += 2
		}
		if i == n-1 && item[i].s != "*" {
			return checkName(item[i].s)
		}
		if i == 0 && n >= 3 && item[1].s == "(" && item[n-1].s == ")" && item[n-1].depth == 0 && !item[0].quoted {
			return checkName(item[0].s)
		}
	}
	return "", fmt.Errorf("cannot tell the name of the result column %q: give it one (AS name)", text())
}

// isKeywordBeforeName says whether a word is a keyword of an expression
// (x IS NULL, CASE ... END), neither an alias nor followed by one.
func isKeywordBeforeName(prev string) bool {
	switch prev {
	case "is", "not", "null", "and", "or", "then", "else", "when", "case", "end", "true", "false":
		return true
	}
	return false
}

func checkName(s string) (string, error) {
	if !validName(s) {
		return "",
			fmt.Errorf("the result column %q cannot name a variable (letters, digits, _): give it an alias (AS name)", s)
	}
	return s, nil
}
