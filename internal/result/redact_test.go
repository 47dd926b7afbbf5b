package result

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// well-formed URLs
		{"numalab run --dsn postgres://bob:s3cret@db:5432/x", "numalab run --dsn postgres://bob:xxxxx@db:5432/x"},
		{"postgresql://bob:s3cret@db/x?sslmode=disable", "postgresql://bob:xxxxx@db/x?sslmode=disable"},
		{"--dsn=postgres://bob:s3cret@db/x", "--dsn=postgres://bob:xxxxx@db/x"},
		{"postgres://:s3cret@db/x", "postgres://:xxxxx@db/x"},
		{"postgres://bob:p%40ss%20w@db/x", "postgres://bob:xxxxx@db/x"},
		// no password: left alone
		{"postgres://bob@db/x", "postgres://bob@db/x"},
		{"postgres://db:5432/x", "postgres://db:5432/x"},
		{"postgres://bob@[::1]:5432/x", "postgres://bob@[::1]:5432/x"},
		{"numalab topo --json", "numalab topo --json"},
		{"dial tcp 127.0.0.1:55499: connect: connection refused", "dial tcp 127.0.0.1:55499: connect: connection refused"},
		{"write to bob@example.com: no", "write to bob@example.com: no"},
		{"password authentication failed for user \"bob\"", "password authentication failed for user \"bob\""},
		// malformed URLs, as the issue found them
		{"--dsn postgres//u:Sekr3tPW@127.0.0.1:55499/udb", "--dsn postgres//u:xxxxx@127.0.0.1:55499/udb"},
		{"--dsn u:Sekr3tPW@127.0.0.1:55499/udb", "--dsn u:xxxxx@127.0.0.1:55499/udb"},
		{`reading PostgreSQL DSN "postgres//u:Sekr3tPW@127.0.0.1:55499/udb": invalid`,
			`reading PostgreSQL DSN "postgres//u:xxxxx@127.0.0.1:55499/udb": invalid`},
		{`reading PostgreSQL DSN "u:Sekr3tPW@127.0.0.1:55499/udb": invalid`,
			`reading PostgreSQL DSN "u:xxxxx@127.0.0.1:55499/udb": invalid`},
		{"postgres:/u:pw@h/db", "postgres:xxxxx@h/db"},
		// raw "@", ":" and "/" in a URL password
		{"postgres://bob:p@ss@db/x", "postgres://bob:xxxxx@db/x"},
		{"postgres://bob:a:b/c@d@db:5432/x", "postgres://bob:xxxxx@db:5432/x"},
		{"postgres://bob:a//b@db/x", "postgres://bob:xxxxx@db/x"},
		// raw white space in a URL password: hidden up to the last "@"
		{"--dsn postgres://bob:two words@db/x --streams 1", "--dsn postgres://bob:xxxxx@db/x --streams 1"},
		{"postgres://bob:Sekr3t/x", "postgres://bob:xxxxx"},
		// keyword/value
		{"host=db user=bob password=s3cret dbname=x", "host=db user=bob password=xxxxx dbname=x"},
		{"host=db PASSWORD = 'a b' x=1", "host=db PASSWORD = xxxxx x=1"},
		{`host=db password='it\'s here' dbname=x`, "host=db password=xxxxx dbname=x"},
		{`host=db password=Sekr3t\ PWesc dbname=x`, "host=db password=xxxxx dbname=x"},
		{`host=db password=back\\slash dbname=x`, "host=db password=xxxxx dbname=x"},
		{`host=db password='unclosed dbname=x`, "host=db password=xxxxx"},
		{"host=db password= spaced dbname=x", "host=db password= xxxxx dbname=x"},
		{"host=db sslpassword=keypw", "host=db sslpassword=xxxxx"},
		{`host=db password=a"b dbname=x`, "host=db password=xxxxx dbname=x"},
		// as Go's %q quotes a DSN in an error
		{`reading PostgreSQL DSN "host=db password=Sekr3t\\ PWesc": bad`,
			`reading PostgreSQL DSN "host=db password=xxxxx bad`},
		{`DSN "host=db password='a\\'b c'": bad`, `DSN "host=db password=xxxxx bad`},
		// query string
		{"postgres://db/x?user=bob&password=s3cret&sslmode=off", "postgres://db/x?user=bob&password=xxxxx&sslmode=off"},
		{"postgres://db/x?password=a&b&sslmode=off", "postgres://db/x?password=xxxxx&sslmode=off"},
		{"postgres://db/x?sslmode=off&PASSWORD=s3cret#frag", "postgres://db/x?sslmode=off&PASSWORD=xxxxx#frag"},
		// environment, as a stored command may carry it
		{"PGPASSWORD=s3cret numalab run report --dsn postgres://bob@db/x",
			"PGPASSWORD=xxxxx numalab run report --dsn postgres://bob@db/x"},
		{`PGPASSWORD='two words' numalab runs`, "PGPASSWORD=xxxxx numalab runs"},
		{`PGPASSWORD="two words" numalab runs`, "PGPASSWORD=xxxxx numalab runs"},
		{`PGPASSWORD='it'\''s' numalab runs`, "PGPASSWORD=xxxxx numalab runs"},
		// two DSNs in one text
		{"a postgres://u:p1@h1/d and postgres://v:p2@h2/d", "a postgres://u:xxxxx@h1/d and postgres://v:xxxxx@h2/d"},
	} {
		got := Redact(c.in)
		if got != c.want {
			t.Errorf("Redact(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
		if again := Redact(got); again != got {
			t.Errorf("Redact is not idempotent on %q: %q", got, again)
		}
	}
}

func TestRedactJSON(t *testing.T) {
	in := `{"engine":"postgres","dsn":"host=h password='a \"b' dbname=x","rows":10,"list":["postgres://u:pw@h/d"],` +
		`"PGPassword" : "pw2","password_file":"","passwords":["not a value"],"user":"password"}`
	want := `{"engine":"postgres","dsn":"host=h password=xxxxx dbname=x","rows":10,"list":["postgres://u:xxxxx@h/d"],` +
		`"PGPassword" : "xxxxx","password_file":"","passwords":["not a value"],"user":"password"}`
	if got := string(RedactJSON([]byte(in))); got != want {
		t.Errorf("RedactJSON\n = %s\nwant %s", got, want)
	}
	if got := string(RedactJSON([]byte("password=pw not json"))); got != "password=xxxxx not json" {
		t.Errorf("RedactJSON of text = %q", got)
	}
}

// pgx reads "u:at@Sekr3tPW@h" as password "at" at host "Sekr3tPW@h" and
// quotes that host; only the DSN tells that it holds the password.
func TestRedactWithDSN(t *testing.T) {
	const dsn = "postgres://u:at@Sekr3tPW@127.0.0.1:1/udb"
	msg := `connecting to PostgreSQL "` + dsn + `": hostname resolving error: lookup Sekr3tPW@127.0.0.1: no such host`
	want := `connecting to PostgreSQL "postgres://u:xxxxx@127.0.0.1:1/udb": ` +
		`hostname resolving error: lookup xxxxx@127.0.0.1: no such host`
	if got := RedactWithDSN(msg, dsn); got != want {
		t.Errorf("RedactWithDSN\n = %q\nwant %q", got, want)
	}
	if got := RedactWithDSN("lookup db: no such host", "postgres://u@db/x"); got != "lookup db: no such host" {
		t.Errorf("a DSN with no password changed the text: %q", got)
	}
}

func TestRedactRun(t *testing.T) {
	r := Run{
		Command: "numalab run report --dsn postgres//u:pw1@h/db",
		Config:  []byte(`{"dsn":"host=h password=pw2"}`),
		Error:   `reading PostgreSQL DSN "u:pw3@h/db": bad`,
		Results: []Item{{Kind: "query", Body: []byte(`{"error":"password=pw4 refused"}`)}},
	}
	RedactRun(&r)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, pw := range []string{"pw1", "pw2", "pw3", "pw4"} {
		if strings.Contains(string(b), pw) {
			t.Errorf("%s is still in the run: %s", pw, b)
		}
	}
	if !strings.Contains(string(b), `"error":"password=xxxxx refused"`) {
		t.Errorf("the item is not redacted as expected: %s", b)
	}
}

// dsnShapes are the ways a password reaches text: each builds a DSN or a
// command line around pw and returns it with the forms of pw it carries
// (the password itself and, where the shape encodes it, its encoding).
var dsnShapes = []struct {
	name  string
	build func(pw string) (text string, forms []string)
}{
	{"url", func(pw string) (string, []string) {
		u := url.URL{Scheme: "postgres", User: url.UserPassword("bob", pw), Host: "db:5432", Path: "/x"}
		enc := strings.TrimPrefix(strings.TrimSuffix(u.String(), "@db:5432/x"), "postgres://bob:")
		return u.String(), []string{pw, enc}
	}},
	{"url raw", func(pw string) (string, []string) { return "postgres://bob:" + pw + "@db:5432/x", []string{pw} }},
	{"url no colon",
		func(pw string) (string, []string) { return "postgres//u:" + pw + "@127.0.0.1:55499/udb", []string{pw} }},
	{"url no scheme", func(pw string) (string, []string) { return "u:" + pw + "@127.0.0.1:55499/udb", []string{pw} }},
	{"url query", func(pw string) (string, []string) {
		enc := url.QueryEscape(pw)
		return "postgres://bob@db/x?sslmode=disable&password=" + enc + "&application_name=n", []string{pw, enc}
	}},
	{"keyword quoted", func(pw string) (string, []string) {
		q := "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "'"
		return "host=db user=bob password=" + q + " dbname=x", []string{pw}
	}},
	{"keyword escaped", func(pw string) (string, []string) {
		var b strings.Builder
		for _, r := range pw {
			if r == ' ' || r == '\\' || r == '\'' || r == '\t' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		return "host=db password = " + b.String() + " dbname=x", []string{pw}
	}},
	{"environment", func(pw string) (string, []string) {
		return "PGPASSWORD='" + strings.ReplaceAll(pw, "'", `'\''`) +
			"' numalab run report --dsn postgres://bob@db/x", []string{pw}
	}},
}

// randomPassword draws 8 to 24 characters from an alphabet heavy in the
// characters DSN syntax cares about.
func randomPassword(rng *rand.Rand, urlSafe bool) string {
	const special = ` @:/?#&='"\%+;,[]{}<>|!$*()` + "\t"
	const plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~"
	var b strings.Builder
	for range 8 + rng.IntN(17) {
		switch x := rng.IntN(10); {
		case x < 4 && !urlSafe:
			c := special[rng.IntN(len(special))]
			b.WriteByte(c)
		case x == 4:
			b.WriteRune([]rune("éß€日本🔑")[rng.IntN(6)])
		default:
			b.WriteByte(plain[rng.IntN(len(plain))])
		}
	}
	return b.String()
}

// TestRedactNeverLeaks embeds 12,000 seeded random passwords in random DSN
// shapes and looks for any form of the password in the redacted DSN, in an
// error quoting the DSN (as %q and as %s, redacted as the engine's errors
// are), in a driver's error quoting pieces of it, in the stored command and
// in the stored configuration.
func TestRedactNeverLeaks(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 2))
	leaks := 0
	for i := range 12000 {
		shape := dsnShapes[rng.IntN(len(dsnShapes))]
		// A raw URL password cannot hold white space, and neither can any
		// user-info one that a URL parser is to find: those shapes draw
		// passwords without it.
		pw := randomPassword(rng, false)
		if shape.name == "url raw" || shape.name == "url no colon" || shape.name == "url no scheme" {
			pw = strings.Map(func(r rune) rune {
				if r == ' ' || r == '\t' {
					return '_'
				}
				return r
			}, pw)
		}
		dsn, forms := shape.build(pw)
		cfg, err := json.Marshal(struct {
			Engine string `json:"engine"`
			DSN    string `json:"dsn"`
			Rows   int    `json:"rows"`
		}{"postgres", dsn, 1000})
		if err != nil {
			t.Fatal(err)
		}
		texts := map[string]string{
			"redacted DSN": Redact(dsn),
			"%q error": Redact(
				fmt.Errorf("reading PostgreSQL DSN %q: %w", dsn, fmt.Errorf("cannot parse %s", dsn)).Error()),
			"%s error":       Redact(fmt.Sprintf("connecting to postgres %s: failed", dsn)),
			"stored command": Redact("numalab run report --engine postgres --dsn " + dsn + " --streams 1,2"),
			"stored config":  string(RedactJSON(cfg)),
		}
		// A driver that read the DSN its own way may quote any piece of it.
		var pieces []string
		for _, p := range strings.FieldsFunc(dsn, func(r rune) bool { return r == '@' || r == ' ' }) {
			pieces = append(pieces, "lookup "+p+": no such host")
		}
		texts["driver error"] = RedactWithDSN(strings.Join(pieces, "; "), dsn)
		var decoded struct{ DSN string }
		if err := json.Unmarshal([]byte(texts["stored config"]), &decoded); err != nil {
			t.Fatalf("the redacted config is not JSON: %v", err)
		}
		texts["stored config, decoded"] = decoded.DSN
		for where, text := range texts {
			for _, form := range forms {
				if strings.Contains(text, form) {
					leaks++
					if leaks <= 10 {
						t.Errorf("case %d (%s): %s leaks %q: %q", i, shape.name, where, form, text)
					}
				}
			}
		}
	}
	if leaks > 0 {
		t.Errorf("%d leaks in 12000 passwords", leaks)
	}
}

func TestLooksLikeDSN(t *testing.T) {
	for _, s := range []string{
		"host=127.0.0.1 password=hunter2 dbname=x",
		"host=/run/postgresql dbname=x",
		"dbname=x",
		"mysql://u:pw@h/db",
		"mysql://u@h/db",
		"postgres://u@h/db",
		"sqlite3://x.db",
		"u:pw@h/db",
		"u:pw@tcp(127.0.0.1:3306)/db",
		"root@unix(/run/mysqld/mysqld.sock)/db",
		"PGPASSWORD=pw",
	} {
		if !LooksLikeDSN(s) {
			t.Errorf("LooksLikeDSN(%q) = false: it is a connection string", s)
		}
	}
	for _, s := range []string{
		"numalab.db", "/tmp/results/numalab.db", "runs 2024.db", "a=b.db", "./x//y.db",
		"/srv/host-1/numalab.db", "numalab-tpcc-w1.duckdb", "my@file.db", "", "9://x",
	} {
		if LooksLikeDSN(s) {
			t.Errorf("LooksLikeDSN(%q) = true: it is a file name", s)
		}
	}
}
