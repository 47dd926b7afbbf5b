package report

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/numalab/numalab/internal/calibrated"
	"github.com/numalab/numalab/internal/conclusion"
	"github.com/numalab/numalab/internal/model"
)

// AnchorDecision is the decision card at the top of the HTML report.
const AnchorDecision = "decision"

// card is the decision on the first screen (issue #37): the answer in one
// sentence, the candidates' cost per 1,000 tps with their bands as a
// chart, and the inputs the answer rests on; or, with no decision, the
// runs that would give one. It carries no more than about 60 words.
type card struct {
	Sentence string
	// RealCPUs is the answer among the catalogue's CPUs at list prices
	// (CataloguePurchase): a part to buy, or the measurement that would
	// decide; "" without one. The text answer (and eval's summary) gives
	// it after Sentence; the HTML card, held to about 60 words, leaves it
	// to "Which server".
	RealCPUs string
	Chart    template.HTML
	Inputs   []cardInput
	Absent   string // why there is no decision and what would give one; "" with one
}

// cardInput is one input the decision rests on: its value, where the
// value comes from (measured, fitted, assumed) and where the answer flips.
type cardInput struct {
	Name, Value, Source, Flips string
}

// maxCardInputs bounds the inputs the card lists: the decision's flips in
// the order decide gives them.
const maxCardInputs = 5

// decisionCard is the card for r, from the purchase "Which server" shows.
func decisionCard(r *Report) card {
	p := Purchase(r)
	if p == nil || len(p.Rows) == 0 {
		return card{Absent: noDecision(r)}
	}
	c := card{Sentence: cardFor(r) + cardSentence(p), Chart: template.HTML(CostBars(AnchorDecision+"-cost", p))}
	if pc := CataloguePurchase(r); pc != nil {
		c.RealCPUs = realCPUs(pc)
	}
	for _, f := range p.Flips {
		if len(c.Inputs) == maxCardInputs {
			break
		}
		in := cardInput{Name: f.Input, Value: model.Figure(f.Assumed), Source: flipSource(p, f.Input)}
		switch {
		case strings.HasPrefix(f.Input, "the price of "):
			in.Name = "winner's price"
		case f.Input == "stall share at one socket":
			in.Name = "stall share (1 socket)"
		}
		switch {
		case f.None && f.Range == "0 up":
			in.Flips = "never"
		case f.None:
			in.Flips = "never (" + strings.Replace(f.Range, " to ", "–", 1) + ")"
		default:
			in.Flips = model.Figure(f.At)
		}
		c.Inputs = append(c.Inputs, in)
	}
	return c
}

// cardFor names the engine and workload the answer is for, and what its A
// and M rest on.
func cardFor(r *Report) string {
	if r.Model == nil {
		return ""
	}
	return "For " + r.Model.For() + ": "
}

// cardSentence is the answer in one sentence: the candidate to buy with
// its cost band, or "cannot tell" and the measurement that would decide.
func cardSentence(p *conclusion.Decision) string {
	best := p.Rows[0]
	for _, row := range p.Rows {
		if row.Name == p.Cheapest {
			best = row
		}
	}
	lo, hi := best.CostLow, best.CostHigh
	cost := fmt.Sprintf("%s per 1,000 tps (%s to %s)",
		model.Thousands(best.CostPerKTPS), model.Thousands(lo), model.Thousands(hi))
	if p.Decision != "" {
		return fmt.Sprintf("Buy %s: %s, the cheapest of %d candidates.", p.Decision, cost, len(p.Rows))
	}
	rivals := fmt.Sprintf("%d others'", len(p.Rivals))
	if len(p.Rivals) == 1 {
		rivals = p.Rivals[0] + "'s"
	}
	return fmt.Sprintf("Cannot tell: %s is cheapest at %s, but its band overlaps %s. To decide, measure %s.",
		best.Name, cost, rivals, p.Decider)
}

// flipSource is where the value of a decision's input comes from: the
// calibration's own basis for it, else what decide assumes.
func flipSource(p *conclusion.Decision, input string) string {
	name := map[string]string{
		"multi-socket local latency ratio": calibrated.AssumeLocal,
		"remote/local latency ratio":       calibrated.AssumeRemote,
		"stall share at one socket":        calibrated.AssumeA, // follows from A and M
	}[input]
	if name == "" {
		name = input
	}
	for _, a := range p.Assumptions {
		if a.Name == name {
			return a.Basis
		}
	}
	// The remote fraction (no locality) and a candidate's price
	// (illustrative) are the purchase's own assumptions.
	return calibrated.Assumed
}

// noDecision says, briefly, what runs would give a decision.
func noDecision(r *Report) string {
	var need, hints []string
	for _, sec := range []struct{ id, what string }{{"memory", "a memory probe"}, {"oltp", "an OLTP run"}} {
		if a := absent(r, sec.id); a != nil {
			need, hints = append(need, sec.what), append(hints, "'"+a.Hint+"'")
		}
	}
	if len(need) == 0 {
		return "No decision: the model made no prediction from these runs (see its section)."
	}
	return fmt.Sprintf("No decision: choosing a server needs %s. Run %s, or 'numalab eval' for everything.",
		strings.Join(need, " and "), strings.Join(hints, " and "))
}

// cardText is the card's sentence for the text report: the answer, or
// what run would give one.
func cardText(r *Report) string {
	c := decisionCard(r)
	if c.Absent != "" {
		return c.Absent
	}
	if c.RealCPUs != "" {
		return c.Sentence + " " + c.RealCPUs
	}
	return c.Sentence
}
