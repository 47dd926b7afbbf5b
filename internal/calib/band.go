package calib

import (
	"fmt"

	"github.com/numalab/numalab/internal/model"
)

// CalibrationBand is the band of a calibration's fit: with an interval on
// M, the workloads at its ends, A refitted through the centre of the
// points; otherwise the published stall share's ends through the measured
// point (StallBand).
func CalibrationBand(c *Calibration) model.Band {
	if f := c.Fit; f != nil && f.MInterval != nil {
		var x, y float64
		for _, r := range f.Residuals {
			x += model.LatencyCycles(r.LatencyNS, r.GHz)
			y += r.CyclesPerTxn
		}
		x /= float64(len(f.Residuals))
		y /= float64(len(f.Residuals))
		b := model.Band{Text: fmt.Sprintf(
			"M from %s to %s (the fit's 95%% interval over %d points), A refitted each time through the points' centre",
			model.Thousands(f.MInterval.Low), model.Thousands(f.MInterval.High), f.Points)}
		for _, m := range []float64{f.MInterval.Low, f.MInterval.High} {
			if m > 0 && y-m*x >= 0 {
				b.Variants = append(b.Variants, model.FromCycles(y-m*x, m))
			}
		}
		return b
	}
	if len(c.Points) == 0 {
		return model.StallBand(c.Workload, c.OneSocketNS, c.GHz)
	}
	return model.StallBand(c.Workload, c.Points[0].LatencyNS, c.GHz)
}
