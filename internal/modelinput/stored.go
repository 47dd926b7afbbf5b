package modelinput

import (
	"fmt"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/hosts"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/workload/tpch"
)

// readStore calls f with the results store at path, opened to read.
func readStore(path string, f func(*store.Store) error) error {
	st, err := store.OpenToRead(path)
	if err != nil {
		return err
	}
	defer st.Close()
	return f(st)
}

// Calibrate calibrates the model to a stored OLTP run, its memory
// probe and a stored model-fit run (calib.CalibrateStored), in the store
// at storePath.
func Calibrate(storePath string, runID, probeID, fitID int64) (c *calib.Calibration, err error) {
	err = readStore(storePath, func(st *store.Store) (err error) {
		c, err = calib.CalibrateStored(st, runID, probeID, fitID)
		return err
	})
	return c, err
}

// SMTGain is the SMT gain a stored OLTP run's smt=on and smt=off cells
// measure (calib.StoredSMTGain, 'model --smt-run').
func SMTGain(storePath string, runID int64) (r model.Range, err error) {
	err = readStore(storePath, func(st *store.Store) (err error) {
		r, err = calib.StoredSMTGain(st, runID)
		return err
	})
	return r, err
}

// SecondsPerUnit is the seconds per cost unit fitted in a stored tpch
// run's analysis ('model dop --run').
func SecondsPerUnit(storePath string, runID int64) (secs float64, err error) {
	err = readStore(storePath, func(st *store.Store) error {
		run, err := st.Get(runID)
		if err != nil {
			return err
		}
		if run.Kind != tpch.RunKind {
			return fmt.Errorf("-run: run %d is a %s run, not a tpch run (try 'numalab runs --kind tpch')", runID, run.Kind)
		}
		an, err := tpch.KindAnalysis.Last(run)
		if err == nil && (an == nil || an.Cost == nil || !(an.Cost.SecondsPerUnit > 0)) {
			err = fmt.Errorf("-run: tpch run %d has no fitted seconds per cost unit (it needs plan costs of 3 or more "+
				"queries: PostgreSQL or DuckDB, not SQLite)", runID)
		}
		if err == nil {
			secs = an.Cost.SecondsPerUnit
		}
		return err
	})
	return secs, err
}

// runCPUModel is the CPU model name a stored run recorded ("" when it
// recorded none).
func runCPUModel(storePath string, runID int64) (model string, err error) {
	err = readStore(storePath, func(st *store.Store) error {
		run, err := st.Get(runID)
		if err == nil && run.Machine != nil {
			model = run.Machine.CPUModel
		}
		return err
	})
	return model, err
}

// CompareHosts opens the stores to read and compares their hosts
// (hosts.CompareStores).
func CompareHosts(paths []string, sel hosts.Selection, prices []hosts.Price) (*hosts.Comparison, error) {
	var stores []hosts.Store
	for _, p := range paths {
		st, err := store.OpenToRead(p)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		stores = append(stores, st)
	}
	return hosts.CompareStores(stores, sel, prices)
}
