package result

import "testing"

func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"numalab run --dsn postgres://bob:s3cret@db:5432/x", "numalab run --dsn postgres://bob:xxxxx@db:5432/x"},
		{"postgres://bob@db/x", "postgres://bob@db/x"},
		{"host=db user=bob password=s3cret dbname=x", "host=db user=bob password=xxxxx dbname=x"},
		{"host=db PASSWORD = 'a b' x=1", "host=db PASSWORD = xxxxx x=1"},
		{"postgres://db/x?user=bob&password=s3cret&sslmode=off", "postgres://db/x?user=bob&password=xxxxx&sslmode=off"},
		{"numalab topo --json", "numalab topo --json"},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
