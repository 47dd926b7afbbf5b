// Package modelinput assembles the inputs of numalab's model commands
// ('model', 'model size', 'model fit', 'model dop', 'model buy', 'model
// validate'): the flags they share, each defined once (the workload,
// a machine's latencies and figures, or the topology file or stored run
// that gives them; --fit-run), checked together; the files and stored
// runs they name, read (a calibration to a stored OLTP run, a stored SMT
// gain, a tpch run's seconds per cost unit, the catalogue, the candidates,
// the published results, the hosts' stores); and model buy's purchase
// from its inputs (Buy), by the decide function they call for.
//
// It computes nothing of its own (the model is model's, the calibration
// calib's, the decision decide's, the comparison hosts'), prints nothing,
// and opens stores and files only to read.
package modelinput
