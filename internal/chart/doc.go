// Package chart draws the report's figures as inline SVG: line charts with
// spread bars and a second axis (Chart), bars (Bars, HBars) and a
// node-to-node heatmap (Heatmap), and formats the numbers their labels and
// the report's tables share (FmtF, FmtN, FmtSig, ...).
//
// It draws what it is given and computes no figure: the same values give
// the same bytes (fixed float formats, no map order, no time), and the
// output needs no script, font or network. Its classes are styled by the
// report's style sheet (report.CSS).
package chart
