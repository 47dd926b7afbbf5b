package fleet

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes the fleet as indented JSON.
func WriteJSON(w io.Writer, f *Fleet) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}

// WriteText writes the fleet as text: the hosts and their verdicts, each
// figure with every host's value, then the settings that differ.
func WriteText(w io.Writer, f *Fleet) error {
	fmt.Fprintf(w, "numalab fleet: %d %s from %s\n", len(f.Hosts), plural(len(f.Hosts), "host", "hosts"),
		strings.Join(f.Stores, ", "))
	fmt.Fprintf(w, "outlier rule: %s\n\n", f.Rule)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "host\tverdict\truns\tlikely causes")
	for _, h := range f.Hosts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", h.Name, hostVerdict(h), runsText(h), causesText(h))
	}
	tw.Flush()
	for _, fig := range f.Figures {
		fmt.Fprintf(w, "\n%s (%s): fleet median %s, MAD %s\n", fig.Name, fig.Unit, num(fig.Median), num(fig.MAD))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "host\tvalue\tdeviation\tz\trepeats\tverdict\t")
		for _, h := range fig.Hosts {
			if len(h.Repeats) == 0 {
				fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t%s\t\n", h.Host, h.Verdict)
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%+.1f%%\t%+.1f\t%s\t%s\t\n", h.Host, num(h.Value), 100*h.Deviation, h.Z,
				repeatsText(h.Repeats), h.Verdict)
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	if len(f.Differences) == 0 {
		fmt.Fprintln(w, "preflight: every host has the same settings")
		return nil
	}
	fmt.Fprintln(w, "preflight settings that differ between hosts")
	for _, d := range f.Differences {
		fmt.Fprintf(w, "  %s: %s\n", d.Setting, groupText(f, d))
	}
	return nil
}

// hostVerdict is a host's verdict over all figures.
func hostVerdict(h Host) string {
	switch {
	case h.Outlier:
		return "OUTLIER"
	case len(h.Runs) == 0:
		return "no comparable run"
	}
	return "same as the fleet"
}

func runsText(h Host) string {
	var parts []string
	for _, r := range h.Runs {
		parts = append(parts, fmt.Sprintf("%s %d", r.Kind, r.ID))
	}
	for _, k := range h.Missing {
		parts = append(parts, "no "+k)
	}
	return strings.Join(parts, ", ")
}

func causesText(h Host) string {
	var parts []string
	for _, c := range h.Causes {
		parts = append(parts, fmt.Sprintf("%s %s (most: %s)", c.Setting, c.Value, c.Usual))
	}
	for _, w := range h.Warnings {
		parts = append(parts, "! "+w)
	}
	if h.Outlier && len(parts) == 0 {
		return "no differing setting seen: suspect the hardware"
	}
	return strings.Join(parts, "; ")
}

// groupText lists a differing setting's values, each with its hosts.
func groupText(f *Fleet, d Difference) string {
	var values []string
	hosts := map[string][]string{}
	for i, v := range d.Values {
		if v == "" {
			v = "not stored"
		}
		if _, ok := hosts[v]; !ok {
			values = append(values, v)
		}
		hosts[v] = append(hosts[v], f.Hosts[i].Name)
	}
	var parts []string
	for _, v := range values {
		hs := hosts[v]
		if len(hs) > 3 {
			parts = append(parts, fmt.Sprintf("%s (%d hosts)", v, len(hs)))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", v, strings.Join(hs, ", ")))
	}
	return strings.Join(parts, "; ")
}

func repeatsText(xs []float64) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, num(x))
	}
	return strings.Join(parts, " ")
}

// num formats a figure with three significant digits or more.
func num(x float64) string {
	switch {
	case x >= 100 || x <= -100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case x >= 10 || x <= -10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

//go:embed fleet.html.tmpl
var htmlTemplate string

var tmpl = template.Must(template.New("fleet").Funcs(template.FuncMap{
	"num":     num,
	"pct":     func(x float64) string { return fmt.Sprintf("%+.1f%%", 100*x) },
	"verdict": hostVerdict,
	"runs":    runsText,
	"causes":  causesText,
	"group":   groupText,
	"cell":    func(f Figure, i int) HostFigure { return f.Hosts[i] },
	"class": func(verdict string) string {
		if verdict == Outlier || verdict == Noisy {
			return verdict
		}
		return ""
	},
}).Parse(htmlTemplate))

// WriteHTML writes the fleet as one self-contained HTML page (inline CSS,
// nothing fetched): one row per host, a column per figure, then the
// settings that differ. Its title starts "numalab report", the mark by
// which numalab recognises an HTML file it wrote.
func WriteHTML(w io.Writer, f *Fleet) error {
	return tmpl.Execute(w, f)
}
