package hosts

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/golden"
)

// TestRender pins the text, CSV, JSON and HTML of a comparison of two
// hosts of different shapes, one with a preflight warning.
func TestRender(t *testing.T) {
	c, err := compareSpecs(t, []Price{{Name: "a", Price: 9000, LicencePerCore: 50}, {Name: "b", Hourly: 1.2, Hours: 8760}},
		spec{host: "a", cores: 4, smt: 2, one: []float64{110, 112, 108}, two: []float64{205, 212, 209},
			warning: "hypervisor KVM"},
		spec{host: "b", cores: 8, smt: 1, one: []float64{90, 92, 91}, two: []float64{170, 176, 173}, latencyNS: 120})
	if err != nil {
		t.Fatal(err)
	}
	// The stores' paths are the test's temporary directories.
	for i := range c.Stores {
		c.Stores[i] = filepath.Base(c.Stores[i])
	}
	for i := range c.Hosts {
		c.Hosts[i].Store = filepath.Base(c.Hosts[i].Store)
	}
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"comparison.txt", func(b *bytes.Buffer) error { return WriteText(b, c) }},
		{"comparison.csv", func(b *bytes.Buffer) error { return WriteCSV(b, c) }},
		{"comparison.json", func(b *bytes.Buffer) error {
			enc := json.NewEncoder(b)
			enc.SetIndent("", "  ")
			return enc.Encode(c)
		}},
		{"comparison.html", func(b *bytes.Buffer) error { return WriteHTML(b, c) }},
	} {
		var b bytes.Buffer
		if err := f.write(&b); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		golden.Check(t, filepath.Join("testdata", f.name), b.Bytes())
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, c); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<title>numalab report", `id="hosts-cost-svg"`, `id="hosts-streams-svg"`,
		"a: hypervisor KVM", "2 sockets"} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML page lacks %q", want)
		}
	}
}
