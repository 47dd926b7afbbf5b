package report

import (
	"encoding/json"
	"fmt"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
)

func buildMemory(run *result.Run) (*Memory, error) {
	m := &Memory{Run: run.ID}
	var cfg memlat.Config
	if len(run.Config) > 0 {
		if err := json.Unmarshal(run.Config, &cfg); err != nil {
			return nil, fmt.Errorf("reading the configuration of run %d: %w", run.ID, err)
		}
	}
	m.Samples, m.WindowMS, m.Quick = cfg.Samples, cfg.WindowMS, cfg.Quick
	p, err := model.ReadProbe(run)
	if err != nil {
		return nil, err
	}
	m.Summary, m.GHz = p.Summary, p.GHz
	if m.Ladders, err = memlat.KindLadder.All(run); err != nil {
		return nil, err
	}
	if m.Matrix, err = memlat.KindMatrix.Last(run); err != nil {
		return nil, err
	}
	if m.MLP, err = memlat.KindMLP.Last(run); err != nil {
		return nil, err
	}
	if m.Bandwidth, err = memlat.KindBandwidth.Last(run); err != nil {
		return nil, err
	}
	return m, nil
}
