package calib

import (
	"fmt"
	"io"

	"github.com/numalab/numalab/internal/model"
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
func FitAndPredict(pts []model.Point, machine func() (MachineSpec, error), g model.Grid,
	socketsFlag string) (FitResult, error) {
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
