package chart

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// palette is Okabe and Ito's colour-blind-safe set (without yellow, which
// does not read on white).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#882255"}

// dashes tell series apart without colour.
var dashes = []string{"", "6 3", "2 3", "8 3 2 3"}

// Scale is one axis: linear, or logarithmic in base 2 or 10.
type Scale struct {
	Label    string
	Log      float64 // 0: linear; else the log base of the ticks
	Min, Max float64
	Format   func(float64) string // tick labels
	Zero     bool                 // linear: start at 0
	// Ticks, when set, are the only ticks of a linear axis, which then
	// spans them with a little room (stream counts, DOPs).
	Ticks []float64
}

func (s *Scale) f(v float64) float64 {
	if s.Log > 0 {
		return math.Log(v)
	}
	return v
}

// pos maps v onto [0, 1].
func (s *Scale) pos(v float64) float64 {
	lo, hi := s.f(s.Min), s.f(s.Max)
	if hi == lo {
		return 0.5
	}
	return (s.f(v) - lo) / (hi - lo)
}

// Fit widens the scale to hold vs and rounds it to ticks.
func (s *Scale) Fit(vs []float64) {
	first := true
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) || (s.Log > 0 && v <= 0) {
			continue
		}
		if first {
			s.Min, s.Max, first = v, v, false
			continue
		}
		s.Min, s.Max = math.Min(s.Min, v), math.Max(s.Max, v)
	}
	if first {
		s.Min, s.Max = 0, 1
	}
	if len(s.Ticks) > 0 && s.Log == 0 {
		lo, hi := math.Min(s.Min, s.Ticks[0]), math.Max(s.Max, s.Ticks[len(s.Ticks)-1])
		pad := (hi - lo) * 0.06
		if pad == 0 {
			pad = 0.5
		}
		s.Min, s.Max = lo-pad, hi+pad
		return
	}
	if s.Log > 0 {
		lo := math.Floor(math.Log(s.Min) / math.Log(s.Log))
		hi := math.Ceil(math.Log(s.Max) / math.Log(s.Log))
		if hi == lo {
			hi++
		}
		s.Min, s.Max = math.Pow(s.Log, lo), math.Pow(s.Log, hi)
		return
	}
	if s.Zero {
		s.Min = math.Min(0, s.Min)
	}
	if s.Max-s.Min <= 1e-9*math.Max(math.Abs(s.Min), math.Abs(s.Max)) {
		// One value, or values that differ in their last digits (a
		// model through a measured point by construction, say): one
		// value on a chart, and no step finer than their precision.
		s.Max = s.Min + math.Max(1, 1e-6*math.Abs(s.Min))
	}
	step := niceStep((s.Max - s.Min) / 5)
	s.Min = math.Floor(s.Min/step) * step
	s.Max = math.Ceil(s.Max/step) * step
}

func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// ticks returns the axis's tick values.
func (s *Scale) ticks() []float64 {
	var out []float64
	if len(s.Ticks) > 0 && s.Log == 0 {
		return s.Ticks
	}
	if s.Log > 0 {
		lo := math.Round(math.Log(s.Min) / math.Log(s.Log))
		hi := math.Round(math.Log(s.Max) / math.Log(s.Log))
		step := math.Max(1, math.Ceil((hi-lo)/10))
		for k := lo; k <= hi+1e-9; k += step {
			out = append(out, math.Pow(s.Log, k))
		}
		if s.Log == 10 && hi-lo <= 2 {
			var more []float64
			for _, t := range out {
				more = append(more, t)
				if t < s.Max {
					more = append(more, 2*t, 5*t)
				}
			}
			out = more
		}
		return out
	}
	// Counted, not added up: a step below the values' precision added
	// to v leaves v where it was, and a loop on v never ends (an eval
	// whose chart had two values one ulp apart grew until the kernel's
	// OOM killer took it). n is NaN, and no tick drawn, for an infinite
	// scale.
	step := niceStep((s.Max - s.Min) / 5)
	n := math.Floor((s.Max-s.Min)/step + 1e-9)
	for i := 0.0; i <= n; i++ {
		out = append(out, math.Round((s.Min+i*step)/step)*step)
	}
	return out
}

