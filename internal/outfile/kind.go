package outfile

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"strings"
)

// A Kind is one sort of file numalab writes, with the mark by which it
// recognises a file it wrote before. The marks are what numalab's files
// always carried, so that files written by earlier versions are recognised
// too; only the capture carries a mark of its own (CaptureComment), since a
// tar.gz has no content of numalab's to recognise it by.
type Kind struct {
	name    string // for messages: "it is not a numalab <name>"
	example string // a file name, for messages about directories
	ours    func(head []byte) bool
}

// CaptureComment is the comment in the gzip header of a topology capture
// (RFC 1952's FCOMMENT): the capture's mark.
const CaptureComment = "numalab topo --capture"

var (
	// HTMLReport is the HTML report: a document whose title starts
	// "numalab report".
	HTMLReport = Kind{"HTML report", "numalab-report.html", func(head []byte) bool {
		return bytes.HasPrefix(head, []byte("<!DOCTYPE html>\n")) &&
			bytes.Contains(head[:min(len(head), 1024)], []byte("<title>numalab report"))
	}}
	// TextReport is the text report: its first line is "numalab report".
	TextReport = Kind{"text report", "numalab-report.txt", func(head []byte) bool {
		return bytes.HasPrefix(head, []byte("numalab report\n"))
	}}
	// CSVReport is the CSV report: its first line is the report's header.
	CSVReport = Kind{"CSV report", "numalab-report.csv", func(head []byte) bool {
		return bytes.HasPrefix(head, []byte("section,run,series,x_name,x,y_name,y,unit,min,max,repeats\n"))
	}}
	// JSONReport is the JSON report: an object whose first member is
	// "runs", a list of runs whose first run's command is a numalab command.
	JSONReport = Kind{"JSON report", "numalab-report.json", jsonReport}
	// Capture is a topology capture (topo --capture): a gzip stream whose
	// header carries CaptureComment.
	Capture = Kind{"topology capture", "machine.tar.gz", func(head []byte) bool {
		zr, err := gzip.NewReader(bytes.NewReader(head))
		return err == nil && zr.Comment == CaptureComment
	}}
)

// jsonReport reads the start of a JSON report token by token, since head
// may end anywhere in the file.
func jsonReport(head []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(head))
	for _, want := range []any{json.Delim('{'), "runs", json.Delim('[')} {
		if tok, err := dec.Token(); err != nil || tok != want {
			return false
		}
	}
	var run struct {
		Command string `json:"command"`
	}
	return dec.Decode(&run) == nil && strings.HasPrefix(run.Command, "numalab ")
}
