// Package fleet answers "are these identical servers really the same?":
// it takes the latest comparable run of each host in one or more results
// stores, and for each figure (DRAM latency, bandwidth, tpcc-ro tps per
// core) gives the fleet's median, each host's deviation from it and an
// outlier verdict (Rule), and it lists the preflight settings that differ
// between hosts, so that an outlier comes with its likely cause.
//
// It only reads stores, and renders to an io.Writer (text, JSON, HTML); it
// does not open stores or files itself, measure anything, or judge a
// single machine against an absolute standard: only hosts against each
// other.
package fleet

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/workload/null"
)

// Kinds are the run kinds a fleet compares, in the order of its figures.
var Kinds = []string{result.RunProbeMem, result.RunOLTP, null.RunKind}

// ErrMixedKinds is returned when runs of different kinds are asked to be
// compared.
var ErrMixedKinds = errors.New("runs of different kinds cannot be compared")

// Store is what fleet reads from a results store.
type Store interface {
	Path() string
	List() ([]result.Run, error)
	Get(id int64) (*result.Run, error)
}

// Source is a run as read, with the store it came from.
type Source struct {
	Store string
	Run   *result.Run
}

// RunRef names a host's run in the output.
type RunRef struct {
	Store   string    `json:"store"`
	ID      int64     `json:"id"`
	Kind    string    `json:"kind"`
	Started time.Time `json:"started"`
}

