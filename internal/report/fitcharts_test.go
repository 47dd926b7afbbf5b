package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/model"
)

// TestFitFigureThroughItsPoint: with one latency (no page-size fit) the
// model passes through the measured median by construction, so measured
// and predicted agree to their last bits or differ in them; the fit's
// chart, square over both, is drawn either way.
func TestFitFigureThroughItsPoint(t *testing.T) {
	for _, m := range []float64{1554.8, 1298.0000000000002, 1440.5} {
		for _, p := range []float64{m, math.Nextafter(m, 0), math.Nextafter(m, math.Inf(1))} {
			md := &Model{Residuals: []model.Residual{
				{Point: model.Point{TPSPerCore: m, LatencyNS: 302.8}, FitTPSPerCore: p, Cell: "a cell"}}}
			done := make(chan bool, 1)
			go func() {
				plot, _, ok := fitFigure(md)
				done <- ok && strings.Contains(string(plot.SVG), "</svg>")
			}()
			select {
			case ok := <-done:
				if !ok {
					t.Errorf("measured %v, predicted %v: no fit chart", m, p)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("measured %v, predicted %v: no fit chart after 10 s", m, p)
			}
		}
	}
}
