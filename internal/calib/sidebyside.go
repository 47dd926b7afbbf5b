package calib

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
)

// EngineCosts calibrates the model to the memory probe among runs and to
// each engine's newest measured fit of each workload among them (RunFit
// runs: tpcc-ro, or the user's scripts), one row an engine and workload,
// in the order of their fit runs. An engine whose fit gave no A and M has
// a row saying why. Without a probe, nil.
func EngineCosts(runs ...*result.Run) ([]EngineCost, error) {
	var probe *result.Run
	newest := map[string]*result.Run{}
	var order []string
	for _, r := range runs {
		switch r.Kind {
		case result.RunProbeMem:
			probe = r
		case RunFit:
			f, err := KindMeasuredFit.Last(r)
			if err != nil || f == nil {
				continue
			}
			e := f.FitEngine() + "'s " + f.FitWorkload()
			if newest[e] == nil {
				order = append(order, e)
			}
			newest[e] = r
		}
	}
	if probe == nil {
		return nil, nil
	}
	var out []EngineCost
	for _, e := range order {
		row, err := engineCost(probe, newest[e], runs)
		if err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, nil
}

// engineCost is the row of the engine whose fit is in run.
func engineCost(probe, run *result.Run, runs []*result.Run) (EngineCost, error) {
	f, _ := KindMeasuredFit.Last(run)
	row := EngineCost{Engine: f.FitEngine(), Workload: f.FitWorkload(), FitRun: run.ID}
	with := []*result.Run{probe, run}
	if mr := result.MachineRun(runs); mr != nil && mr != probe {
		with = append(with, mr)
	}
	c, err := Calibrate(with...)
	if err != nil {
		return row, err
	}
	if c.FitRun != run.ID || c.Fit == nil {
		row.NoFit = cmp.Or(f.FitError, strings.Join(c.Notes, "; "))
		return row, nil
	}
	row.A, row.M, row.AInterval, row.MInterval, row.R2 = c.Fit.A, c.Fit.M, c.Fit.AInterval, c.Fit.MInterval, c.Fit.R2
	if e, ok := f.HeldOutMedian(); ok {
		row.HeldOut = &e
	}
	row.StallShare = c.StallShare
	for _, s := range PredictSockets {
		i := slices.IndexFunc(c.Table.Rows, func(r model.Row) bool { return r.Sockets == s && r.SMT == 1 })
		if i < 0 {
			continue
		}
		row.TPSPerCore = append(row.TPSPerCore, c.Table.Rows[i].TPSPerCore)
		row.VsOne = append(row.VsOne, c.Table.Rows[i].PerCoreVs1S)
		row.SocketNS = append(row.SocketNS, c.Table.Rows[i].LatencyNS)
	}
	for _, ns := range CurveNS {
		row.Left = append(row.Left, c.Fit.A/c.Fit.Cycles(ns, c.GHz))
	}
	return row, nil
}

// WriteEngineCosts prints rows as a table: what memory latency costs each
// engine here.
func WriteEngineCosts(w io.Writer, rows []EngineCost) error {
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w, "What memory latency costs each engine here (its own measured fit; per core, one thread):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "engine\tworkload\tfit run\tA core cycles\tM waits\tR²\theld-out\tstall share"
	for _, s := range PredictSockets {
		head += fmt.Sprintf("\t%dS tps/core", s)
	}
	fmt.Fprintln(tw, head+"\t")
	for _, r := range rows {
		if r.NoFit != "" {
			fmt.Fprintf(tw, "%s\t%s\t%d\tno fit: %s\t\n", r.Engine, r.Workload, r.FitRun, r.NoFit)
			continue
		}
		held := "-"
		if r.HeldOut != nil {
			held = fmt.Sprintf("%+.1f%%", 100**r.HeldOut)
		}
		line := fmt.Sprintf("%s\t%s\t%d\t%s%s\t%s%s\t%.3f\t%s\t%s",
			r.Engine, r.Workload, r.FitRun, model.Thousands(r.A), r.AInterval.Parenthesised(),
			model.Thousands(r.M), r.MInterval.Parenthesised(), r.R2, held, model.Percent(r.StallShare))
		for i, t := range r.TPSPerCore {
			line += fmt.Sprintf("\t%s (%.2f×)", model.Fixed(t, 0), r.VsOne[i])
		}
		fmt.Fprintln(tw, line+"\t")
	}
	return tw.Flush()
}