// Point is one value of a series; Lo and Hi draw a spread bar when they differ.
type Point struct {
	X, Y, Lo, Hi float64
}

// Series is one line (or set of markers) of a Chart.
type Series struct {
	Name   string
	Points []Point
	Marks  bool   // markers only, no line
	Shape  string // the marker: "" a dot, "ring" (left out), "square" (held out)
}

// VLine is a labelled vertical line (a cache's size on the ladder).
type VLine struct {
	X    float64
	Text string
}

// HLine is a labelled horizontal segment (a latency plateau).
type HLine struct {
	Y, X0, X1 float64
	Text      string
}

// Chart is a line chart with optional spread bars, a second y axis that is
// a constant multiple of the first, and labelled horizontal segments.
type Chart struct {
	ID, Title string
	X, Y      Scale
	Y2Label   string  // right axis label; "" for none
	Y2Factor  float64 // right value = left value × factor
	Series    []Series
	HLines    []HLine
	VLines    []VLine
	Ideal     bool   // draw y = x (speedup charts; the 1:1 line of measured against predicted)
	Square    bool   // both axes span every x and y (measured against predicted)
	IdealText string // the y = x line's label; "" for "ideal"
}

const (
	chartW, chartH = 660.0, 330.0
	padL, padR     = 64.0, 64.0
	padT, padB     = 34.0, 92.0
)

func (c *Chart) px(x float64) float64 { return padL + c.X.pos(x)*(chartW-padL-padR) }
func (c *Chart) py(y float64) float64 { return chartH - padB - c.Y.pos(y)*(chartH-padT-padB) }

func xy(v float64) string { return trimZeros(FmtF(v, 1)) }

// px is an integer length for width and height attributes.
func px(v float64) string { return FmtF(math.Ceil(v), 0) }

