package calib

import (
	"fmt"
	"io"

	"github.com/numalab/numalab/internal/model"
)

// WriteCalibration prints how the model was calibrated to stored runs and
// its predictions.
func WriteCalibration(w io.Writer, c *Calibration) error {
	fmt.Fprintf(w, "Fit of %s %d with memory probe run %d:\n", c.OLTPRunLabel(), c.OLTPRun, c.ProbeRun)
	if c.FitChoice != "" {
		fmt.Fprintf(w, "  %s\n", c.FitChoice)
	}
	fmt.Fprintf(w, "  %s\n", c.Method)
	fmt.Fprintf(w, "  %s\n", c.Derived())
	if c.Fit != nil {
		fmt.Fprintf(w, "  R² of cycles per transaction: %.6f over %d points\n", c.Fit.R2, c.Fit.Points)
	}
	for _, n := range c.Statements() {
		fmt.Fprintf(w, "  %s\n", n)
	}
	if c.Measured != nil {
		for _, l := range c.Measured.Lines() {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	fmt.Fprintln(w, "\nPredictions for the fitted workload:")
	return model.WriteTable(w, c.Table)
}
