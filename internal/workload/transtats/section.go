package transtats

import (
	"encoding/json"
	"fmt"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
)

// Report completes the report's reporting section, which the report
// builds itself (its findings and the SMT × DOP section read it): the
// engine's version as the run stored it, and the optimizer's estimated
// speedup against DOP beside the measured one (Estimates), or why there
// is none (NoEstimate).
var Report = report.Workload{
	Complete: func(r *report.Report, runs []*result.Run) error {
		q := r.Reporting
		if q == nil {
			return nil
		}
		for _, run := range runs {
			if run.ID != q.Run || run.Kind != result.RunQueries {
				continue
			}
			var cfg struct {
				Engine string `json:"engine"`
				DOP    []int  `json:"dop"`
			}
			if len(run.Config) > 0 {
				if err := json.Unmarshal(run.Config, &cfg); err != nil {
					return fmt.Errorf("reading the configuration of run %d: %w", run.ID, err)
				}
			}
			infos, err := engine.KindInfo.All(run)
			if err != nil {
				return err
			}
			if len(infos) > 0 {
				q.Version = infos[0].Version
			}
			cells, err := result.KindQueryCell.All(run)
			if err != nil {
				return err
			}
			ptrs := make([]*result.QueryCell, len(cells))
			for i := range cells {
				ptrs[i] = &cells[i]
			}
			q.Estimates, q.NoEstimate = Estimates(ptrs), NoEstimate(cfg.Engine, cfg.DOP)
			return nil
		}
		return nil
	},
}
