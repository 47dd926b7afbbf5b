package main

import (
	"context"
	"errors"
	"flag"
	"strconv"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/curve"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// definePacingFlags defines the flags of sweep.Pacing on fs: how a run's
// cells are paced.
func definePacingFlags(fs *flag.FlagSet) {
	cliflag.RangedDuration(fs, "think", 0, 0, time.Hour, "closed loop with a think `time` after each call, e.g. 10ms, up to 1h (0: none; see --think-dist)")
	fs.String("think-dist", "", "think times: fixed (the default) or exp (exponential with mean --think)")
	fs.Float64("rate", 0, "open loop: calls per `second` over all streams, each stream taking its share on its own schedule; latency runs from each call's intended start, and calls that start over 1ms late are counted (0: closed loop)")
	fs.String("arrivals", "", "arrivals of --rate (or --curve): poisson (the default) or uniform")
}

// pacingSettings are the settings of the flags of definePacingFlags.
func pacingSettings(p *sweep.Pacing) cliflag.Settings {
	return cliflag.Settings{cliflag.Optional(cliflag.Duration("think", &p.Think)), cliflag.Optional(cliflag.Str("think-dist", &p.ThinkDist)),
		cliflag.Optional(cliflag.Float("rate", &p.Rate)), cliflag.Optional(cliflag.Str("arrivals", &p.Arrivals))}
}

// defineLoadFlags defines the flags of sweep.Load on fs: the pacing
// flags and run oltp's load curve.
func defineLoadFlags(fs *flag.FlagSet) {
	definePacingFlags(fs)
	fs.Bool("curve", false, "a load curve: a closed-loop cell for the capacity (first stream count and placement), then open-loop cells at --curve-at fractions of it; reports throughput, p50/p95/p99 from intended start and CPU % against offered load, and the knee")
	fs.String("curve-at", "", "fractions of the capacity for --curve, e.g. 0.1,0.5,0.9,1.2 (default "+formatFloats(curve.DefaultFractions)+")")
	fs.Float64("knee-factor", 0, "for --curve: the knee is the first load whose p99 exceeds this many times its low-load floor (default "+strconv.FormatFloat(curve.DefaultFactor, 'g', -1, 64)+")")
}

// loadSettings are the settings of the flags of defineLoadFlags.
func loadSettings(l *sweep.Load) cliflag.Settings {
	return append(pacingSettings(&l.Pacing), cliflag.Optional(cliflag.Bool("curve", &l.Curve)),
		cliflag.Optional(cliflag.Field("curve-at", &l.CurveAt, parseFloats, formatFloats)),
		cliflag.Optional(cliflag.Float("knee-factor", &l.KneeFactor)))
}

// pacedKind is the kind a run of kind stores under: kind itself for
// closed loops, kind-paced when p paces the cells, so that no table, fleet
// or model that reads kind's runs as capacity mixes in paced cells, whose
// throughput is their schedule's.
func pacedKind(kind string, p sweep.Pacing) string {
	if p.Paced() {
		return kind + "-paced"
	}
	return kind
}

// curveDefaults fills a curve's unset fractions and knee factor, so that
// the stored command spells them.
func curveDefaults(l *sweep.Load) {
	if !l.Curve {
		return
	}
	if len(l.CurveAt) == 0 {
		l.CurveAt = curve.DefaultFractions
	}
	if l.KneeFactor == 0 {
		l.KneeFactor = curve.DefaultFactor
	}
}

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, errors.New("-curve-at: " + strconv.Quote(s) + " is not a list of numbers: want e.g. 0.1,0.5,0.9,1.2")
		}
		out = append(out, v)
	}
	return out, nil
}

func formatFloats(v []float64) string {
	s := make([]string, len(v))
	for i, f := range v {
		s[i] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

// runOLTPCurve runs --curve: the capacity cell, the paced cells at their
// fractions of it, each stored as it is measured, then the curve and its
// knee, stored and printed.
func runOLTPCurve(ctx context.Context, e *env, cfg tpcc.RunConfig, storePath string, asJSON bool) error {
	spec := cfg.Spec()
	spec.Streams, spec.Placements, spec.Repeat, spec.Neighbour = cfg.Streams[:1], cfg.Placements[:1], 1, false
	_, one, prog, err := startSweep(e, sweepOut{asJSON: asJSON, spread: cfg.Spread, machine: true}, tpcc.WriteRow, spec)
	if err != nil {
		return err
	}
	defer prog.Done()
	rec, err := startRun(ctx, e.withArgs(oltpArgv(cfg)), storePath, curve.RunKind, cfg)
	if err != nil {
		return err
	}
	plan := cfg.Plan(curve.Plan(one[0], cfg.CurveAt, cfg.Repeat))
	plan.Pace = curve.Pacer(cfg.CurveAt, cfg.Pacing, cfg.Seed)
	prog.Note("--curve: cell 0 is the closed-loop capacity; the others are paced at fractions of it")
	tpcc.WriteHeader(prog.table)
	measured, err := sweep.Run(ctx, plan, tpcc.NewSweep(cfg, one[0].DataNode), rec, prog)
	cv := curve.Analyze(measured, cfg.CurveAt, cfg.KneeFactor)
	if len(measured) > 1 {
		err = errors.Join(err, rec.Add(curve.KindCurve.Of(cv)))
		curve.WriteText(prog.table, cv)
	}
	return finishRun(e, rec, err, curve.Headline(cv), asJSON, struct {
		Cells []*result.Cell `json:"cells"`
		Curve curve.Curve    `json:"curve"`
	}{append([]*result.Cell{}, measured...), cv})
}
