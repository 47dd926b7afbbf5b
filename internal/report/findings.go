package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/conclusion"
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/units"
)

// Anchors of the report's sections, tables and charts; findings link to them.
const (
	AnchorMachine   = "machine"
	AnchorLadder    = "memory-ladder"
	AnchorLevels    = "memory-levels"
	AnchorMatrix    = "numa-matrix"
	AnchorMLP       = "memory-parallelism"
	AnchorOLTP      = "oltp"
	AnchorOLTPTable = "oltp-table"
	AnchorQueries   = "reporting"
	AnchorSpeedup   = "reporting-speedup"
	AnchorIO        = "io"
	AnchorModel     = "model"
	AnchorRuns      = "runs"
)

// findings writes the plain-language lines, most telling first: each one
// sentence with its figure, linking to the table or chart that shows it.
// The answers come first; the details (Finding.Detail) follow them.
func findings(r *Report) []Finding {
	// The first findings answer docs/questions.md (what memory costs,
	// what remote data and SMT do, how throughput scales, what more
	// sockets would give); the details follow.
	out, more := []Finding{}, []Finding{}
	add := func(anchor, format string, a ...any) {
		out = append(out, Finding{Anchor: anchor, Text: fmt.Sprintf(format, a...), Kind: FindingAnswer})
	}
	detail := func(anchor, format string, a ...any) {
		more = append(more, Finding{Anchor: anchor, Text: fmt.Sprintf(format, a...), Kind: FindingDetail})
	}
	// The decision first: the answer the report exists for.
	if line := DecisionLine(r); line != "" {
		add(AnchorBuy, "%s", line)
	}
	if m := r.Memory; m != nil && m.Summary != nil {
		s := m.Summary
		if d := m.DRAM; d != nil && d.GHz > 0 {
			uses := ""
			if md := r.Model; md != nil && md.FitRun != 0 && md.OneSocketNS != d.NS {
				uses = fmt.Sprintf("; the model uses %s ns, a chain mapped as the OLTP data is (run %d)",
					FmtF(md.OneSocketNS, 1), md.FitRun)
			}
			add(AnchorLadder, "DRAM latency %s ns = %s cycles at %s GHz (run %d)%s.",
				FmtF(d.NS, 1), FmtF(d.Cycles, 0), FmtF(d.GHz, 2), m.Run, uses)
			if v := dramVariants(m); len(v) > 0 {
				detail(AnchorLadder, "DRAM readings the model does not use: %s.", strings.Join(v, "; "))
			}
		}
		if s.DRAMNS4K > 0 && s.DRAMNS2M > 0 && s.PageBytes2M >= 2<<20 {
			// Each mapping's medians at the largest working set are the
			// repeats the test compares.
			d := stats.Compare(randomMedians(m, memlat.Pages4K), randomMedians(m, memlat.Pages2M))
			change := s.DRAMNS2M/s.DRAMNS4K - 1
			switch d.Verdict {
			case stats.Lower:
				detail(AnchorLadder, "Huge pages (2 MiB) cut random-chain latency from %s to %s ns (%s, TLB misses; %s).",
					FmtF(s.DRAMNS4K, 1), FmtF(s.DRAMNS2M, 1), PctAbs(-change), Evidence(d))
			case stats.CannotTell:
				detail(AnchorLadder,
					"Huge pages (2 MiB) measured %s ns against %s ns with 4 KiB pages on the random chain (%s; %s).",
					FmtF(s.DRAMNS2M, 1), FmtF(s.DRAMNS4K, 1), Pct(change), Evidence(d))
			default:
				detail(AnchorLadder,
					"Huge pages (2 MiB) did not lower random-chain latency: %s ns against %s ns with 4 KiB pages (%s; %s).",
					FmtF(s.DRAMNS2M, 1), FmtF(s.DRAMNS4K, 1), Pct(change), Evidence(d))
			}
		}
		if len(s.Levels) > 0 {
			var parts []string
			for _, l := range s.Levels {
				name := l.Name
				if name == "DRAM" {
					name = "memory"
				}
				parts = append(parts, fmt.Sprintf("%s %s ns (%s cycles)", name, FmtF(l.NS, 1), FmtF(l.NS*m.GHz, 0)))
			}
			detail(AnchorLevels, "Latency plateaus: %s.", strings.Join(parts, ", "))
			cacheFindings(s.Levels, detail)
		}
		if mx := m.Matrix; mx != nil {
			if mx.SingleNode || len(mx.MemNodes) < 2 {
				add(AnchorMatrix, "One NUMA node: remote latency cannot be measured on this machine.")
			} else if s.LocalNS > 0 && s.RemoteNS > 0 {
				add(AnchorMatrix, "Remote memory costs %s ns against %s ns local: %s× (%s nodes, run %d).",
					FmtF(s.RemoteNS, 1), FmtF(s.LocalNS, 1), FmtF(s.RemoteNS/s.LocalNS, 2), strconv.Itoa(len(mx.MemNodes)), m.Run)
			}
		}
		if p := mlpPeak(m.MLP); p != nil && p.InFlight > 1.5 {
			one := m.MLP.Points[0].NSPerLoad.Median
			if p.InFlight <= float64(p.Chains) {
				detail(AnchorMLP, "One core keeps %s misses in flight: %s ns per load with %d chains against %s ns with one.",
					FmtF(p.InFlight, 1), FmtF(p.NSPerLoad.Median, 1), p.Chains, FmtF(one, 1))
			} else {
				detail(AnchorMLP, "Memory-level parallelism is not readable here: %d chains ran %s× faster per load than "+
					"one, more than their number (not every load missed).",
					p.Chains, FmtF(p.InFlight, 1))
			}
		}
	}
	if o := r.OLTP; o != nil {
		oltpFindings(o, r.Machine, add, detail)
	}
	if q := r.Reporting; q != nil {
		queryFindings(q, add, detail)
	}
	if pd := r.PlacedDOP; pd != nil {
		add(AnchorPlacedDOP, "%s: %s.", pd.title(), pd.Verdict)
	}
	if io := r.IO; io != nil && io.Probe != nil && io.Probe.Ratio != nil {
		x := io.Probe.Ratio
		detail(AnchorIO, "Storage: %s random 8 KiB reads/s at queue depth 1; sequential reads deliver %s× that page "+
			"rate (the optimizer assumes %s×).",
			FmtN(x.RandomIOPS), FmtF(x.Ratio, 1), FmtF(x.ModelRatio, 1))
	}
	if md := r.Model; md != nil && len(md.Table.Rows) > 0 {
		var one, two, four float64
		for _, row := range md.Table.Rows {
			if row.SMT != 1 {
				continue
			}
			switch row.Sockets {
			case 1:
				one = row.TotalTPS
			case 2:
				two = row.TotalTPS
			case 4:
				four = row.TotalTPS
			}
		}
		if one > 0 && two > 0 && four > 0 {
			add(AnchorModel,
				"Model: 2 sockets of this CPU would give %s× one socket's throughput and 4 sockets %s× (per core %s and %s).",
				FmtF(two/one, 2), FmtF(four/one, 2), Pct(two/one/2-1), Pct(four/one/4-1))
		}
		if h := md.HeldOut; h != nil {
			add(AnchorModel, "Model check on cells it was not fitted to: predicted %s tps per core at %s ns, measured "+
				"%s (median of %d), error %s.",
				FmtN(h.PredictedTPS), FmtF(h.LatencyNS, 1), FmtN(h.MeasuredTPS), h.Cells, Pct(h.Error))
		}
		if o := md.Other; o != nil {
			add(AnchorModel, "Model check at another latency, not refitted: a memory-bandwidth neighbour against a "+
				"control added %s ns (%s); predicted tps ratio %s, measured %s (median of %d pairs), error %s.",
				FmtF(o.AddedNS, 1), o.Where(), FmtF(o.PredictedRatio, 3), FmtF(o.MeasuredRatio, 3), len(o.Pairs), Pct(o.Error))
		}
		modelErrorFinding(md, detail)
	}
	// The other workloads' findings follow those that answer questions 1
	// to 5: the round-trip floor, TPC-H, concurrent loading.
	// In the order of their sections: those beside the OLTP section first.
	for _, beside := range []bool{true, false} {
		for _, sec := range r.placed(beside) {
			sec.Findings(r, add, detail)
		}
	}
	out = append(out, more...)
	for _, a := range r.Absent {
		if a.Section == "model" {
			continue
		}
		out = append(out,
			Finding{Anchor: a.Section, Text: fmt.Sprintf("No %s run (try '%s').", a.Kind, a.Hint), Kind: FindingDetail})
	}
	return out
}

