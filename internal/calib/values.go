package calib

import (
	"github.com/numalab/numalab/internal/calibrated"
	"github.com/numalab/numalab/internal/result"
)

// The values a calibration is made of live in package calibrated, which
// decide and report read without calibrating; calib names them too.
type (
	Assumption    = calibrated.Assumption
	CellCounters  = calibrated.CellCounters
	EngineCost    = calibrated.EngineCost
	FitCell       = calibrated.FitCell
	FitMemory     = calibrated.FitMemory
	HeldOut       = calibrated.HeldOut
	MeasuredFit   = calibrated.MeasuredFit
	NeighbourPair = calibrated.NeighbourPair
	OtherLatency  = calibrated.OtherLatency
	ProbeLatency  = calibrated.ProbeLatency
)

// Kinds of run and result, bases and names of assumptions: calibrated's.
const (
	RunFit          = calibrated.RunFit
	KindMeasuredFit = calibrated.KindMeasuredFit
	AnotherLatency  = calibrated.AnotherLatency

	Measured = calibrated.Measured
	Fitted   = calibrated.Fitted
	Assumed  = calibrated.Assumed

	AssumeClock        = calibrated.AssumeClock
	AssumeOneSocket    = calibrated.AssumeOneSocket
	AssumeLocal        = calibrated.AssumeLocal
	AssumeRemote       = calibrated.AssumeRemote
	AssumeBuffer       = calibrated.AssumeBuffer
	AssumeSMT          = calibrated.AssumeSMT
	AssumeA            = calibrated.AssumeA
	AssumeM            = calibrated.AssumeM
	AssumeInstructions = calibrated.AssumeInstructions
	AssumeMiss         = calibrated.AssumeMiss

	MinSpread = calibrated.MinSpread
)

// PredictSockets and CurveNS are calibrated's.
var (
	PredictSockets = calibrated.PredictSockets
	CurveNS        = calibrated.CurveNS
)

// RunLabel names a run the model is fitted to by its kind (calibrated.RunLabel).
func RunLabel(kind string) string { return calibrated.RunLabel(kind) }

// ReadProbe chooses the clock and latencies of a stored memory probe
// (calibrated.ReadProbe).
func ReadProbe(probe *result.Run) (ProbeLatency, error) { return calibrated.ReadProbe(probe) }
