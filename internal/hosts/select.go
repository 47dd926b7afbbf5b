package hosts

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/setting"
)

// Store is what Select reads from a results store (store.Store has it).
type Store interface {
	Path() string
	List() ([]result.Run, error)
	Get(id int64) (*result.Run, error)
	Latest(kind string, before int64, statuses ...string) (int64, error)
	Resolve(text string) (int64, error)
}

// Source is one host's run to compare, with what was read beside it.
type Source struct {
	Store string      // as messages show it (a URL without its password)
	Run   *result.Run // the OLTP run, or the run of the user's scripts
	// Probe is the host's latest memory probe stored before Run in the
	// same store; nil with none.
	Probe *result.Run
	// Fit is the model calibrated to Run, its probe and the host's
	// newest model-fit run in the store (calib.CalibrateStored); nil
	// when it could not be (FitError says why).
	Fit      *calib.Calibration
	FitError string
}

// Selection says which runs to compare: Runs names them (IDs of the one
// store, or UIDs, 8 or more characters, in any of the stores), one per
// host; without, each host's latest complete closed-loop OLTP run,
// on Engine when it is not "".
type Selection struct {
	Engine string
	Runs   []string
}

// ErrNoRuns is returned when the stores hold no run to compare.
var ErrNoRuns = errors.New("no run to compare")

// Select reads, from the stores, one run per host as sel says, with its
// memory probe and its calibration, sorted by host; and, without
// sel.Runs, a note for each host that stored runs but none to compare,
// saying why, so that no candidate drops out unsaid.
func Select(stores []Store, sel Selection) ([]Source, []string, error) {
	type found struct {
		st  Store
		run result.Run
	}
	var picks []found
	if len(sel.Runs) > 0 {
		for _, text := range sel.Runs {
			st, id, err := resolve(stores, text)
			if err != nil {
				return nil, nil, err
			}
			r, err := st.Get(id)
			if err != nil {
				return nil, nil, err
			}
			if i := slices.IndexFunc(picks, func(f found) bool { return f.run.Host == r.Host }); i >= 0 {
				return nil, nil,
					setting.Errorf("run", "runs %d and %d are both of host %s: give one run per host", picks[i].run.ID, r.ID, r.Host)
			}
			picks = append(picks, found{st, *r})
		}
	}
	var left []string
	if len(sel.Runs) == 0 {
		latest := map[string]found{}
		seen := map[string]string{} // host: why it has no run to compare
		for _, st := range stores {
			runs, err := st.List()
			if err != nil {
				return nil, nil, err
			}
			for _, r := range runs {
				if _, ok := seen[r.Host]; !ok {
					seen[r.Host] = "no OLTP run"
				}
				if r.Kind != result.RunOLTP {
					continue
				}
				m, err := Measured(&r)
				switch {
				case err != nil:
					seen[r.Host] = err.Error()
				case sel.Engine != "" && m.Engine != sel.Engine:
					seen[r.Host] = "no OLTP run on " + sel.Engine
				case m.Loop != closedLoop:
					seen[r.Host] = fmt.Sprintf("run %d is %s", r.ID, m.Loop)
				case r.Status != result.StatusComplete:
					seen[r.Host] = fmt.Sprintf("run %d is %s", r.ID, r.Status)
				default:
					if old, ok := latest[r.Host]; !ok || r.Started.After(old.run.Started) {
						latest[r.Host] = found{st, r}
					}
				}
			}
		}
		for _, h := range slices.Sorted(maps.Keys(seen)) {
			if f, ok := latest[h]; ok {
				picks = append(picks, f)
			} else {
				left = append(left,
					fmt.Sprintf("host %s: no complete closed-loop OLTP run to compare (the last seen: %s)", h, seen[h]))
			}
		}
	}
	if len(picks) == 0 {
		on := ""
		if sel.Engine != "" {
			on = " on " + sel.Engine
		}
		return nil, left, fmt.Errorf("%w: no complete closed-loop OLTP run%s in %s (measure each host first: "+
			"'numalab eval --store STORE', or 'numalab run oltp --repeat 3')",
			ErrNoRuns, on, strings.Join(paths(stores), ", "))
	}
	slices.SortFunc(picks, func(a, b found) int { return cmp.Compare(a.run.Host, b.run.Host) })
	var out []Source
	for _, p := range picks {
		src, err := source(p.st, p.run.ID)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, src)
	}
	return out, left, nil
}

// resolve finds the run text names: an ID when there is one store, else
// a UID (or 8 or more of its first characters) in whichever store has it.
func resolve(stores []Store, text string) (Store, int64, error) {
	if len(stores) == 1 {
		id, err := stores[0].Resolve(text)
		return stores[0], id, err
	}
	if len(text) < 8 || strings.Trim(text, "0123456789") == "" {
		return nil, 0, setting.Errorf("run",
			"%q: with %d stores a run is named by its UID, 8 or more characters of it ('numalab runs --store STORE' shows them)",
			text, len(stores))
	}
	var errs []error
	for _, st := range stores {
		id, err := st.Resolve(text)
		if err == nil {
			return st, id, nil
		}
		errs = append(errs, err)
	}
	return nil, 0, setting.Wrap("run", errors.Join(errs...))
}

// source reads run id of st with its host's probe and calibration.
func source(st Store, id int64) (Source, error) {
	r, err := st.Get(id)
	if err != nil {
		return Source{}, err
	}
	src := Source{Store: st.Path(), Run: r}
	runs, err := st.List()
	if err != nil {
		return src, err
	}
	var probeID, fitID int64
	for _, o := range runs {
		if o.Host != r.Host {
			continue
		}
		switch {
		case o.Kind == result.RunProbeMem && o.ID < id &&
			(o.Status == result.StatusComplete || o.Status == result.StatusInterrupted):
			probeID = o.ID
		case o.Kind == calib.RunFit && o.Status == result.StatusComplete:
			fitID = o.ID
		}
	}
	if probeID == 0 {
		src.FitError = fmt.Sprintf(
			"no memory probe of host %s stored before run %d in %s: no clock, latency or fit ('numalab probe mem')",
			r.Host, id, st.Path())
		return src, nil
	}
	if src.Probe, err = st.Get(probeID); err != nil {
		return src, err
	}
	if src.Fit, err = calib.CalibrateStored(st, id, probeID, fitID); err != nil {
		src.Fit, src.FitError = nil, err.Error()
	}
	return src, nil
}

func paths(stores []Store) []string {
	var out []string
	for _, st := range stores {
		out = append(out, st.Path())
	}
	return out
}

// CompareStores selects each host's run in stores (Select) and compares
// them (Compare), saying which hosts were left out and why; fewer than two
// hosts with a run to compare is an error that says how to measure them.
func CompareStores(stores []Store, sel Selection, prices []Price) (*Comparison, error) {
	var names []string // as messages may show them: a URL without its password
	for _, st := range stores {
		names = append(names, st.Path())
	}
	srcs, left, err := Select(stores, sel)
	if err == nil && len(srcs) < 2 {
		who := "no host has"
		if len(srcs) == 1 {
			who = "only host " + srcs[0].Run.Host + " has"
		}
		err = fmt.Errorf("%s a run to compare in %s: measure each candidate into a store "+
			"('numalab eval --store STORE' on each) and give every store",
			who, strings.Join(names, ", "))
	}
	if err != nil {
		if len(left) > 0 {
			err = fmt.Errorf("%w; left out: %s", err, strings.Join(left, "; "))
		}
		return nil, err
	}
	c, err := Compare(names, srcs, prices)
	if err != nil {
		return nil, err
	}
	c.LeftOut = left
	return c, nil
}