// splitFindings parts the findings into the answers and the details that
// follow them.
func splitFindings(fs []Finding) (answers, details []Finding) {
	for _, f := range fs {
		if f.Kind == FindingDetail {
			details = append(details, f)
		} else {
			answers = append(answers, f)
		}
	}
	return answers, details
}

// DecisionLine is the report's decision in one line, its first finding
// (decisionLine); "" when the model made no prediction.
func DecisionLine(r *Report) string {
	if p := Purchase(r); p != nil {
		return decisionLine(p)
	}
	return ""
}

// decisionLine is the decision in one line, linking to "Which server":
// the candidate to buy and its cost per 1,000 tps with its band, or that
// the bands cannot tell it from its rivals. "" without candidates.
func decisionLine(p *conclusion.Decision) string {
	if len(p.Rows) == 0 {
		return ""
	}
	best := p.Rows[0]
	for _, row := range p.Rows {
		if row.Name == p.Cheapest {
			best = row
		}
	}
	lo, hi := best.CostLow, best.CostHigh
	cost := fmt.Sprintf("%s per 1,000 tps (%s to %s)", FmtN(best.CostPerKTPS), FmtN(lo), FmtN(hi))
	if p.Decision != "" {
		return fmt.Sprintf("Which server: %s, at %s, the cheapest of %s.", p.Decision, cost, Plural(len(p.Rows), "candidate"))
	}
	rivals := fmt.Sprintf("the bands of %d others", len(p.Rivals))
	if len(p.Rivals) == 1 {
		rivals = "the band of " + p.Rivals[0]
	}
	return fmt.Sprintf("Which server: cannot tell; %s is cheapest at %s, but its band overlaps %s.",
		best.Name, cost, rivals)
}

