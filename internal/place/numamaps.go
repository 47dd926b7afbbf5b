package place

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/sysfs"
)

// NumaMapping is one line of /proc/<pid>/numa_maps: one mapping of a
// process and how many of its pages lie on each node.
type NumaMapping struct {
	Addr   uint64 `json:"addr"`
	Policy string `json:"policy"`         // as the kernel writes it: "default", "bind:0-1", "prefer (many):0-1"
	File   string `json:"file,omitempty"` // mapped file, octal escapes decoded
	Heap   bool   `json:"heap,omitempty"`
	Stack  bool   `json:"stack,omitempty"`
	Huge   bool   `json:"huge,omitempty"` // hugetlbfs mapping

	Anon      int64 `json:"anon,omitempty"`
	Dirty     int64 `json:"dirty,omitempty"`
	Mapped    int64 `json:"mapped,omitempty"`
	MapMax    int64 `json:"mapmax,omitempty"`
	SwapCache int64 `json:"swapcache,omitempty"`
	Active    int64 `json:"active,omitempty"`
	Writeback int64 `json:"writeback,omitempty"`

	// PerNode is the pages present on each node, in units of PageKB.
	PerNode map[int]int64 `json:"per_node,omitempty"`
	PageKB  int64         `json:"page_kb,omitempty"` // kernelpagesize_kB; 0 when no page is present
}

// Pages is the mapping's present pages, summed over nodes.
func (m NumaMapping) Pages() int64 {
	var n int64
	for _, c := range m.PerNode {
		n += c
	}
	return n
}

// ParseNumaMaps parses the text of /proc/<pid>/numa_maps. Keys it does not
// know are skipped, so newer kernels' additions do no harm.
func ParseNumaMaps(r io.Reader) ([]NumaMapping, error) {
	var out []NumaMapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		m, err := parseNumaLine(text)
		if err != nil {
			return nil, fmt.Errorf("parsing numa_maps line %d %q: %w: %w", line, text, sysfs.ErrFormat, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading numa_maps: %w", err)
	}
	return out, nil
}

func parseNumaLine(text string) (NumaMapping, error) {
	var m NumaMapping
	addr, rest, _ := strings.Cut(text, " ")
	a, err := strconv.ParseUint(addr, 16, 64)
	if err != nil {
		return m, fmt.Errorf("address %q is not hexadecimal", addr)
	}
	m.Addr = a
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return m, errors.New("no memory policy after the address")
	}
	// Two policy names contain a space.
	for _, p := range []string{"prefer (many)", "weighted interleave"} {
		if strings.HasPrefix(rest, p) {
			end := strings.IndexByte(rest[len(p):], ' ')
			if end < 0 {
				m.Policy, rest = rest, ""
			} else {
				m.Policy, rest = rest[:len(p)+end], rest[len(p)+end:]
			}
			break
		}
	}
	fields := strings.Fields(rest)
	if m.Policy == "" {
		m.Policy, fields = fields[0], fields[1:]
	}
	for _, f := range fields {
		key, val, ok := strings.Cut(f, "=")
		if !ok {
			switch f {
			case "heap":
				m.Heap = true
			case "stack":
				m.Stack = true
			case "huge":
				m.Huge = true
			}
			continue
		}
		if key == "file" {
			m.File = unescapeOctal(val)
			continue
		}
		var dst *int64
		switch key {
		case "anon":
			dst = &m.Anon
		case "dirty":
			dst = &m.Dirty
		case "mapped":
			dst = &m.Mapped
		case "mapmax":
			dst = &m.MapMax
		case "swapcache":
			dst = &m.SwapCache
		case "active":
			dst = &m.Active
		case "writeback":
			dst = &m.Writeback
		case "kernelpagesize_kB":
			dst = &m.PageKB
		}
		node := -1
		if len(key) > 1 && key[0] == 'N' {
			n, err := strconv.Atoi(key[1:])
			if err != nil || n < 0 {
				return m, fmt.Errorf("%q is not a node count (expected N<node>=<pages>)", f)
			}
			node = n
		}
		if dst == nil && node < 0 {
			continue // a key this parser does not know
		}
		v, err := strconv.ParseInt(val, 10, 64)
		if err != nil || v < 0 {
			return m, fmt.Errorf("%q: value is not a count", f)
		}
		if node >= 0 {
			if m.PerNode == nil {
				m.PerNode = map[int]int64{}
			}
			m.PerNode[node] += v
		} else {
			*dst = v
		}
	}
	return m, nil
}

// unescapeOctal decodes the \ooo escapes the kernel writes for spaces,
// tabs, newlines and '=' in file names.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// ReadNumaMaps reads /proc/<pid>/numa_maps under root ("/" on a live
// machine). Reading another user's process needs the right to ptrace it.
func ReadNumaMaps(root string, pid int) ([]NumaMapping, error) {
	ms, err := sysfs.Parse(sysfs.New(root), "proc/"+strconv.Itoa(pid)+"/numa_maps", ParseNumaMaps)
	if err != nil {
		return nil, fmt.Errorf("reading the page placement of pid %d: %w", pid, err)
	}
	return ms, nil
}

// NumaUsage is a process's (or a set of mappings') memory per node.
type NumaUsage struct {
	Pages map[int]int64 `json:"pages"` // pages per node, of whatever size each mapping uses
	Bytes map[int]int64 `json:"bytes"` // bytes per node
}

// SumNumaMaps adds up the mappings' pages and bytes per node. Filter the
// mappings first to count, say, only shared memory or only anonymous pages.
func SumNumaMaps(ms []NumaMapping) NumaUsage {
	u := NumaUsage{Pages: map[int]int64{}, Bytes: map[int]int64{}}
	for _, m := range ms {
		for n, c := range m.PerNode {
			u.Pages[n] += c
			u.Bytes[n] += c * m.PageKB * 1024
		}
	}
	return u
}

// Nodes returns the nodes holding any of the memory, sorted.
func (u NumaUsage) Nodes() []int {
	return slices.Sorted(maps.Keys(u.Pages))
}

// Local is the fraction of the bytes that lie on the given nodes (0 when
// there are none).
func (u NumaUsage) Local(nodes ...int) float64 {
	var in, all int64
	for n, b := range u.Bytes {
		all += b
		if slices.Contains(nodes, n) {
			in += b
		}
	}
	if all == 0 {
		return 0
	}
	return float64(in) / float64(all)
}