// Host is one host of the fleet: the runs its figures come from, the
// kinds it has no comparable run of, and its verdict.
type Host struct {
	Name      string            `json:"name"`
	Runs      []RunRef          `json:"runs"`
	Missing   []string          `json:"missing,omitempty"` // run kinds with no complete run
	Preflight *preflight.Report `json:"preflight,omitempty"`
	Outlier   bool              `json:"outlier"`
	// Causes are the preflight settings in which the host differs from
	// most hosts, and Warnings the preflight warnings most hosts do not
	// carry: for an outlier host, its likely causes.
	Causes   []Cause  `json:"causes,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// Cause is a setting in which a host differs from most hosts.
type Cause struct {
	Setting string `json:"setting"`
	Value   string `json:"value"`
	Usual   string `json:"usual"` // the value most hosts have
}

// Difference is a preflight setting whose value is not the same on every
// host: each host's value, in host order ("" when the host stored no
// preflight or lacks the setting).
type Difference struct {
	Setting string   `json:"setting"`
	Values  []string `json:"values"`
}

// Fleet is the comparison.
type Fleet struct {
	Stores      []string     `json:"stores"`
	Hosts       []Host       `json:"hosts"`
	Figures     []Figure     `json:"figures"`
	Differences []Difference `json:"differences"`
	Rule        string       `json:"rule"`
}

// Select reads, from every store, the runs to compare: with no ids, the
// latest complete run of each of Kinds for every host (the latest by start
// time when stores share a host); with ids (one store only), those runs,
// which must be of one kind and of different hosts. It also returns the
// hosts to show, sorted: with no ids every host that has any run in the
// stores, so that a host without a comparable run is listed rather than
// dropped; with ids, the hosts of those runs.
func Select(stores []Store, ids []int64) ([]Source, []string, error) {
	if len(ids) > 0 && len(stores) != 1 {
		return nil, nil,
			fmt.Errorf("run ids name runs of one store: give one --store with them, or none to take each host's latest runs")
	}
	hostSet := map[string]bool{}
	type key struct{ host, kind string }
	latest := map[key]struct {
		store Store
		run   result.Run
	}{}
	for _, st := range stores {
		runs, err := st.List()
		if err != nil {
			return nil, nil, err
		}
		for _, r := range runs {
			hostSet[r.Host] = true
			if len(ids) > 0 || r.Status != result.StatusComplete || !slices.Contains(Kinds, r.Kind) {
				continue
			}
			k := key{r.Host, r.Kind}
			if old, ok := latest[k]; !ok || r.Started.After(old.run.Started) {
				latest[k] = struct {
					store Store
					run   result.Run
				}{st, r}
			}
		}
	}
	hosts := slices.Sorted(maps.Keys(hostSet))
	var out []Source
	if len(ids) > 0 {
		seen := map[string]int64{}
		for _, id := range ids {
			r, err := stores[0].Get(id)
			if err != nil {
				return nil, nil, err
			}
			if len(out) > 0 && r.Kind != out[0].Run.Kind {
				return nil, nil, fmt.Errorf("%w: run %d is %s, run %d is %s (give runs of one kind)",
					ErrMixedKinds, out[0].Run.ID, out[0].Run.Kind, r.ID, r.Kind)
			}
			if !slices.Contains(Kinds, r.Kind) {
				return nil, nil, fmt.Errorf("run %d is a %s run: a fleet compares %v runs", r.ID, r.Kind, Kinds)
			}
			if prev, ok := seen[r.Host]; ok {
				return nil, nil, fmt.Errorf("runs %d and %d are both of host %s: give one run per host", prev, r.ID, r.Host)
			}
			seen[r.Host] = r.ID
			out = append(out, Source{Store: stores[0].Path(), Run: r})
		}
		named := slices.Sorted(maps.Keys(seen))
		return out, named, nil
	}
	keys := slices.SortedFunc(maps.Keys(latest),
		func(a, b key) int { return cmp.Or(cmp.Compare(a.host, b.host), cmp.Compare(a.kind, b.kind)) })
	for _, k := range keys {
		l := latest[k]
		r, err := l.store.Get(l.run.ID)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, Source{Store: l.store.Path(), Run: r})
	}
	return out, hosts, nil
}

// Build compares the hosts: hosts lists every host to show, sources their
// runs (at most one of each kind per host, as Select returns).
func Build(stores []string, hosts []string, sources []Source) (*Fleet, error) {
	f := &Fleet{Stores: stores, Rule: RuleText}
	index := map[string]int{}
	for i, h := range hosts {
		index[h] = i
		f.Hosts = append(f.Hosts, Host{Name: h})
	}
	kinds := map[string]bool{}
	for _, s := range sources {
		kinds[s.Run.Kind] = true
	}
	for _, s := range sources {
		i, ok := index[s.Run.Host]
		if !ok {
			return nil, fmt.Errorf("run %d: host %q is not among the hosts", s.Run.ID, s.Run.Host)
		}
		h := &f.Hosts[i]
		h.Runs = append(h.Runs, RunRef{Store: s.Store, ID: s.Run.ID, Kind: s.Run.Kind, Started: s.Run.Started})
		pf, err := preflight.Kind.Last(s.Run)
		if err != nil {
			return nil, err
		}
		if pf != nil && (h.Preflight == nil || s.Run.Kind == result.RunProbeMem) {
			h.Preflight = pf
		}
	}
	for i := range f.Hosts {
		for _, k := range Kinds {
			if kinds[k] && !slices.ContainsFunc(f.Hosts[i].Runs, func(r RunRef) bool { return r.Kind == k }) {
				f.Hosts[i].Missing = append(f.Hosts[i].Missing, k)
			}
		}
		if len(f.Hosts[i].Runs) == 0 && len(f.Hosts[i].Missing) == 0 {
			f.Hosts[i].Missing = slices.Clone(Kinds)
		}
	}
	figs, err := figures(hosts, sources)
	if err != nil {
		return nil, err
	}
	f.Figures = figs
	for i := range f.Figures {
		judge(&f.Figures[i])
	}
	f.Differences = differences(f.Hosts)
	for i := range f.Hosts {
		h := &f.Hosts[i]
		for _, fig := range f.Figures {
			if fig.Hosts[i].Verdict == Outlier {
				h.Outlier = true
			}
		}
		if h.Outlier {
			h.Causes = causes(i, f.Differences)
			h.Warnings = unusualWarnings(h, f.Hosts)
		}
	}
	return f, nil
}

// differences are the settings with more than one value among the hosts
// that stored a preflight.
func differences(hosts []Host) []Difference {
	var names []string
	for _, h := range hosts {
		if h.Preflight == nil {
			continue
		}
		for _, s := range h.Preflight.Settings {
			if !slices.Contains(names, s.Name) {
				names = append(names, s.Name)
			}
		}
	}
	var out []Difference
	for _, n := range names {
		d := Difference{Setting: n}
		for _, h := range hosts {
			d.Values = append(d.Values, setting(h.Preflight, n))
		}
		if len(distinct(d.Values)) > 1 {
			out = append(out, d)
		}
	}
	return out
}

// distinct are the non-empty values of vs, each once.
func distinct(vs []string) []string {
	var out []string
	for _, v := range vs {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func setting(r *preflight.Report, name string) string {
	if r == nil {
		return ""
	}
	for _, s := range r.Settings {
		if s.Name == name {
			return s.Value
		}
	}
	return ""
}

// causes are the differing settings in which host i has not the most
// common value.
func causes(i int, diffs []Difference) []Cause {
	var out []Cause
	for _, d := range diffs {
		if usual := mode(d.Values); d.Values[i] != usual && d.Values[i] != "" {
			out = append(out, Cause{Setting: d.Setting, Value: d.Values[i], Usual: usual})
		}
	}
	return out
}

// unusualWarnings are h's preflight warnings that at most half of the
// hosts with a preflight carry.
func unusualWarnings(h *Host, hosts []Host) []string {
	if h.Preflight == nil {
		return nil
	}
	var out []string
	for _, w := range h.Preflight.Warnings {
		with, all := 0, 0
		for _, o := range hosts {
			if o.Preflight == nil {
				continue
			}
			all++
			if slices.ContainsFunc(o.Preflight.Warnings, func(x preflight.Warning) bool { return x.Setting == w.Setting }) {
				with++
			}
		}
		if 2*with <= all {
			out = append(out, w.String())
		}
	}
	return out
}

// mode is the most common non-empty value, the first such on a tie.
func mode(vs []string) string {
	best, n := "", 0
	for _, v := range vs {
		if c := countOf(vs, v); v != "" && c > n {
			best, n = v, c
		}
	}
	return best
}

func countOf(vs []string, v string) int {
	n := 0
	for _, x := range vs {
		if x == v {
			n++
		}
	}
	return n
}