// randomMedians are the fully random chain's medians at its largest
// working set with the given pages: one per mapping it was measured in.
func randomMedians(m *Memory, pages string) []float64 {
	for _, l := range m.Ladders {
		if l.Chain == memlat.Random && l.Pages == pages && len(l.Points) > 0 && !l.Cut {
			p := l.Last()
			v := []float64{p.NS.Median}
			for _, r := range p.Repeats {
				v = append(v, r.Median)
			}
			return v
		}
	}
	return nil
}

// cacheFindings compares the capacity each cache plateau showed (its knee,
// in bytes touched) with the size the topology reports.
func cacheFindings(levels []memlat.Level, detail func(anchor, format string, a ...any)) {
	var small, fit []string
	for _, l := range levels {
		if l.CacheBytes <= 0 || l.KneeBytes <= 0 {
			continue
		}
		s := fmt.Sprintf("%s %s of %s (%s)", l.Name, units.Bytes(l.KneeBytes), units.Bytes(l.CacheBytes), PctAbs(l.KneeRatio))
		if l.KneeRatio < 0.5 {
			small = append(small, s)
		} else {
			fit = append(fit, s)
		}
	}
	if len(small) > 0 {
		detail(AnchorLevels, "Effective cache smaller than advertised (in a VM, shared with neighbours): %s.",
			strings.Join(small, ", "))
	}
	if len(fit) > 0 {
		detail(AnchorLevels, "Effective cache sizes against the advertised: %s.", strings.Join(fit, ", "))
	}
}

func mlpPeak(m *memlat.MLP) *memlat.MLPPoint {
	if m == nil || len(m.Points) == 0 {
		return nil
	}
	var best *memlat.MLPPoint
	for i := range m.Points {
		p := &m.Points[i]
		if p.Threads == 1 && (best == nil || p.InFlight > best.InFlight) {
			best = p
		}
	}
	return best
}

