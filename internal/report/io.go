package report

import (
	"cmp"
	"slices"

	"github.com/numalab/numalab/internal/iobench"
	"github.com/numalab/numalab/internal/result"
)

func buildIO(run *result.Run) (*IO, error) {
	probe, err := result.KindIOProbe.Last(run)
	if err != nil {
		return nil, err
	}
	io := &IO{Run: run.ID}
	if probe != nil {
		io.Probe = probe
		return io, nil
	}
	// Interrupted before the summary: the patterns alone.
	pats, err := result.KindIOPattern.All(run)
	if err != nil {
		return nil, err
	}
	io.Probe = &result.IOProbe{Patterns: pats, Interrupted: true}
	return io, nil
}

// IOSpan is one storage probe's 8 KiB random reads against queue depth,
// with the span its data covered (the file's size when it had none).
type IOSpan struct {
	Run    int64         `json:"run"`
	Span   int64         `json:"span"`
	Points []IOSpanPoint `json:"points"`
}

// IOSpanPoint is the random reads per second at one queue depth.
type IOSpanPoint struct {
	QD   int     `json:"qd"`
	IOPS float64 `json:"iops"`
}

// ioSpans reads each probe's random reads, smallest span first.
func ioSpans(runs []*result.Run) ([]IOSpan, error) {
	var out []IOSpan
	for _, run := range runs {
		x, err := buildIO(run)
		if err != nil {
			return nil, err
		}
		sp := IOSpan{Run: run.ID, Span: max(x.Probe.Span, x.Probe.FileSize)}
		for _, p := range x.Probe.Patterns {
			if p.Name == iobench.RandRead && p.BlockSize == iobench.PageSize {
				sp.Points = append(sp.Points, IOSpanPoint{QD: p.QD, IOPS: p.Read.IOPS})
			}
		}
		out = append(out, sp)
	}
	slices.SortStableFunc(out, func(a, b IOSpan) int { return cmp.Compare(a.Span, b.Span) })
	return out, nil
}
