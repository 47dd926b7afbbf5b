package result

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// hidden replaces every password Redact finds.
const hidden = "xxxxx"

// Redact hides passwords in any text that may hold a PostgreSQL DSN or a
// command line: the DSN itself, a stored command, an error message that
// quotes either. It is the one routine every such path uses, so that a
// password never reaches the terminal, the store or a report.
//
// It hides, in whatever text surrounds them:
//   - the password of URL user-info, "postgres://u:PW@host/db", also when
//     the URL is malformed ("postgres//u:PW@h", "u:PW@h/db") or PW holds a
//     raw "@", ":" or "/" (everything up to the last "@" of the word goes);
//   - the value of every key/value "password" ("password=PW",
//     "PASSWORD = 'P W'", "sslpassword=PW", "PGPASSWORD=PW ..."), with
//     libpq's and the shell's quoting and backslash escapes, also as
//     doubled by Go's %q;
//   - "?password=PW" and "&password=PW" in a URL's query string.
//
// Where the text cannot be parsed it errs towards hiding too much: an
// unclosed quote hides the rest of the text, and a user-info password
// broken by raw white space hides up to the last "@" before the next URL.
// Redact(Redact(s)) == Redact(s).
func Redact(s string) string {
	spans := append(keywordSpans(s), userinfoSpans(s)...)
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b span) int { return a.lo - b.lo })
	var b strings.Builder
	copied := 0
	for i := 0; i < len(spans); {
		lo, hi := spans[i].lo, spans[i].hi
		for i++; i < len(spans) && spans[i].lo <= hi; i++ {
			hi = max(hi, spans[i].hi)
		}
		b.WriteString(s[copied:lo])
		b.WriteString(hidden)
		copied = hi
	}
	b.WriteString(s[copied:])
	return b.String()
}

// A span is s[lo:hi], a password to hide. Spans found by different rules,
// or from different starts, may overlap: Redact hides their union, so that
// a value misread from one start is still hidden from another.
type span struct{ lo, hi int }

// RedactJSON applies Redact to every string in a JSON document (a stored
// configuration or item), and hides the whole string value of every member
// whose name holds "password", leaving the document valid and everything
// else as it was. Text that is not JSON is redacted as text.
func RedactJSON(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	if !json.Valid(b) {
		return []byte(Redact(string(b)))
	}
	var out []byte
	i := 0          // b[:i] is copied to out
	secret := false // the string at hand is a password member's value
	for j := 0; j < len(b); j++ {
		if b[j] != '"' {
			if b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' && b[j] != ':' {
				secret = false
			}
			continue
		}
		end := j + 1
		for end < len(b) && b[end] != '"' {
			if b[end] == '\\' {
				end++
			}
			end++
		}
		end++ // past the closing quote
		var str string
		if json.Unmarshal(b[j:end], &str) == nil {
			r := Redact(str)
			if secret && str != "" {
				r = hidden
			}
			if r != str {
				q, _ := json.Marshal(r)
				out = append(append(out, b[i:j]...), q...)
				i = end
			}
			k := end
			for k < len(b) && (b[k] == ' ' || b[k] == '\t' || b[k] == '\n' || b[k] == '\r') {
				k++
			}
			secret = k < len(b) && b[k] == ':' && strings.Contains(asciiLower(str), "password")
		}
		j = end - 1
	}
	return append(out, b[i:]...)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// keywordSpans finds the value of every "password" key, in any case.
func keywordSpans(s string) []span {
	var spans []span
	low := asciiLower(s)
	for pos := 0; ; {
		k := strings.Index(low[pos:], "password")
		if k < 0 {
			return spans
		}
		k += pos
		pos = k + len("password")
		j := pos
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j >= len(s) || s[j] != '=' {
			continue
		}
		j++
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		query := k > 0 && (s[k-1] == '?' || s[k-1] == '&')
		if end := valueEnd(s, j, query); end > j && s[j:end] != hidden {
			spans = append(spans, span{j, end})
		}
	}
}

