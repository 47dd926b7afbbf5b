package model

import (
	"fmt"
	"io"
)

// FitResult is a fit to measured points and, when a machine was given, the
// model's table for the fitted workload on it.
type FitResult struct {
	Fit         Fit    `json:"fit"`
	Predictions *Table `json:"predictions,omitempty"`
}

// WriteFitResult prints the fit (WriteFit), then its predictions (WriteTable).
func WriteFitResult(w io.Writer, f FitResult) error {
	if err := WriteFit(w, f.Fit); err != nil {
		return err
	}
	if f.Predictions == nil {
		return nil
	}
	fmt.Fprintln(w, "\nPredictions for the fitted workload:")
	return WriteTable(w, *f.Predictions)
}
