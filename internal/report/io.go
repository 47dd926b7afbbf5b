package report

import "github.com/numalab/numalab/internal/result"

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