// asciiLower lowers ASCII letters only, so that indexes into the result
// are indexes into s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// valueEnd is where the value starting at s[j] ends. A query-string value
// ends at white space, "#" or an "&" that starts the next parameter. A
// key/value one ends at white space that no quote or backslash protects:
// a quote ('...' or "...") opens a segment at the value's start and,
// once it did, the same quote opens one anywhere in the value (as the
// shell quotes a quote inside quotes); a quote counts as closing
// only when no backslash precedes it; a run of backslashes protects the
// character after it.
func valueEnd(s string, j int, query bool) int {
	k := j
	if query {
		for ; k < len(s); k++ {
			c := s[k]
			if isSpace(c) || c == '#' || (c == '&' && startsParam(s[k+1:])) {
				return k
			}
		}
		return k
	}
	var quote byte // the quote the value started with, if any
	for k < len(s) {
		c := s[k]
		switch {
		case isSpace(c):
			return k
		case c == '\\':
			for k < len(s) && s[k] == '\\' {
				k++
			}
			if k < len(s) {
				k++
			}
		case (c == '\'' || c == '"') && k == j, c == quote && quote != 0:
			quote = c
			k = closeQuote(s, k+1, c)
		default:
			k++
		}
	}
	return k
}

// closeQuote is the index after the quote q that closes a quoted segment
// starting at s[k], or len(s) when none does.
func closeQuote(s string, k int, q byte) int {
	for ; k < len(s); k++ {
		if s[k] == q && s[k-1] != '\\' {
			return k + 1
		}
	}
	return len(s)
}

// startsParam says whether s starts with a query parameter's name and "=".
func startsParam(s string) bool {
	n := 0
	for n < len(s) && (s[n] == '_' || 'a' <= s[n] && s[n] <= 'z' || 'A' <= s[n] && s[n] <= 'Z') {
		n++
	}
	return n > 0 && n < len(s) && s[n] == '='
}

// userinfoSpans finds the password of every "user:password@" in the text.
func userinfoSpans(s string) []span {
	var spans []span
	for start := 0; start < len(s); {
		for start < len(s) && isSpace(s[start]) {
			start++
		}
		end := start
		for end < len(s) && !isSpace(s[end]) {
			end++
		}
		if lo, hi := userinfoPassword(s, start, end); hi > lo && s[lo:hi] != hidden {
			spans = append(spans, span{lo, hi})
		}
		start = end
	}
	return spans
}

// userinfoPassword finds the user-info password in the word s[start:end]:
// s[lo:hi], or lo == hi when there is none. The user-info starts after the
// word's first "//" when no ":" but the scheme's comes before it, and at
// the word's start otherwise; the user name runs to the first ":". With an "@" in the word the password
// runs to its last "@"; with none, a URL whose ":" is not followed by a
// port lost its "@" to white space, and the password runs to the last "@"
// before the next "//" or line break (or the word's end when there is no
// "@").
func userinfoPassword(s string, start, end int) (lo, hi int) {
	word := s[start:end]
	at := strings.LastIndexByte(word, '@')
	info := 0
	if d := strings.Index(word, "//"); d >= 0 && (at < 0 || d < at) &&
		!strings.Contains(strings.TrimSuffix(word[:d], ":"), ":") {
		info = d + 2 // after "scheme://" or "scheme//"
	} else if at < 0 {
		return 0, 0
	}
	colon := -1
	for i := info; i < len(word); i++ {
		c := word[i]
		if c == ':' {
			colon = i
			break
		}
		if c == '@' || c == '[' || (at < 0 && (c == '/' || c == '?' || c == '#')) {
			break
		}
	}
	if colon < 0 {
		return 0, 0
	}
	if at > colon {
		return start + colon + 1, start + at
	}
	if at >= 0 || isPort(word[colon+1:]) {
		return 0, 0
	}
	// No "@" in the word: look for one beyond it, before the next URL or
	// line.
	rest := s[end:]
	if n := strings.Index(rest, "//"); n >= 0 {
		rest = rest[:n]
	}
	if n := strings.IndexByte(rest, '\n'); n >= 0 {
		rest = rest[:n]
	}
	if n := strings.LastIndexByte(rest, '@'); n >= 0 {
		return start + colon + 1, end + n
	}
	return start + colon + 1, end
}

