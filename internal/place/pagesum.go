package place

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
)

// MinOnNode is the fraction of a file's pages [MoveFilePages] must place
// on the node.
const MinOnNode = 0.99

// PageSummary counts the entries of a [PageNodes] answer.
type PageSummary struct {
	Pages   int         `json:"pages"`
	PerNode map[int]int `json:"per_node"`         // pages present on each node
	Absent  int         `json:"absent"`           // -ENOENT or -EFAULT: no page there yet
	Errors  map[int]int `json:"errors,omitempty"` // other negated errnos, by errno
}

// SummarizePages counts pages per node, pages not present, and other
// errors in a [PageNodes] answer. A page not faulted in is -ENOENT on
// recent kernels and -EFAULT on older ones (Debian 12's 6.1): both count
// as absent, since PageNodes is only asked about mapped ranges.
func SummarizePages(status []int) PageSummary {
	s := PageSummary{Pages: len(status), PerNode: map[int]int{}}
	for _, v := range status {
		switch {
		case v >= 0:
			s.PerNode[v]++
		case v == -int(syscall.ENOENT) || v == -int(syscall.EFAULT):
			s.Absent++
		default:
			if s.Errors == nil {
				s.Errors = map[int]int{}
			}
			s.Errors[-v]++
		}
	}
	return s
}

// add counts o's pages into s.
func (s *PageSummary) add(o PageSummary) {
	s.Pages += o.Pages
	s.Absent += o.Absent
	for n, c := range o.PerNode {
		s.PerNode[n] += c
	}
	for e, c := range o.Errors {
		if s.Errors == nil {
			s.Errors = map[int]int{}
		}
		s.Errors[e] += c
	}
}

// Nodes returns the nodes holding at least one page, sorted.
func (s PageSummary) Nodes() []int {
	var ids []int
	for n, c := range s.PerNode {
		if c > 0 {
			ids = append(ids, n)
		}
	}
	slices.Sort(ids)
	return ids
}

// String is "16 pages: N0=12 N1=4 absent=0", with errors by name.
func (s PageSummary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d pages:", s.Pages)
	for _, n := range s.Nodes() {
		fmt.Fprintf(&b, " N%d=%d", n, s.PerNode[n])
	}
	fmt.Fprintf(&b, " absent=%d", s.Absent)
	var errs []int
	for e := range s.Errors {
		errs = append(errs, e)
	}
	slices.Sort(errs)
	for _, e := range errs {
		fmt.Fprintf(&b, " %q=%d", syscall.Errno(e).Error(), s.Errors[e])
	}
	return b.String()
}