func oltpFindings(o *OLTP, mach *Machine, add, detail func(anchor, format string, a ...any)) {
	// Peak.
	var best *OLTPPoint
	var bestLabel string
	for i := range o.Series {
		for j := range o.Series[i].Points {
			p := &o.Series[i].Points[j]
			if best == nil || p.TPS > best.TPS {
				best, bestLabel = p, o.Series[i].Label
			}
		}
	}
	if best == nil {
		return
	}
	add(AnchorOLTP, "OLTP peak %s tps at %s on %s, %s tps per core (%s, run %d).",
		FmtN(best.TPS), Plural(best.Streams, "stream"), bestLabel, FmtN(best.TPSPerCore), o.Workload, o.Run)
	// Scaling from one stream, per series.
	for _, s := range o.Series {
		one := PointAt(s.Points, 1)
		if one == nil || !(one.TPS > 0) {
			continue
		}
		for _, n := range []int{2} {
			if p := PointAt(s.Points, n); p != nil {
				add(AnchorOLTPTable, "%d streams gave %s× one stream's tps on %s (%s).", n, FmtF(p.TPS/one.TPS, 2), s.Label,
					Evidence(stats.Compare(one.TPSRepeats, p.TPSRepeats)))
			}
		}
		break
	}
	// Local against remote data at the same streams: the largest gap.
	gapAt, gap := 0, 0.0
	var gapLoc, gapRem OLTPPoint
	for _, loc := range o.Series {
		if loc.Data != "local" {
			continue
		}
		for _, rem := range o.Series {
			if rem.Data != "remote" || rem.SMT != loc.SMT {
				continue
			}
			for _, p := range loc.Points {
				q := PointAt(rem.Points, p.Streams)
				if q == nil || !(p.TPS > 0) {
					continue
				}
				if c := 1 - q.TPS/p.TPS; gapAt == 0 || c > gap {
					gapAt, gap, gapLoc, gapRem = p.Streams, c, p, *q
				}
			}
		}
	}
	if gapAt > 0 {
		d := stats.Compare(gapLoc.TPSRepeats, gapRem.TPSRepeats)
		switch {
		case d.Verdict == stats.Lower:
			add(AnchorOLTPTable, "Remote data cost %s of throughput at %d streams, the largest gap (%s).",
				PctAbs(gap), gapAt, Evidence(d))
		case d.Verdict == stats.NoDiff || d.Verdict == stats.Higher:
			add(AnchorOLTPTable, "Remote data did not cost throughput: %s %s local at %d streams, the largest gap (%s).",
				PctAbs(math.Abs(gap)), belowAbove(gap), gapAt, Evidence(d))
		default:
			add(AnchorOLTPTable, "Remote data measured %s %s local data's throughput at %d streams, the largest gap (%s).",
				PctAbs(math.Abs(gap)), belowAbove(gap), gapAt, Evidence(d))
		}
	}
	streamFindings(o, add, detail)
	// SMT: the best of placements with siblings against the best without.
	if mach != nil && mach.Threads > 1 {
		var on, off *OLTPPoint
		for i := range o.Series {
			for j := range o.Series[i].Points {
				p := &o.Series[i].Points[j]
				if o.Series[i].Data == "remote" {
					continue
				}
				if o.Series[i].SMT {
					if on == nil || p.TPS > on.TPS {
						on = p
					}
				} else if off == nil || p.TPS > off.TPS {
					off = p
				}
			}
		}
		if on != nil && off != nil && off.TPS > 0 {
			verb, g := "added ", on.TPS/off.TPS-1
			if g < 0 {
				verb, g = "cost ", -g
			}
			d := stats.Compare(off.TPSRepeats, on.TPSRepeats)
			if d.Verdict == stats.CannotTell || d.Verdict == stats.NoDiff {
				verb = "measured " + map[bool]string{true: "+", false: "-"}[on.TPS >= off.TPS]
			}
			add(AnchorOLTPTable, "SMT %s%s: %s tps at best with siblings against %s with one thread per core (%s).",
				verb, PctAbs(g), FmtN(on.TPS), FmtN(off.TPS), Evidence(d))
		}
	} else if mach != nil {
		detail(AnchorMachine, "No SMT on this machine: SMT on against off cannot be measured here.")
	}
	for _, n := range o.Notes {
		detail(AnchorOLTPTable, "Note: %s.", n)
	}
}

// noisyCV is the response-time variation (stdev over mean) within a cell
// from which a DOP finding says its cells are noisy.
const noisyCV = 0.3

