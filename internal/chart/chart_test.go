package chart

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestScaleValuesApartInTheirLastDigits: an axis whose values differ only
// in their last bits (a model's prediction through a measured point by
// construction) gets ticks and a chart in bounded time. Its ticks once
// looped adding a step below the values' precision, and eval's report
// grew until the OOM killer took it.
func TestScaleValuesApartInTheirLastDigits(t *testing.T) {
	for _, v := range []float64{302.8, 1554.8, 3415487.7, 1e17, -42.5} {
		vs := []float64{v, math.Nextafter(v, math.Inf(1)), math.Nextafter(math.Nextafter(v, math.Inf(1)), math.Inf(1))}
		done := make(chan string, 1)
		go func() {
			s := Scale{}
			s.Fit(vs)
			ticks := s.ticks()
			c := Chart{ID: "t", Title: "t", X: Scale{Label: "x", Format: FmtSig}, Y: Scale{Label: "y", Format: FmtSig},
				Series: []Series{{Name: "s", Points: []Point{{X: vs[0], Y: vs[1]}, {X: vs[1], Y: vs[2]}, {X: vs[2], Y: vs[0]}}}}}
			svg := c.SVG()
			switch {
			case len(ticks) < 2 || len(ticks) > 11:
				done <- fmt.Sprintf("%d ticks, want 2 to 11", len(ticks))
			case !(s.Min <= v && s.Max >= vs[2]):
				done <- "the scale does not hold its values"
			case !strings.Contains(svg, "</svg>"):
				done <- "no whole chart"
			default:
				done <- ""
			}
		}()
		select {
		case msg := <-done:
			if msg != "" {
				t.Errorf("values %v: %s", vs, msg)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("values %v: no ticks or chart after 10 s (the tick loop does not end)", vs)
		}
	}
}

// HBars draws one bar per row, labelled, with a whisker only where the
// row's band has width.
func TestHBars(t *testing.T) {
	svg := HBars("c", "Cost", "cost per 1,000 tps", "per 1,000 tps", []HBar{
		{Label: "A & B", Value: 120, Lo: 100, Hi: 150},
		{Label: "C", Value: 90, Lo: 90, Hi: 90},
	})
	for _, want := range []string{`id="c-svg"`, "<title>A &amp; B: 120 per 1,000 tps</title>",
		"<title>C: 90.0 per 1,000 tps</title>", "cost per 1,000 tps</text>"} {
		if !strings.Contains(svg, want) {
			t.Errorf("HBars lacks %q:\n%s", want, svg)
		}
	}
	if n := strings.Count(svg, `<rect class="bar"`); n != 2 {
		t.Errorf("%d bars; want 2", n)
	}
	// One axis line at the bars' base, one whisker (A's); C's band is a point.
	if n := strings.Count(svg, `<line class="axisline"`); n != 2 {
		t.Errorf("%d axis lines and whiskers; want 2 (the base and A's whisker)", n)
	}
}

// TestLegendLongNames: a legend row holds three short names, two up to 40
// characters, one longer, and the chart grows to hold every row: the fit
// chart's "held out: a random chain timed right after each cell; …" once
// ran past the chart's right edge in the second column.
func TestLegendLongNames(t *testing.T) {
	for _, c := range []struct {
		names      []string
		xs         int // distinct x positions of the legend's names
		wantHeight string
	}{
		{[]string{"a", "b", "c", "d"}, 3, `height="330"`},
		{[]string{strings.Repeat("m", 30), "b", "c", "d"}, 2, `height="330"`},
		{[]string{strings.Repeat("m", 50), "b", "c", "d"}, 1, `height="362"`},
	} {
		ch := Chart{ID: "t", Title: "t", X: Scale{Label: "x", Format: FmtSig}, Y: Scale{Label: "y", Format: FmtSig}}
		for i, n := range c.names {
			ch.Series = append(ch.Series, Series{Name: n, Points: []Point{{X: float64(i), Y: 1}, {X: float64(i + 1), Y: 2}}})
		}
		svg := ch.SVG()
		xs := map[string]bool{}
		for _, m := range legendX.FindAllStringSubmatch(svg, -1) {
			xs[m[1]] = true
		}
		if len(xs) != c.xs || !strings.Contains(svg, c.wantHeight) {
			t.Errorf("names %q: legend columns at %v, svg %q; want %d columns, %s", c.names, xs, svg[:200], c.xs, c.wantHeight)
		}
	}
}

var legendX = regexp.MustCompile(`<text class="legend" x="([0-9.]+)"`)
