package decide

import (
	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/published"
)

// Choose is the report's two answers for the model calibrated in c: the
// buy decision among the built-in candidates derived from the probed CPU
// (BuyCalibrated), with the band the calibration supports, and among the
// built-in catalogue's real CPUs (BuyCatalogueCalibrated). Each is nil
// when it cannot be made: c made no prediction (no table), the candidates
// could not be priced, or the catalogue has no row for it; the report
// then says there is nothing to choose between.
func Choose(c *calib.Calibration, thisCPU string) (own, catalogue *Purchase) {
	if c == nil || len(c.Table.Rows) == 0 {
		return nil, nil
	}
	own, err := BuyCalibrated(c, 0, nil)
	if err != nil {
		own = nil
	}
	cat, err := published.BuiltinCatalogue()
	if err != nil {
		return own, nil
	}
	catalogue, err = BuyCatalogueCalibrated(c, cat, thisCPU)
	if err != nil || len(catalogue.Rows) == 0 {
		return own, nil
	}
	return own, catalogue
}