// spreadWithin says, for a DOP finding, when the cells it compares vary a
// lot within themselves: "; the cells' response times vary by 33% to 67%
// of their mean".
func spreadWithin(a, b QueryPoint) string {
	lo, hi := min(a.ResponseCV, b.ResponseCV), max(a.ResponseCV, b.ResponseCV)
	if hi < noisyCV {
		return ""
	}
	return fmt.Sprintf("; response times vary by %s to %s of their mean", PctAbs(lo), PctAbs(hi))
}

// modelErrorFinding says how well the model reproduces the cells it was
// fitted to, and whether a cell it did not see has measured its error.
func modelErrorFinding(md *Model, detail func(anchor, format string, a ...any)) {
	if len(md.Residuals) == 0 {
		return
	}
	worst := 0.0
	for _, r := range md.Residuals {
		worst = max(worst, math.Abs(r.RelativeErrorTPS))
	}
	if len(md.Residuals) == 1 || worst < 1e-9 {
		if md.HeldOut != nil || md.Other != nil {
			detail(AnchorModel,
				"Model error only from the held-out check: it reproduces the %s it was fitted to by construction.",
				Plural(len(md.Residuals), "point"))
			return
		}
		detail(AnchorModel, "Model error not known: it reproduces the %s it was fitted to by construction, and no "+
			"cell it did not see measured it.",
			Plural(len(md.Residuals), "point"))
		return
	}
	unseen := "no cell it did not see measured its error"
	if md.HeldOut != nil || md.Other != nil {
		unseen = "the held-out check measures it on unseen cells"
	}
	detail(AnchorModel, "Model error over the %d points it was fitted to: at most %s (%s).",
		len(md.Residuals), PctAbs(worst), unseen)
}

// belowAbove words a cost: a positive one is below.
func belowAbove(cost float64) string {
	if cost >= 0 {
		return "below"
	}
	return "above"
}

// Evidence says, briefly, what a test of repeats allows a finding to
// claim: "U test p=0.008, n=5+5", "no difference shown, U test p=0.421,
// n=5+5" or "n=2+2 repeats, too few to tell".
func Evidence(d stats.Difference) string {
	switch d.Verdict {
	case stats.CannotTell:
		return fmt.Sprintf("n=%d+%d repeats, too few to tell", d.A.N, d.B.N)
	case stats.NoDiff:
		return fmt.Sprintf("no difference shown, U test p=%s, n=%d+%d", FmtF(d.P, 3), d.A.N, d.B.N)
	}
	return fmt.Sprintf("U test p=%s, n=%d+%d", FmtF(d.P, 3), d.A.N, d.B.N)
}

// smallDrop is the fall in throughput under which, without a test that
// shows it, more streams than CPUs are not reported as losing throughput.
const smallDrop = 0.05

// streamFindings says where throughput fell once streams outnumbered the
// CPUs a series ran on, and which cells were unstable or read from disk.
func streamFindings(o *OLTP, add, detail func(anchor, format string, a ...any)) {
	for _, s := range o.Series {
		var peak *OLTPPoint
		for i := range s.Points {
			p := &s.Points[i]
			cpus := len(p.CPUs)
			if cpus == 0 {
				continue
			}
			if p.Streams <= cpus {
				if peak == nil || p.TPS > peak.TPS {
					peak = p
				}
				continue
			}
			if peak == nil || !(p.TPS < peak.TPS) {
				continue
			}
			d := stats.Compare(peak.TPSRepeats, p.TPSRepeats)
			if d.Verdict != stats.Lower && p.TPS > (1-smallDrop)*peak.TPS {
				continue
			}
			verb := "fell"
			if d.Verdict != stats.Lower {
				verb = "measured lower"
			}
			add(AnchorOLTPTable,
				"Throughput %s %s once streams outnumbered the %d CPUs of %s: %s tps at %d streams, %s at %d (%s).",
				verb, Pct(p.TPS/peak.TPS-1), cpus, s.Label, FmtN(peak.TPS), peak.Streams, FmtN(p.TPS), p.Streams, Evidence(d))
			break
		}
	}
	var unstable, disk []string
	for _, s := range o.Series {
		for _, p := range s.Points {
			cell := fmt.Sprintf("%s at %s", s.Label, Plural(p.Streams, "stream"))
			if p.Unstable {
				unstable = append(unstable, cell)
			}
			if p.ReadFromDisk {
				disk = append(disk, cell)
			}
		}
	}
	if len(unstable) > 0 {
		add(AnchorOLTPTable, "Unstable cells (a second below %s of their median second): %s.",
			PctAbs(UnstableBelow), strings.Join(unstable, "; "))
	}
	if len(disk) > 0 {
		add(AnchorOLTPTable, "Cells that read from disk, so measure storage too: %s.", strings.Join(disk, "; "))
	}
}