// SVG renders the chart; it fits the scales to the data first.
func (c *Chart) SVG() string {
	var xs, ys []float64
	for _, s := range c.Series {
		for _, p := range s.Points {
			xs = append(xs, p.X)
			ys = append(ys, p.Y)
			if p.Lo != p.Hi {
				ys = append(ys, p.Lo, p.Hi)
			}
		}
	}
	for _, h := range c.HLines {
		ys = append(ys, h.Y)
	}
	if c.Ideal {
		ys = append(ys, xs...)
	}
	for _, v := range c.VLines {
		xs = append(xs, v.X)
	}
	if c.Square {
		xs = append(xs, ys...)
		ys = xs
	}
	c.X.Fit(xs)
	c.Y.Fit(ys)
	esc := html.EscapeString
	var b strings.Builder
	cols := legendColumns(c.Series)
	// Two rows of legend fit below the axis label; each more adds 16. (Two
	// columns' rows at the least: the charts of three columns keep their
	// height.)
	rows := max((len(c.Series)+cols-1)/cols, (len(c.Series)+1)/2)
	h := chartH + math.Max(0, float64(rows-2))*16
	fmt.Fprintf(&b, `<svg class="chart" id="%s-svg" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">`,
		esc(c.ID), xy(chartW), xy(h), px(chartW), px(h), esc(c.Title))
	fmt.Fprintf(&b, `<title>%s</title>`, esc(c.Title))
	fmt.Fprintf(&b, `<text class="ctitle" x="%s" y="20">%s</text>`, xy(padL), esc(c.Title))
	x0, x1 := padL, chartW-padR
	y0, y1 := chartH-padB, padT
	// Grid and ticks.
	for _, t := range c.Y.ticks() {
		y := c.py(t)
		fmt.Fprintf(&b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, xy(x0), xy(y), xy(x1), xy(y))
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`, xy(x0-6), xy(y+4), esc(c.Y.Format(t)))
	}
	if c.Y2Label != "" && c.Y2Factor > 0 {
		// The right axis has its own round ticks, at value / factor.
		r := Scale{Log: c.Y.Log, Min: c.Y.Min * c.Y2Factor, Max: c.Y.Max * c.Y2Factor, Format: FmtSig}
		r.Fit([]float64{r.Min, r.Max})
		for _, t := range r.ticks() {
			v := t / c.Y2Factor
			if v < c.Y.Min*0.999 || v > c.Y.Max*1.001 {
				continue
			}
			y := c.py(v)
			fmt.Fprintf(&b, `<line class="axisline" x1="%s" y1="%s" x2="%s" y2="%s"/>`, xy(x1), xy(y), xy(x1+4), xy(y))
			fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s">%s</text>`, xy(x1+6), xy(y+4), esc(FmtSig(t)))
		}
	}
	for _, t := range c.X.ticks() {
		x := c.px(t)
		fmt.Fprintf(&b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, xy(x), xy(y0), xy(x), xy(y1))
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`, xy(x),
			xy(y0+16), esc(c.X.Format(t)))
	}
	fmt.Fprintf(&b, `<rect class="frame" x="%s" y="%s" width="%s" height="%s"/>`, xy(x0), xy(y1), xy(x1-x0), xy(y0-y1))
	fmt.Fprintf(&b, `<text class="axis" x="%s" y="%s" text-anchor="middle">%s</text>`, xy((x0+x1)/2),
		xy(y0+34), esc(c.X.Label))
	fmt.Fprintf(&b, `<text class="axis" transform="translate(16 %s) rotate(-90)" text-anchor="middle">%s</text>`,
		xy((y0+y1)/2), esc(c.Y.Label))
	if c.Y2Label != "" {
		fmt.Fprintf(&b, `<text class="axis" transform="translate(%s %s) rotate(90)" text-anchor="middle">%s</text>`,
			xy(chartW-12), xy((y0+y1)/2), esc(c.Y2Label))
	}
	if c.Ideal {
		lo, hi := math.Max(c.X.Min, c.Y.Min), math.Min(c.X.Max, c.Y.Max)
		if hi > lo {
			fmt.Fprintf(&b, `<line class="ideal" x1="%s" y1="%s" x2="%s" y2="%s"/>`, xy(c.px(lo)), xy(c.py(lo)),
				xy(c.px(hi)), xy(c.py(hi)))
			label := c.IdealText
			if label == "" {
				label = "ideal"
			}
			fmt.Fprintf(&b, `<text class="note" x="%s" y="%s">%s</text>`, xy(c.px(hi)-30), xy(c.py(hi)+14), esc(label))
		}
	}
	for _, h := range c.HLines {
		y := c.py(h.Y)
		fmt.Fprintf(&b, `<line class="plateau" x1="%s" y1="%s" x2="%s" y2="%s"/>`, xy(c.px(h.X0)), xy(y),
			xy(c.px(h.X1)), xy(y))
		fmt.Fprintf(&b, `<text class="note" x="%s" y="%s">%s</text>`, xy(c.px(h.X0)), xy(y-5), esc(h.Text))
	}
	for i, v := range c.VLines {
		x := c.px(v.X)
		fmt.Fprintf(&b, `<line class="cacheline" x1="%s" y1="%s" x2="%s" y2="%s"/>`, xy(x), xy(y0), xy(x), xy(y1))
		fmt.Fprintf(&b, `<text class="vnote" x="%s" y="%s">%s</text>`, xy(x+3), xy(y1+12+12*float64(i%2)), esc(v.Text))
	}
	for i, s := range c.Series {
		col := palette[i%len(palette)]
		dash := dashes[i%len(dashes)]
		if !s.Marks && len(s.Points) > 1 {
			var pts []string
			for _, p := range s.Points {
				pts = append(pts, xy(c.px(p.X))+","+xy(c.py(p.Y)))
			}
			da := ""
			if dash != "" {
				da = fmt.Sprintf(` stroke-dasharray="%s"`, dash)
			}
			fmt.Fprintf(&b, `<polyline class="line" stroke="%s"%s points="%s"/>`, col, da, strings.Join(pts, " "))
		}
		for _, p := range s.Points {
			x, y := c.px(p.X), c.py(p.Y)
			if p.Lo != p.Hi {
				fmt.Fprintf(&b, `<line class="spread" stroke="%s" x1="%s" y1="%s" x2="%s" y2="%s"/>`, col, xy(x), xy(c.py(p.Lo)),
					xy(x), xy(c.py(p.Hi)))
			}
			b.WriteString(marker(s.Shape, x, y, col, esc(s.Name)+": "+esc(c.X.Format(p.X)+", "+FmtSig(p.Y))))
		}
	}
	// Legend, below the axis label, in rows of up to legendColumns.
	for i, s := range c.Series {
		lx := padL + float64(i%cols)*((chartW-padL-padR)/float64(cols))
		ly := y0 + 54 + float64(i/cols)*16
		col := palette[i%len(palette)]
		da := ""
		if d := dashes[i%len(dashes)]; d != "" {
			da = fmt.Sprintf(` stroke-dasharray="%s"`, d)
		}
		if !s.Marks {
			fmt.Fprintf(&b, `<line class="line" stroke="%s"%s x1="%s" y1="%s" x2="%s" y2="%s"/>`, col, da, xy(lx), xy(ly-4),
				xy(lx+18), xy(ly-4))
		}
		b.WriteString(marker(s.Shape, lx+9, ly-4, col, ""))
		fmt.Fprintf(&b, `<text class="legend" x="%s" y="%s">%s</text>`, xy(lx+24), xy(ly), esc(s.Name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// legendColumns is how many series names a legend row holds: three, two
// when a name is longer than 24 characters, one when one is longer than
// 40 (half the plot's width, at the legend's font).
func legendColumns(series []Series) int {
	cols := 3
	for _, s := range series {
		switch n := len([]rune(s.Name)); {
		case n > 40:
			return 1
		case n > 24:
			cols = 2
		}
	}
	return cols
}

// marker draws one point's mark: a dot, a ring or a square, with its
// tooltip (escaped) when title is not empty.
func marker(shape string, x, y float64, col, title string) string {
	var tag, attrs string
	switch shape {
	case "ring":
		tag, attrs = "circle",
			fmt.Sprintf(`cx="%s" cy="%s" r="5" fill="none" stroke="%s" stroke-width="2"`, xy(x), xy(y), col)
	case "square":
		tag, attrs = "rect", fmt.Sprintf(`x="%s" y="%s" width="8" height="8" fill="%s"`, xy(x-4), xy(y-4), col)
	default:
		tag, attrs = "circle", fmt.Sprintf(`cx="%s" cy="%s" r="3.2" fill="%s"`, xy(x), xy(y), col)
	}
	if title == "" {
		return "<" + tag + " " + attrs + "/>"
	}
	return "<" + tag + " " + attrs + "><title>" + title + "</title></" + tag + ">"
}

// FmtSig formats with about three significant digits.
func FmtSig(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 1000:
		return FmtN(v)
	case a >= 100:
		return FmtF(v, 0)
	case a >= 10:
		return trimZeros(FmtF(v, 1))
	case a >= 1:
		return trimZeros(FmtF(v, 2))
	}
	return trimZeros(FmtF(v, 3))
}

// FmtCompact labels ticks briefly: 1.25M, 250k, 12.5.
func FmtCompact(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return trimZeros(FmtF(v/1e6, 2)) + "M"
	case a >= 1e4:
		return trimZeros(FmtF(v/1e3, 1)) + "k"
	}
	return FmtSig(v)
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
