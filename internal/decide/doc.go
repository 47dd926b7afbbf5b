// Package decide answers "which server should I buy" with the model
// (package model): every candidate's predicted throughput and cost per
// 1,000 tps with the band its uncertain inputs leave (Uncertainty), the
// winner on each measure, the decision or "cannot tell" with the
// measurement that would tell, the value at which each assumed input
// would flip it, and the remote fraction at which one socket and several
// cost the same. Candidates come from a TOML file (ParseCandidates), are
// derived from this CPU (BuiltinCandidates), calibrated (BuyCalibrated,
// from package calib) or given as flags (BuyGiven), or are the published
// catalogue's CPUs, ranked (CatalogueCandidates, BuyCatalogueCalibrated,
// BuyCatalogueGiven; the catalogue is package published's).
//
// It does no I/O beyond the writer it is given, measures nothing and
// reads no stored run; its built-in prices are illustrative, and say so;
// the catalogue's are dated list prices of the CPUs alone, and say so.
package decide
