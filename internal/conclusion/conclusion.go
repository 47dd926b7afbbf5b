// Package conclusion is what numalab concludes from stored runs, as values a
// report renders: the model calibrated to them with each engine's cost
// (package calibrated's values, computed by calib), the model against the
// published results (package published), and the purchase decisions
// (package decide) in the form a report shows them.
//
// It computes nothing: package assess fills Inputs from runs, and report
// only renders them.
package conclusion

import (
	"fmt"

	"github.com/numalab/numalab/internal/calibrated"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/published"
)

// Inputs are what a report shows beyond its runs' own figures, each
// computed by its own package before the report is built.
type Inputs struct {
	// Model is the model calibrated to the runs (calib.CalibrateFor);
	// nil without a memory probe among them.
	Model *calibrated.Model
	// Engines are each engine's measured fit side by side (calib.EngineCosts).
	Engines []calibrated.EngineCost
	// Published is Model against public audited results at its workload's
	// stall share; nil without a workload.
	Published *published.Validation
	// Purchase and Catalogue are the buy decisions for Model (decide.Choose)
	// among the candidates derived from the probed CPU and among the
	// catalogue's real CPUs; nil when none could be made.
	Purchase, Catalogue *Decision
}

// Decision is a purchase decision as a report shows it (decide.Purchase):
// the candidates, the answer, and the inputs it rests on.
type Decision struct {
	Recommendation string
	Band           string // what the candidates' TPSLow to TPSHigh cover
	// Cheapest is the candidate cheapest per 1,000 tps; Decision names it
	// when its cost band overlaps no other's, else Rivals are the
	// candidates whose bands overlap and Decider what to measure.
	Cheapest    string
	Decision    string
	Rivals      []string
	Decider     string
	Assumptions []calibrated.Assumption
	Flips       []Flip
	Rows        []Candidate
}

// Candidate is one candidate's shape, prediction and cost.
type Candidate struct {
	Name                      string
	Sockets, Cores, SMT       int
	GHz                       float64
	Note                      string // how it was chosen or derived
	LatencyNS, TPSPerCore     float64
	TotalTPS, TPSLow, TPSHigh float64
	TotalCost, CostPerKTPS    float64
	CostLow, CostHigh         float64  // cost per 1,000 tps at TPSHigh and at TPSLow
	BestOn                    []string // the measures it wins on, in words
}

// Flip is an assumed input of the decision and the value at which it
// would change: the cheapest candidate and the next cheapest cost the same
// per 1,000 tps there. None when they do not swap within Range.
type Flip struct {
	Input   string  `json:"input"`
	Assumed float64 `json:"assumed"`
	At      float64 `json:"flips_at"`
	None    bool    `json:"no_flip"`
	Range   string  `json:"searched"`
}

// String is the flip in words.
func (f Flip) String() string {
	if f.None {
		return fmt.Sprintf("%s %s (the choice holds from %s)", f.Input, model.Figure(f.Assumed), f.Range)
	}
	return fmt.Sprintf("%s %s (flips at %s)", f.Input, model.Figure(f.Assumed), model.Figure(f.At))
}
