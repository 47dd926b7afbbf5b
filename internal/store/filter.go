package store

import (
	"errors"
	"time"

	"github.com/numalab/numalab/internal/setting"
)

// ParseFilter is the Filter of a host, a kind and the bounds since and
// until as ParseWhen reads them. Every bad bound is reported, named as
// the runs command's flag that gives it (-since, -until), and so is a
// since not before until, which no run could match.
func ParseFilter(host, kind, since, until string, now time.Time) (Filter, error) {
	f := Filter{Host: host, Kind: kind}
	var errs []error
	var err error
	if f.Since, err = ParseWhen(since, now); err != nil {
		errs = append(errs, setting.Errorf("since", "%q %v", since, err))
	}
	if f.Until, err = ParseWhen(until, now); err != nil {
		errs = append(errs, setting.Errorf("until", "%q %v", until, err))
	}
	if len(errs) == 0 && !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		errs = append(errs,
			setting.Together([]string{"since", "until"}, "%s is not before %s: no run could match", since, until))
	}
	return f, errors.Join(errs...)
}
