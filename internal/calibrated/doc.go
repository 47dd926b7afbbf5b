// Package calibrated is the values of a model calibrated to stored runs,
// which package calib computes and decide and report read: the calibrated
// Model with its prediction table, every input as an Assumption (measured,
// fitted or assumed, and from where), the held-out checks (HeldOut,
// OtherLatency), a RunFit run's MeasuredFit with its own fit and held-out
// cells, each engine's EngineCost, and the clock and latencies a memory
// probe gives (ReadProbe). Their methods put them in words.
//
// It calibrates nothing: it reads no run but a memory probe's and a
// measured fit's own results, and a report that imports it imports no
// calibration (issue #50).
package calibrated
