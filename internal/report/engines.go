package report

import (
	"fmt"
	"html/template"
	"strconv"

	"github.com/numalab/numalab/internal/calibrated"
)

// AnchorEngines is the engines' fits side by side in the model section.
const AnchorEngines = AnchorModel + "-engines"

// enginesFigure is what memory latency costs each engine here: each
// engine's share of its no-wait throughput kept at each latency (the
// model's latencies of 1, 2 and 4 sockets marked), and the table of its
// fit; false with fewer than one fitted engine.
func enginesFigure(r *Report) (Plot, Table, bool) {
	if len(r.Engines) == 0 {
		return Plot{}, Table{}, false
	}
	c := Chart{ID: AnchorEngines, Title: "What memory latency costs each engine here",
		X: Scale{Label: "memory latency ns", Format: FmtSig, Zero: true},
		Y: Scale{Label: "tps per core kept, A / (A + M·L·f)", Format: FmtSig, Zero: true}}
	head := []string{"engine", "workload", "fit run", "A core cycles", "M waits", "R²", "held-out error",
		"stall share (1 socket)"}
	for _, s := range calibrated.PredictSockets {
		head = append(head, Plural(s, "socket")+" tps per core")
	}
	tb := Table{ID: AnchorEngines + "-table",
		Caption: "Each engine's own measured fit (95% intervals); " +
			"tps per core at this machine's latencies of 1, 2 and 4 sockets, one thread per core", Head: head}
	marked := false
	for _, e := range r.Engines {
		if e.NoFit != "" {
			tb.Rows = append(tb.Rows, append([]string{e.Engine, e.Workload, strconv.FormatInt(e.FitRun, 10),
				"no fit: " + e.NoFit}, make([]string, len(head)-4)...))
			continue
		}
		held := "–"
		if e.HeldOut != nil {
			held = fmt.Sprintf("%+.1f%%", 100**e.HeldOut)
		}
		row := []string{e.Engine, e.Workload, strconv.FormatInt(e.FitRun, 10), FmtN(e.A) + e.AInterval.Parenthesised(),
			FmtN(e.M) + e.MInterval.Parenthesised(),
			FmtF(e.R2, 3), held, FmtF(100*e.StallShare, 0) + "%"}
		for i, t := range e.TPSPerCore {
			row = append(row, fmt.Sprintf("%s (%s×)", FmtN(t), FmtF(e.VsOne[i], 2)))
		}
		tb.Rows = append(tb.Rows, row)
		sr := Series{Name: e.Engine + " " + e.Workload}
		for i, ns := range calibrated.CurveNS {
			sr.Points = append(sr.Points, Point{X: ns, Y: e.Left[i]})
		}
		c.Series = append(c.Series, sr)
		if !marked {
			for i, ns := range e.SocketNS {
				c.VLines = append(c.VLines, VLine{X: ns, Text: Plural(calibrated.PredictSockets[i], "socket")})
			}
			marked = true
		}
	}
	if len(c.Series) == 0 {
		return Plot{}, tb, true
	}
	return Plot{ID: AnchorEngines, SVG: template.HTML(c.SVG())}, tb, true
}
