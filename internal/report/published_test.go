package report

import (
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/model"
)

// TestPublishedCheck: the model section checks the model against the
// published results at its workload's stall share, says so in the HTML
// section's notes and the text report, and has nothing to check without
// a workload.
func TestPublishedCheck(t *testing.T) {
	for _, md := range []*Model{nil, {StallShare: 0.33}, {Table: model.Table{Rows: []model.Row{{Sockets: 1}}}}} {
		if v, err := publishedCheck(md); v != nil || err != nil {
			t.Errorf("publishedCheck(%+v) = %v, %v: want nothing without a workload and its stall share", md, v, err)
		}
	}
	md := &Model{StallShare: 0.33, Table: model.Table{Rows: []model.Row{{Sockets: 1, SMT: 1}}}}
	v, err := publishedCheck(md)
	if err != nil || v == nil || len(v.Checks) < 4 || v.Share != 0.33 {
		t.Fatalf("publishedCheck at 33%% = %+v, %v: want every published pair checked at that share", v, err)
	}
	line := publishedLine(v)
	if !strings.Contains(line, "stall share of 33%") || !strings.Contains(line, "numalab model validate") {
		t.Errorf("line %q: want the share and the command that shows each pair", line)
	}
	r := &Report{Model: md, Published: v}
	found := false
	for _, n := range modelSection(r).Notes {
		found = found || n == line
	}
	if !found {
		t.Errorf("model section notes %q: want %q", modelSection(r).Notes, line)
	}
	var b strings.Builder
	if err := WriteText(&b, r); err != nil || !strings.Contains(b.String(), line) {
		t.Errorf("text report (err %v) lacks %q", err, line)
	}
}
