package store

import "github.com/numalab/numalab/internal/result"

// LatestIORatio is the random/sequential ratio of the latest complete
// 'probe io' run in the store at path; nil when there is none, or no
// store to read.
func LatestIORatio(path string) *result.IORatio {
	st, err := OpenReadOnly(path)
	if err != nil {
		return nil
	}
	defer st.Close()
	id, err := st.Latest(result.RunProbeIO, 0, result.StatusComplete)
	if err != nil || id == 0 {
		return nil
	}
	r, err := st.Get(id)
	if err != nil {
		return nil
	}
	p, err := result.KindIOProbe.Last(r)
	if err != nil || p == nil {
		return nil
	}
	return p.Ratio
}
