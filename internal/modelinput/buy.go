package modelinput

import (
	"errors"
	"fmt"
	"os"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/decide"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/published"
)

// Buy is model buy's input: what it chooses among (Candidates, a
// catalogue, or the built-in candidates from this CPU), and what it
// calibrates to: a stored OLTP run (Run), or this CPU's figures as given
// (CPU).
type Buy struct {
	Workload      model.Workload
	Candidates    string // a TOML file ("": built in)
	Catalogue     bool   // the built-in catalogue
	CatalogueFile string
	ThisCPU       string
	// Run, ProbeRun and FitRun are the stored runs of the calibration
	// (calib.CalibrateStored) in Store; Run 0: the figures of CPU.
	Run, ProbeRun, FitRun int64
	Store                 string
	// SMT is the threads per core of the built-in SMT candidate with Run
	// (0: the run's).
	SMT int
	// CPU is this CPU's figures without Run (nil: the candidates file
	// anchors the band).
	CPU *decide.GivenCPUFigures

	servers []decide.Server
	cat     *published.Catalogue
}

// Read reads the catalogue and the candidates file named, and checks
// --this-cpu against them; the refusals come back together.
func (b *Buy) Read() cliflag.Errs {
	var errs cliflag.Errs
	var err error
	b.cat, err = readCatalogue(b.Catalogue, b.CatalogueFile, b.Candidates != "")
	errs = append(errs, err)
	if b.Candidates != "" {
		data, err := os.ReadFile(b.Candidates)
		if err != nil {
			errs = append(errs, fmt.Errorf("-candidates: %w", err))
		} else if b.servers, err = decide.ParseCandidates(b.Candidates, data); err != nil {
			errs = append(errs, err)
		}
	}
	errs.BadIf(b.ThisCPU != "" && b.cat == nil, "this-cpu", b.ThisCPU,
		"needs --catalogue or --catalogue-file: it names the CPU the catalogue's per-core figures are taken against")
	if b.ThisCPU != "" && b.cat != nil {
		_, _, ok := b.cat.PerCoreOf(b.ThisCPU)
		errs.BadIf(!ok, "this-cpu", b.ThisCPU,
			"names no catalogue or reference CPU with a per-core figure "+
				"(see internal/published/data/cpus.json, e.g. \"AMD EPYC 7763\")")
	}
	return errs
}

// NeedsCPU says, once Read, whether Buy without Run needs this CPU's
// figures: nothing else anchors the built-in candidates.
func (b *Buy) NeedsCPU() bool { return b.Candidates == "" && b.cat == nil }

// Purchase is the decision (decide.BuyCalibrated, BuyCatalogueCalibrated,
// BuyGiven or BuyCatalogueGiven) on b, once Read.
func (b *Buy) Purchase() (*decide.Purchase, error) {
	if b.Run == 0 {
		if b.cat != nil {
			return decide.BuyCatalogueGiven(b.Workload, b.CPU, b.cat, b.ThisCPU)
		}
		return decide.BuyGiven(b.Workload, b.CPU, b.servers)
	}
	c, err := Calibrate(b.Store, b.Run, b.ProbeRun, b.FitRun)
	if err != nil {
		return nil, err
	}
	if b.cat == nil {
		return decide.BuyCalibrated(c, b.SMT, b.servers)
	}
	cpu := b.ThisCPU
	if cpu == "" {
		if cpu, err = runCPUModel(b.Store, b.Run); err != nil {
			return nil, err
		}
	}
	return decide.BuyCatalogueCalibrated(c, b.cat, cpu)
}

// readCatalogue is --catalogue's built-in catalogue or --catalogue-file's;
// nil with neither.
func readCatalogue(builtin bool, file string, candidates bool) (*published.Catalogue, error) {
	switch {
	case builtin && file != "":
		return nil, errors.New("-catalogue and -catalogue-file: give one (the built-in catalogue or yours)")
	case (builtin || file != "") && candidates:
		return nil, errors.New("-candidates and a catalogue: choose among one set of candidates")
	case builtin:
		return published.BuiltinCatalogue()
	case file != "":
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("-catalogue-file: %w", err)
		}
		return published.ParseCatalogue(file, data)
	}
	return nil, nil
}

// Results are the published results of file, or the built-in ones ("").
func Results(file string) (*published.Results, error) {
	if file == "" {
		return published.BuiltinResults()
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("-results: %w", err)
	}
	return published.ParseResults(file, data)
}
