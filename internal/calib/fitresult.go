package calib

import (
	"cmp"
	"fmt"
	"io"

	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
)

// FitResult is a fit to measured points and, when a machine was given, the
// model's table for the fitted workload on it.
type FitResult struct {
	Fit         model.Fit    `json:"fit"`
	Predictions *model.Table `json:"predictions,omitempty"`
}

// FitAndPredict fits pts (FitPoints) and, with a machine (nil: none, read
// once the fit succeeded), predicts the fitted workload on it over g
// (Predict, sockets for up to one by default); socketsFlag is --sockets
// as given.
func FitAndPredict(pts []model.Point, machine func() (MachineSpec, error), g model.Grid, socketsFlag string) (FitResult, error) {
	fit, err := model.FitPoints(pts)
	if err != nil {
		return FitResult{}, fmt.Errorf("fitting --points: %w", err)
	}
	out := FitResult{Fit: fit}
	if machine == nil {
		return out, nil
	}
	s, err := machine()
	if err != nil {
		return FitResult{}, err
	}
	tab, err := s.Predict(fit.Workload, g, socketsFlag)
	if err != nil {
		return FitResult{}, err
	}
	out.Predictions = &tab
	return out, nil
}

// WriteFitResult prints the fit (WriteFit), then its predictions (WriteTable).
func WriteFitResult(w io.Writer, f FitResult) error {
	if err := model.WriteFit(w, f.Fit); err != nil {
		return err
	}
	if f.Predictions == nil {
		return nil
	}
	fmt.Fprintln(w, "\nPredictions for the fitted workload:")
	return model.WriteTable(w, *f.Predictions)
}

// OLTPRunLabel names OLTPRun's kind in words: "OLTP run", "script run".
func (m *Calibration) OLTPRunLabel() string {
	return cmp.Or(m.oltpLabel, RunLabel(result.RunOLTP))
}

// RunLabel names a run the model is fitted to by its kind, in words: "OLTP
// run" (run oltp), "script run" (run sql, the user's scripts).
func RunLabel(kind string) string {
	if kind == result.RunSQL {
		return "script run"
	}
	return "OLTP run"
}
