package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/result"
)

// WriteRuns lists runs, one a line: id, start, host, kind, status and
// headline.
func WriteRuns(w io.Writer, runs []result.Run) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED (UTC)\tHOST\tKIND\tSTATUS\tHEADLINE")
	for _, r := range runs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Started.UTC().Format("2006-01-02 15:04:05"),
			r.Host, r.Kind, r.Status, r.Headline)
	}
	return tw.Flush()
}

// WriteRun prints one run: its provenance, machine, configuration and
// every item it stored, in order.
func WriteRun(w io.Writer, r *result.Run) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "run\t%d (%s)\n", r.ID, r.Kind)
	fmt.Fprintf(tw, "command\t%s\n", r.Command)
	fmt.Fprintf(tw, "numalab\t%s\n", r.Version)
	fmt.Fprintf(tw, "host\t%s\n", r.Host)
	fmt.Fprintf(tw, "started\t%s UTC\n", r.Started.UTC().Format("2006-01-02 15:04:05.000"))
	if !r.Finished.IsZero() {
		fmt.Fprintf(tw, "finished\t%s UTC (%.1f s)\n", r.Finished.UTC().Format("2006-01-02 15:04:05.000"),
			r.Finished.Sub(r.Started).Seconds())
	}
	fmt.Fprintf(tw, "status\t%s\n", r.Status)
	if r.Error != "" {
		fmt.Fprintf(tw, "error\t%s\n", r.Error)
	}
	if r.Headline != "" {
		fmt.Fprintf(tw, "headline\t%s\n", r.Headline)
	}
	if m := r.Machine; m != nil {
		fmt.Fprintf(tw, "machine\t%s; %d packages, %d nodes, %d cores, %d logical CPUs\n",
			m.CPUModel, len(m.Packages), len(m.Nodes), len(m.Cores), len(m.CPUs))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "config:\n  %s\n", compact(r.Config))
	fmt.Fprintf(w, "items (%d):\n", len(r.Results))
	for _, it := range r.Results {
		fmt.Fprintf(w, "  %d %s %s\n", it.Seq, it.Kind, compact(it.Body))
	}
	return nil
}

// compact prints stored JSON on one line.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
