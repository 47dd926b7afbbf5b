// Package calib calibrates the model (package model) to a machine and a
// workload: it is the model's only reader of stored runs and topologies.
// From a memory probe it takes the clock and the local and remote
// latencies (ReadProbe); from a topology or a stored run, the machine's
// sockets, cores and node latencies (MachineSpec, TopologyMachine,
// StoredMachine); from an OLTP run and a measured fit (MeasuredFit), A and
// M with their intervals, held-out checks of the fit at cells it did not
// use (HeldOut), and the SMT gain where the run measured it (Calibrate).
// Every input of a calibrated prediction is an Assumption that says
// whether it was measured, fitted or assumed, and where it came from.
//
// What it computes is package calibrated's values (the calibrated Model,
// its Assumptions, the held-out checks, the stored MeasuredFit, each
// engine's EngineCost, the probe's ProbeLatency), which calib also names:
// decide and report read them without calibrating.
//
// It opens nothing itself (a store is read through the Stored interface
// its caller opens), measures nothing, and decides nothing about what to
// buy (package decide does).
package calib