// isPort says whether s starts with a port number that ends the host part.
func isPort(s string) bool {
	n := 0
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	return n == len(s) || strings.IndexByte("/?#\"'),;", s[n]) >= 0
}

// RedactRun applies Redact to every text of a run that a command line, a
// DSN or an error may have reached: its command, configuration, error,
// headline and items. Runs are redacted before they are stored; reading
// them through RedactRun also hides what a store written by an older
// numalab kept.
func RedactRun(r *Run) {
	r.Command = Redact(r.Command)
	r.Config = RedactJSON(r.Config)
	r.Error = Redact(r.Error)
	r.Headline = Redact(r.Headline)
	for i := range r.Results {
		r.Results[i].Body = RedactJSON(r.Results[i].Body)
	}
}

// RedactWithDSN is Redact, and then hides, wherever they appear in s, the
// password dsn holds and its pieces between "@", ":" and "/" (of three
// bytes or more). A driver may read a malformed DSN other than Redact does
// (taking "u:a@b@host" as password "a" at host "b@host") and quote those
// pieces in its errors ("lookup b@host: no such host"), where no pattern
// shows them to be a password: errors built from a DSN go through here.
func RedactWithDSN(s, dsn string) string {
	s = Redact(s)
	var secrets []string
	for _, sp := range append(keywordSpans(dsn), userinfoSpans(dsn)...) {
		v := dsn[sp.lo:sp.hi]
		secrets = append(secrets, v)
		if u, err := url.PathUnescape(v); err == nil {
			secrets = append(secrets, u)
		}
		secrets = append(secrets, strings.FieldsFunc(v, func(r rune) bool {
			return r == '@' || r == ':' || r == '/' || r < 0x80 && isSpace(byte(r))
		})...)
	}
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, sec := range secrets {
		if len(sec) >= 3 && sec != hidden {
			s = strings.ReplaceAll(s, sec, hidden)
		}
	}
	return s
}

// LooksLikeDSN reports whether s, given where a file name is expected
// (--store, --db), looks like a connection string instead: a URL of any
// scheme ("mysql://u@h/db", "postgres://..."), text that holds a password
// Redact would hide ("u:PW@h", "password=PW"), or libpq's key=value form
// ("host=h dbname=x"). numalab never names a file after such a string: the
// file would carry the password, and the user meant a server.
func LooksLikeDSN(s string) bool {
	if Redact(s) != s || hasScheme(s) {
		return true
	}
	for _, w := range strings.Fields(s) {
		k, _, ok := strings.Cut(w, "=")
		if ok && slices.Contains(libpqKeys, asciiLower(k)) {
			return true
		}
		if strings.Contains(w, "@tcp(") || strings.Contains(w, "@unix(") { // Go's MySQL driver
			return true
		}
	}
	return false
}

// libpqKeys are the keys of libpq's key=value connection strings that a
// file name would hardly start a word with.
var libpqKeys = []string{"host", "hostaddr", "port", "dbname", "user", "password", "passfile",
	"sslmode", "sslrootcert", "connect_timeout", "application_name", "service", "target_session_attrs"}

// hasScheme says whether s starts with a URL's "scheme://".
func hasScheme(s string) bool {
	i := strings.Index(s, "://")
	if i <= 0 {
		return false
	}
	for k, c := range s[:i] {
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (k == 0 || !('0' <= c && c <= '9' || c == '+' || c == '.' || c == '-')) {
			return false
		}
	}
	return true
}
