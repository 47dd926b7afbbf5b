package chart

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Heatmap draws a node-to-node latency matrix: colour by the cell's
// latency relative to the fastest, labelled in ns.
func Heatmap(id string, rows, cols []int, ns [][]float64, rel [][]float64, title string) string {
	const cell, left, top = 84.0, 124.0, 58.0
	w := left + cell*float64(len(cols)) + 24
	h := top + cell*float64(len(rows)) + 24
	w = math.Max(w, 24+8.6*float64(len([]rune(title))))
	esc := html.EscapeString
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart heat" id="%s-svg" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">`,
		esc(id), xy(w), xy(h), px(w), px(h), esc(title))
	fmt.Fprintf(&b, `<title>%s</title>`, esc(title))
	fmt.Fprintf(&b, `<text class="ctitle" x="8" y="20">%s</text>`, esc(title))
	fmt.Fprintf(&b, `<text class="axis" x="%s" y="38" text-anchor="middle">memory on</text>`,
		xy(left+cell*float64(len(cols))/2))
	worst := 1.0
	for _, r := range rel {
		for _, v := range r {
			worst = math.Max(worst, v)
		}
	}
	for j, n := range cols {
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="middle">node %d</text>`,
			xy(left+cell*(float64(j)+0.5)), xy(top-6), n)
	}
	for i, n := range rows {
		y := top + cell*float64(i)
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="end">thread on node %d</text>`,
			xy(left-6), xy(y+cell/2+4), n)
		for j := range cols {
			x := left + cell*float64(j)
			if i >= len(ns) || j >= len(ns[i]) {
				// A matrix cut before this cell: not measured.
				fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="#eee" stroke="#fff"><title>node %d to node %d: not measured (the probe was cut)</title></rect>`,
					xy(x), xy(y), xy(cell), xy(cell), n, cols[j])
				fmt.Fprintf(&b, `<text class="cellv" x="%s" y="%s" text-anchor="middle">not measured</text>`,
					xy(x+cell/2), xy(y+cell/2))
				continue
			}
			v, r := ns[i][j], 1.0
			if i < len(rel) && j < len(rel[i]) {
				r = rel[i][j]
			}
			t := 0.0
			if worst > 1 {
				t = (r - 1) / (worst - 1)
			}
			fill := heatColour(t)
			txt := "#000"
			if t > 0.6 {
				txt = "#fff"
			}
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s" stroke="#fff"><title>node %d to node %d: %s ns (%s× the fastest)</title></rect>`,
				xy(x), xy(y), xy(cell), xy(cell), fill, n, cols[j], FmtF(v, 1), FmtF(r, 2))
			fmt.Fprintf(&b, `<text class="cellv" x="%s" y="%s" text-anchor="middle" style="fill:%s">%s ns</text>`,
				xy(x+cell/2), xy(y+cell/2), txt, FmtF(v, 1))
			fmt.Fprintf(&b, `<text class="cellr" x="%s" y="%s" text-anchor="middle" style="fill:%s">%s×</text>`,
				xy(x+cell/2), xy(y+cell/2+16), txt, FmtF(r, 2))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// heatColour runs from pale blue (t = 0, the fastest) to dark red (t = 1).
func heatColour(t float64) string {
	t = math.Max(0, math.Min(1, t))
	lerp := func(a, b float64) int { return int(math.Round(a + (b-a)*t)) }
	return fmt.Sprintf("#%02x%02x%02x", lerp(0xde, 0xb2), lerp(0xeb, 0x18), lerp(0xf7, 0x2b))
}
