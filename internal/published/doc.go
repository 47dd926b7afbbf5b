// Package published holds the public record numalab's model is checked
// against and chooses among, each figure with the document it was read in:
// audited TPC-E results of one CPU at two socket counts with the memory
// latencies the model needs for them (tpc.json, 'numalab model validate'),
// and a catalogue of server CPUs with cores, clocks, memory channels, a
// memory latency band and a dated list price ('numalab model buy
// --catalogue', through package decide).
//
// The data files are embedded (data/), parsed from bytes, and checked when
// read: every row names a source that the file lists, and every figure is
// in a plausible range; a broken file is refused with the file, the row and
// the field. Validate predicts each result pair's throughput ratio with the
// model (package model) and its band, beside the published ratio.
//
// It does no I/O beyond the writer it is given and the files embedded in
// it, and it invents no figure: a missing fact stays missing (an all-core
// clock of 0 is "not published"), and docs/model.md says what is missing.
package published
