package tpcc

import (
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
)

// OLTPReport completes the report's OLTP section, which the report builds
// itself (the model and the findings read it): the warehouses are those
// the run's load record found, when it reused a database of another
// size. The load curve and monitoring runs of 'run oltp' have sections of
// their own (CurveReport, MonitorReport).
var OLTPReport = report.Workload{
	Complete: func(r *report.Report, runs []*result.Run) error {
		if r.OLTP == nil {
			return nil
		}
		for _, run := range runs {
			if run.ID != r.OLTP.Run || run.Kind != result.RunOLTP {
				continue
			}
			load, err := KindLoad.Last(run)
			if err != nil {
				return err
			}
			if load != nil && load.Meta.Warehouses > 0 {
				r.OLTP.Warehouses = load.Meta.Warehouses
			}
			return nil
		}
		return nil
	},
}