// PointAt is the point of ps at a stream count; nil when none.
func PointAt(ps []OLTPPoint, streams int) *OLTPPoint {
	for i := range ps {
		if ps[i].Streams == streams {
			return &ps[i]
		}
	}
	return nil
}

func queryFindings(q *Reporting, add, detail func(anchor, format string, a ...any)) {
	for _, s := range q.ByStreams {
		if s.Streams != 1 || len(s.Points) < 2 {
			continue
		}
		best := s.Points[0]
		for _, p := range s.Points {
			if p.Speedup > best.Speedup {
				best = p
			}
		}
		if best.Speedup <= 1 {
			best = s.Points[0] // no DOP ran faster: said below as not helping
		}
		top := s.Points[len(s.Points)-1]
		base := s.Points[0]
		switch {
		case best.Speedup > 0 && best.DOP > 1 && min(base.Queries, best.Queries) < MinQueries:
			add(AnchorSpeedup, "%s on %s: DOP %d ran %s× DOP 1's queries per hour, but a cell finished only %d queries "+
				"(fewer than %d), so whether parallelism helped is not known.",
				s.Query, q.Engine, best.DOP, FmtF(best.Speedup, 2), min(base.Queries, best.Queries), MinQueries)
		case best.Speedup > 0 && best.DOP > 1:
			d := stats.Compare(base.QPHRepeats, best.QPHRepeats)
			add(AnchorSpeedup, "%s on %s: DOP %d ran %s× DOP 1's queries per hour, one stream (ideal %d×; %s%s).",
				s.Query, q.Engine, best.DOP, FmtF(best.Speedup, 2), best.DOP, Evidence(d), spreadWithin(base, best))
		case top.Speedup > 0 && top.DOP > 1:
			d := stats.Compare(base.QPHRepeats, top.QPHRepeats)
			if d.Verdict == stats.CannotTell {
				add(AnchorSpeedup, "%s on %s: DOP %d ran %s× DOP 1's queries per hour, one stream, so whether parallelism "+
					"helped is not known (%s%s).",
					s.Query, q.Engine, top.DOP, FmtF(top.Speedup, 2), Evidence(d), spreadWithin(base, top))
			} else {
				add(AnchorSpeedup, "%s on %s: parallelism did not help: DOP %d ran %s× DOP 1's queries per hour, one stream (%s).",
					s.Query, q.Engine, top.DOP, FmtF(top.Speedup, 2), Evidence(d))
			}
		}
	}
	for _, s := range q.ByDOP {
		if s.DOP != 1 || len(s.Points) < 2 || s.Points[0].Streams != 1 || !(s.Points[0].QPH > 0) {
			continue
		}
		last := s.Points[len(s.Points)-1]
		detail(AnchorQueries, "%s at DOP 1: %d streams gave %s× one stream's queries per hour.",
			s.Query, last.Streams, FmtF(last.QPH/s.Points[0].QPH, 2))
	}
	if n := len(q.Plans); n > 0 {
		detail(AnchorQueries, "%s between DOPs, e.g. %s.", Plural(n, "plan change"), q.Plans[0].Detail)
	}
	if len(q.Errors) > 0 {
		add(AnchorQueries, "Some reporting cells failed: %s.", q.Errors[0])
	}
}

func pageWords(b int64) string {
	if b >= 2<<20 {
		return "2 MiB"
	}
	if b > 0 {
		return units.Bytes(b).String()
	}
	return "2 MiB (asked)"
}

// pagesLabel names a ladder's pages as obtained.
func pagesLabel(l memlat.Ladder) string {
	return memlat.PageLabel(l.PageBytes, l.HugeFraction)
}
