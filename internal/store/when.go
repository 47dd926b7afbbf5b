package store

import (
	"errors"
	"time"
)

// ParseWhen reads a bound of a Filter: a date or time in UTC, RFC 3339,
// or a duration before now ("24h"); "" is no bound (the zero time).
func ParseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04",
		"2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New(
		"is not a time: want a date (2026-11-21), a UTC time (2026-11-21T06:00), RFC 3339, or a duration ago (24h)")
}
