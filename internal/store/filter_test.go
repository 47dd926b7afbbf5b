package store

import (
	"strings"
	"testing"
	"time"
)

// TestParseFilter: bounds read as ParseWhen reads them, every bad one
// named by its flag, and bounds that no run could match refused.
func TestParseFilter(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	f, err := ParseFilter("h1", "oltp", "24h", "2026-11-21T06:00", now)
	want := Filter{Host: "h1", Kind: "oltp", Since: now.Add(-24 * time.Hour),
		Until: time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)}
	if err != nil || f != want {
		t.Errorf("ParseFilter: %+v, %v\nwant %+v", f, err, want)
	}
	if f, err := ParseFilter("", "", "", "", now); err != nil || f != (Filter{}) {
		t.Errorf("no bounds: %+v, %v; want the zero filter", f, err)
	}
	_, err = ParseFilter("", "", "yesterday", "soon", now)
	if err == nil || !strings.Contains(err.Error(), `-since: "yesterday" is not a time`) ||
		!strings.Contains(err.Error(), `-until: "soon" is not a time`) {
		t.Errorf("bad bounds: %v; want both named", err)
	}
	if _, err := ParseFilter("", "", "1h", "2h", now); err == nil ||
		err.Error() != "-since and -until: 1h is not before 2h: no run could match" {
		t.Errorf("since after until: %v", err)
	}
}
