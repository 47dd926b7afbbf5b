package chart

import (
	"fmt"
	"html"
	"strings"
)

// Bars draws one bar per label with its value on top.
func Bars(id, title, ylabel string, labels []string, values []float64, notes []string) string {
	s := Scale{Label: ylabel, Zero: true, Format: FmtSig}
	s.Fit(values)
	esc := html.EscapeString
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" id="%s-svg" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">`,
		esc(id), xy(chartW), xy(chartH-40), px(chartW), px(chartH-40), esc(title))
	fmt.Fprintf(&b, `<title>%s</title>`, esc(title))
	fmt.Fprintf(&b, `<text class="ctitle" x="%s" y="20">%s</text>`, xy(padL), esc(title))
	y0, y1 := chartH-40-56, padT
	py := func(v float64) float64 { return y0 - s.pos(v)*(y0-y1) }
	x0, x1 := padL, chartW-padR
	for _, t := range s.ticks() {
		fmt.Fprintf(&b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, xy(x0), xy(py(t)), xy(x1), xy(py(t)))
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`, xy(x0-6), xy(py(t)+4), esc(FmtSig(t)))
	}
	fmt.Fprintf(&b, `<text class="axis" transform="translate(16 %s) rotate(-90)" text-anchor="middle">%s</text>`,
		xy((y0+y1)/2), esc(ylabel))
	slot := (x1 - x0) / float64(max(len(values), 1))
	for i, v := range values {
		x := x0 + slot*float64(i) + slot*0.2
		fmt.Fprintf(&b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s"><title>%s: %s</title></rect>`,
			xy(x), xy(py(v)), xy(slot*0.6), xy(y0-py(v)), esc(labels[i]), esc(FmtN(v)))
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`, xy(x+slot*0.3),
			xy(py(v)-5), esc(FmtN(v)))
		fmt.Fprintf(&b, `<text class="axis" x="%s" y="%s" text-anchor="middle">%s</text>`, xy(x+slot*0.3),
			xy(y0+18), esc(labels[i]))
		if i < len(notes) && notes[i] != "" {
			fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`, xy(x+slot*0.3),
				xy(y0+34), esc(notes[i]))
		}
	}
	fmt.Fprintf(&b, `<line class="axisline" x1="%s" y1="%s" x2="%s" y2="%s"/>`, xy(x0), xy(y0), xy(x1), xy(y0))
	b.WriteString(`</svg>`)
	return b.String()
}

// HBar is one bar of HBars: its label, its value and, when Hi > Lo, a
// whisker over [Lo, Hi].
type HBar struct {
	Label  string
	Value  float64
	Lo, Hi float64
}

// HBars is a horizontal bar chart, one bar per row with its label on the
// left and its value at its end; axis labels the value axis and unit
// follows a value in a bar's tooltip.
func HBars(id, title, axis, unit string, bars []HBar) string {
	const labelW, rowH, top = 210.0, 30.0, 40.0
	var vals []float64
	for _, r := range bars {
		vals = append(vals, r.Value, r.Lo, r.Hi)
	}
	sc := Scale{Label: axis, Zero: true, Format: FmtSig}
	sc.Fit(vals)
	h := top + rowH*float64(len(bars)) + 44
	x0, x1 := labelW, chartW-padR/2
	x := func(v float64) float64 { return x0 + sc.pos(v)*(x1-x0) }
	esc := html.EscapeString
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" id="%s-svg" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">`,
		esc(id), xy(chartW), xy(h), px(chartW), px(h), esc(title))
	fmt.Fprintf(&b, `<title>%s</title><text class="ctitle" x="8" y="20">%s</text>`, esc(title), esc(title))
	yEnd := top + rowH*float64(len(bars))
	for _, t := range sc.ticks() {
		fmt.Fprintf(&b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, xy(x(t)), xy(top-6), xy(x(t)), xy(yEnd))
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`, xy(x(t)),
			xy(yEnd+16), esc(FmtSig(t)))
	}
	for i, r := range bars {
		y := top + rowH*float64(i)
		fmt.Fprintf(&b, `<text class="axis" x="%s" y="%s" text-anchor="end">%s</text>`, xy(x0-8),
			xy(y+rowH/2+4), esc(r.Label))
		fmt.Fprintf(&b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s"><title>%s: %s %s</title></rect>`,
			xy(x0), xy(y+5), xy(x(r.Value)-x0), xy(rowH-10), esc(r.Label), esc(FmtN(r.Value)), esc(unit))
		if r.Hi > r.Lo {
			fmt.Fprintf(&b, `<line class="axisline" x1="%s" y1="%s" x2="%s" y2="%s"/>`, xy(x(r.Lo)), xy(y+rowH/2),
				xy(x(r.Hi)), xy(y+rowH/2))
		}
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s">%s</text>`, xy(x(max(r.Hi, r.Value))+4),
			xy(y+rowH/2+4), esc(FmtN(r.Value)))
	}
	fmt.Fprintf(&b, `<line class="axisline" x1="%s" y1="%s" x2="%s" y2="%s"/>`, xy(x0), xy(top-6), xy(x0), xy(yEnd))
	fmt.Fprintf(&b, `<text class="axis" x="%s" y="%s" text-anchor="middle">%s</text>`, xy((x0+x1)/2),
		xy(yEnd+34), esc(sc.Label))
	b.WriteString(`</svg>`)
	return b.String()
}
