package store

import (
	"errors"
	"fmt"

	"github.com/numalab/numalab/internal/result"
)

// OpenToRead is OpenReadOnly for a command that only reads runs: with no
// store at path, the error says how to make one.
func OpenToRead(path string) (*Store, error) {
	st, err := OpenReadOnly(path)
	if errors.Is(err, ErrNoStore) {
		return nil, fmt.Errorf("no store at %s yet (give --store FILE, or measure first: numalab probe mem --quick)",
			result.Redact(path))
	}
	return st, err
}

// GetRuns reads the runs ids, or with none the latest run of each of
// kinds (LatestOfEach), with their machines and items and every password
// hidden (result.RedactRun: a store from an older numalab may hold one).
// With no ids and no run of those kinds it returns none.
func (s *Store) GetRuns(ids []int64, kinds []string) ([]*result.Run, error) {
	if len(ids) == 0 {
		var err error
		if ids, err = s.LatestOfEach(kinds); err != nil {
			return nil, err
		}
	}
	var runs []*result.Run
	for _, id := range ids {
		r, err := s.Get(id)
		if err != nil {
			return nil, err
		}
		result.RedactRun(r)
		runs = append(runs, r)
	}
	return runs, nil
}
