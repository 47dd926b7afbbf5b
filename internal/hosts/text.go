package hosts

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/model"
)

// WriteText prints the decision, then one row per host, what each host's
// own fit says of more sockets, the warnings and the notes.
func WriteText(w io.Writer, c *Comparison) error {
	fmt.Fprintln(w, c.Recommendation)
	fmt.Fprintf(w, "\nMeasured: %s; each host's best cell (the highest mean tps of its cell points).\n", c.Measure)
	fmt.Fprintf(w, "Band: %s.\n", c.Band)
	fmt.Fprintln(w, "Cost: the host's price (or hourly × hours) + its physical cores × licence per core.")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "host\trun\tcores\tSMT\tnodes\tGHz\tlocal ns\tbest cell\t"+
		"repeats\ttps\tlow\thigh\tspread\ttps/core\tcost\tlicences\tper 1000 tps\tlow\thigh\t")
	for _, h := range c.Hosts {
		m := h.Machine
		high := "-"
		switch {
		case h.Unbounded:
			high = "none"
		case h.Banded:
			high = model.Thousands(h.CostHigh)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t\n",
			h.Name, h.Run, m.Cores, m.SMT, m.Nodes, orDash(m.GHz, model.Fixed(m.GHz, 2)),
			orDash(m.LocalNS, model.Fixed(m.LocalNS, 1)), h.Cell,
			len(h.Repeats), model.Thousands(h.TPS), model.Thousands(h.TPSLow), model.Thousands(h.TPSHigh),
			model.Percent(h.Spread),
			h.TPSPerCore, model.Thousands(h.Price.Amount()), model.Thousands(h.LicenceCost), model.Thousands(h.CostPerKTPS),
			model.Thousands(h.CostLow), high)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nWhat each host's own fit says of its CPU in more sockets (model, not measured):")
	for _, h := range c.Hosts {
		fmt.Fprintf(w, "  %s: %s\n", h.Name, SocketWords(h))
	}
	fmt.Fprintln(w, "\nHosts:")
	for _, h := range c.Hosts {
		fmt.Fprintf(w, "  %s: run %d of %s (%s, numalab %s); %s; %s\n", h.Name, h.Run, h.Store,
			h.Started.Format("2006-01-02 15:04 MST"), h.Version,
			MachineWords(h.Machine), h.Price)
		for _, x := range h.Warnings {
			fmt.Fprintf(w, "    ! %s\n", x)
		}
	}
	for _, n := range c.Notes {
		fmt.Fprintf(w, "\nNote: %s\n", n)
	}
	for _, n := range c.LeftOut {
		fmt.Fprintf(w, "\nLeft out: %s\n", n)
	}
	return nil
}

// SocketWords is what a host's fit predicts of 2 and 4 sockets, and the
// fit it rests on.
func SocketWords(h Host) string {
	if len(h.Sockets) == 0 {
		return h.Fit
	}
	var parts []string
	for _, s := range h.Sockets {
		parts = append(parts,
			fmt.Sprintf("%d sockets %s tps (×%s of one)", s.Sockets, model.Thousands(s.TotalTPS), model.Fixed(s.VsOne, 2)))
	}
	return strings.Join(parts, ", ") + "; fit: " + h.Fit
}

// MachineWords is a machine in one phrase.
func MachineWords(m Machine) string {
	s := fmt.Sprintf("%s, %d %s, %d cores, %d threads, %d %s, %s GiB",
		cmp.Or(m.CPUModel, "CPU unknown"), m.Sockets, plural(m.Sockets, "socket", "sockets"),
		m.Cores, m.Threads, m.Nodes, plural(m.Nodes, "node", "nodes"), model.Fixed(m.MemGiB, 1))
	if m.Hypervisor != "" {
		s += ", hypervisor " + m.Hypervisor
	}
	if m.Governor != "" {
		s += ", governor " + m.Governor
	}
	if m.ProbeRun == 0 {
		return s + ", no memory probe"
	}
	return s + fmt.Sprintf(", probe run %d", m.ProbeRun)
}

// WriteCSV prints one row per host.
func WriteCSV(w io.Writer, c *Comparison) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"host", "store", "run", "version", "workload", "engine", "cpu_model", "sockets",
		"cores", "threads", "smt", "nodes", "ghz", "local_ns",
		"remote_ns", "streams", "placement", "repeats", "tps", "tps_low", "tps_high", "spread", "tps_per_core",
		"price", "licence_per_core",
		"licence_cost", "total_cost", "cost_per_1000_tps", "cost_low", "cost_high", "tps_2_sockets",
		"tps_4_sockets", "warnings", "decision"})
	g := model.G12
	for _, h := range c.Hosts {
		m := h.Machine
		fit := map[int]string{}
		for _, s := range h.Sockets {
			fit[s.Sockets] = g(s.TotalTPS)
		}
		verdict := ""
		switch {
		case c.Decision == h.Name:
			verdict = "buy"
		case c.Decision == "" && (h.Name == c.Hosts[0].Name || slices.Contains(c.Rivals, h.Name)):
			verdict = "cannot tell"
		}
		cw.Write([]string{h.Name, h.Store, strconv.FormatInt(h.Run, 10), h.Version, c.Measure.Workload,
			c.Measure.Engine, m.CPUModel,
			strconv.Itoa(m.Sockets), strconv.Itoa(m.Cores), strconv.Itoa(m.Threads), strconv.Itoa(m.SMT),
			strconv.Itoa(m.Nodes), g(m.GHz),
			g(m.LocalNS), g(m.RemoteNS), strconv.Itoa(h.Cell.Streams), h.Cell.Placement,
			strconv.Itoa(len(h.Repeats)), g(h.TPS), g(h.TPSLow),
			g(h.TPSHigh), g(h.Spread), g(h.TPSPerCore), g(h.Price.Amount()), g(h.Price.LicencePerCore),
			g(h.LicenceCost), g(h.TotalCost),
			g(h.CostPerKTPS), g(h.CostLow), g(h.CostHigh), fit[2], fit[4], strings.Join(h.Warnings, " | "),
			verdict})
	}
	cw.Flush()
	return cw.Error()
}

func orDash(v float64, s string) string {
	if v == 0 {
		return "-"
	}
	return s
}
