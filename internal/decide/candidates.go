package decide

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/numalab/numalab/internal/dram"
	"github.com/numalab/numalab/internal/model"
)

// candidatesFile is a candidates file: one [[server]] table per server.
type candidatesFile struct {
	Server []Server `toml:"server"`
}

// ParseCandidates reads a candidates file (TOML, one [[server]] table per
// server; see docs/model.md) and validates every server. Errors name the
// file, the line and the field; all of them are reported together.
func ParseCandidates(name string, data []byte) ([]Server, error) {
	var f candidatesFile
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s:%d: %s: %w", name, pe.Position.Line, pe.Message, model.ErrInput)
		}
		// A value of the wrong type: "toml: line 7 (last key "server.x"): ...".
		if m := tomlTypeError.FindStringSubmatch(err.Error()); m != nil {
			return nil, fmt.Errorf("%s:%s: %s: %s: %w", name, m[1], m[2], m[3], model.ErrInput)
		}
		return nil, fmt.Errorf("%s: %v: %w", name, err, model.ErrInput)
	}
	lines := keyLines(data)
	var errs []error
	for _, k := range md.Undecoded() {
		errs = append(errs, fmt.Errorf("%s:%d: unknown key %q (want a [[server]] table with name, sockets, "+
			"cores_per_socket, ghz, smt, local_ns, remote_ns, ddr, controller_ns, buffer_ns, price, licence_per_core, note): %w",
			name, lines.of(k), k.String(), model.ErrInput))
	}
	if len(f.Server) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s: no [[server]] table: want one per candidate: %w", name, model.ErrInput))
	}
	seen := map[string]bool{}
	for i := range f.Server {
		s := &f.Server[i]
		s.line = lines.header(i)
		if _, given := lines.keys[i]["smt"]; s.SMT == 0 && !given {
			s.SMT = 1
		}
		for _, e := range s.resolve() {
			errs = append(errs, fmt.Errorf("%s:%d: %s: %w", name, lines.field(i, e.field, s.line), e.msg, model.ErrInput))
		}
		if seen[s.Name] && s.Name != "" {
			errs = append(errs, fmt.Errorf("%s:%d: name %q: a second server of that name: want one name per candidate: %w",
				name, lines.field(i, "name", s.line), s.Name, model.ErrInput))
		}
		seen[s.Name] = true
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return f.Server, nil
}

// fieldError is a bad field of a server.
type fieldError struct{ field, msg string }

// resolve fills LocalNS from DDR and checks every field against what a
// server can be.
func (s *Server) resolve() []fieldError {
	var errs []fieldError
	bad := func(field, format string, a ...any) {
		errs = append(errs, fieldError{field, fmt.Sprintf("server %q: %s ", s.Name, field) + fmt.Sprintf(format, a...)})
	}
	if strings.TrimSpace(s.Name) == "" {
		bad("name", "is missing: want a name for the candidate")
	}
	intIn := func(field string, v, lo, hi int, what string) {
		if v < lo || v > hi {
			bad(field, "= %d is not %s: want %d to %d", v, what, lo, hi)
		}
	}
	floatIn := func(field string, v, lo, hi float64, what string) {
		if !(v > lo && v <= hi) {
			bad(field, "= %s is not %s: want above %s and at most %s", model.Num(v), what, model.Num(lo), model.Num(hi))
		}
	}
	intIn("sockets", s.Sockets, 1, model.PublishedSockets,
		"a socket count whose latency local_ns and remote_ns give (beyond 4 sockets the hops between them matter, "+
			"which one remote latency does not give: 'numalab model --topology FILE' models more)")
	intIn("cores_per_socket", s.CoresPerSocket, 1, 1024, "a core count")
	intIn("smt", s.SMT, 1, 8, "a count of hardware threads per core")
	floatIn("ghz", s.GHz, 0, 10, "a core clock in GHz")
	if s.DDR != "" {
		if s.LocalNS != 0 {
			bad("ddr", "and local_ns are both given: give one (ddr with controller_ns converts to local_ns)")
		}
		mts, t, err := parseDDR(s.DDR)
		if err != nil {
			bad("ddr", "= %q: %v", s.DDR, err)
		} else if !(s.ControllerNS > 0 && s.ControllerNS <= 1000) {
			bad("controller_ns", "= %s: with ddr, want the time outside the DRAM chips in ns, above 0 and at most 1000 "+
				"(local_ns = (tRP + tRCD + CL)·2000/MT/s + controller_ns)", model.Num(s.ControllerNS))
		} else {
			s.LocalNS = dram.AccessNS(mts, t) + s.ControllerNS
		}
	} else {
		floatIn("local_ns", s.LocalNS, 0, 2000, "a memory latency in ns (or give ddr and controller_ns)")
	}
	switch {
	case s.Sockets > 1 && !(s.RemoteNS >= s.LocalNS && s.RemoteNS <= 5000):
		bad("remote_ns", "= %s: with %d sockets, want the remote latency in ns, at least local_ns (%s) and at most 5000",
			model.Num(s.RemoteNS), s.Sockets, model.Num(s.LocalNS))
	case s.Sockets == 1 && s.RemoteNS != 0:
		bad("remote_ns", "= %s on one socket: a one-socket server has no remote memory (leave it out)", model.Num(s.RemoteNS))
	}
	if !(s.BufferNS >= 0 && s.BufferNS <= 500) {
		bad("buffer_ns", "= %s is not a buffer latency: want 0 to 500 ns", model.Num(s.BufferNS))
	}
	floatIn("price", s.Price, 0, 1e9, "a price")
	if !(s.LicencePerCore >= 0 && s.LicencePerCore <= 1e7) {
		bad("licence_per_core",
			"= %s is not a licence price: want 0 (no per-core licence) to 10,000,000", model.Num(s.LicencePerCore))
	}
	return errs
}

var tomlTypeError = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

var ddrSpec = regexp.MustCompile(`^\s*(\d+(?:\.\d+)?)\s+(\S+)\s*$`)

// parseDDR reads "MT/s CL-tRCD-tRP", e.g. "3200 22-22-22".
func parseDDR(s string) (float64, dram.Timings, error) {
	m := ddrSpec.FindStringSubmatch(s)
	if m == nil {
		return 0, dram.Timings{}, errors.New(`want "MT/s CL-tRCD-tRP", e.g. "3200 22-22-22"`)
	}
	mts, _ := strconv.ParseFloat(m[1], 64)
	if why := dram.RateBound(mts); why != "" {
		return 0, dram.Timings{}, fmt.Errorf("%s MT/s is %s", m[1], why)
	}
	t, err := dram.ParseTimings(m[2])
	if err != nil {
		return 0, dram.Timings{}, fmt.Errorf("timings %q: want CL-tRCD-tRP in clock cycles, e.g. 22-22-22", m[2])
	}
	if why := dram.TimingsBound(t, mts); why != "" {
		return 0, dram.Timings{}, fmt.Errorf("timings %q %s", m[2], why)
	}
	return mts, t, nil
}

// keyLineIndex is where a candidates file sets each key: per [[server]]
// table (in order) its header line and its keys' lines.
type keyLineIndex struct {
	headers []int
	keys    []map[string]int
	top     map[string]int
}

var (
	serverHeader = regexp.MustCompile(`^\s*\[\[\s*server\s*\]\]`)
	anyHeader    = regexp.MustCompile(`^\s*\[`)
	keyLine      = regexp.MustCompile(`^\s*"?([A-Za-z0-9_.-]+)"?\s*=`)
)

// keyLines indexes the lines of a candidates file for error messages.
func keyLines(data []byte) keyLineIndex {
	x := keyLineIndex{top: map[string]int{}}
	cur := x.top
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case serverHeader.MatchString(line):
			x.headers = append(x.headers, n)
			cur = map[string]int{}
			x.keys = append(x.keys, cur)
		case anyHeader.MatchString(line):
			cur = map[string]int{}
		default:
			if m := keyLine.FindStringSubmatch(line); m != nil {
				if _, ok := cur[m[1]]; !ok {
					cur[m[1]] = n
				}
			}
		}
	}
	return x
}

func (x keyLineIndex) header(i int) int {
	if i < len(x.headers) {
		return x.headers[i]
	}
	return 0
}

// field is the line of server i's key, else its header's.
func (x keyLineIndex) field(i int, key string, header int) int {
	if i < len(x.keys) {
		if n, ok := x.keys[i][key]; ok {
			return n
		}
	}
	return header
}

// of is the line of an undecoded key such as server.sockts (the first
// [[server]] table that sets it) or color.
func (x keyLineIndex) of(k toml.Key) int {
	if len(k) >= 2 && k[0] == "server" {
		for _, keys := range x.keys {
			if n, ok := keys[k[len(k)-1]]; ok {
				return n
			}
		}
	}
	if len(k) > 0 {
		return x.top[k[0]]
	}
	return 0
}

// Prices of the built-in candidates, all illustrative: not quotes and not
// from a dated public source, they only make the cost arithmetic
// concrete (the README's 'model size' example: a 16-core processor at
// 3,000, systems at 4,000 for one socket, 9,000 for two and 40,000 for
// four, 7,000 per core of licence). 'model buy --candidates' takes real
// prices.
const (
	builtinPricePerCore = 3000.0 / 16
	builtinLicence      = 7000.0
	builtinDRAMPremium  = 1000.0 // per socket, for the lower-latency modules
)

var builtinSystem = map[int]float64{1: 4000, 2: 9000, 4: 40000}

// AssumeLicence names the licence price per core among a purchase's
// assumptions when the built-in candidates give it.
const AssumeLicence = "licence per physical core"

// Illustrative is the label of every built-in price.
const Illustrative = "illustrative prices, not quotes: give yours with --candidates"

// Lower-latency DRAM of the built-in candidates: the same transfer rate
// with tighter timings, 16-18-18 instead of 22-22-22 at 3200 MT/s:
// (22 + 22 + 22 − 16 − 18 − 18)·2000/3200 = 8.75 ns less per access.
var (
	builtinDRAMSlow = dram.Timings{CL: 22, RCD: 22, RP: 22}
	builtinDRAMFast = dram.Timings{CL: 16, RCD: 18, RP: 18}
)

// CPU is the processor the built-in candidates are derived from: its
// clock, physical cores per socket, hardware threads per core, one
// socket's latency and a multi-socket server's local and remote latency
// (RemoteAssumed: from the published ratio, not measured).
type CPU struct {
	GHz                            float64
	CoresPerSocket                 int
	SMT                            int
	OneSocketNS, LocalNS, RemoteNS float64
	RemoteAssumed                  bool
}

// BuiltinCandidates derives candidates from this CPU: 1, 2 and 4 sockets
// (one socket at its one-socket latency, more at the multi-socket local
// and remote latencies); half the cores at a 25% higher clock; SMT on and
// off; lower-latency DRAM. Prices are illustrative (see the constants) and
// each Note says so.
func BuiltinCandidates(this CPU) []Server {
	ghz, oneNS := this.GHz, this.OneSocketNS
	if !(oneNS > 0) {
		oneNS = this.LocalNS
	}
	cores, smt := max(this.CoresPerSocket, 1), max(this.SMT, 1)
	price := func(sockets, coresPer int) float64 {
		return builtinSystem[sockets] + float64(sockets*coresPer)*builtinPricePerCore
	}
	base := Server{CoresPerSocket: cores, GHz: ghz, SMT: 1, LocalNS: oneNS, LicencePerCore: builtinLicence}
	var out []Server
	for _, n := range []int{1, 2, 4} {
		s := base
		s.Name, s.Sockets, s.Price = fmt.Sprintf("this CPU ×%d", n), n, price(n, cores)
		if n > 1 {
			s.LocalNS, s.RemoteNS, s.oneNS, s.remoteDerived = this.LocalNS, this.RemoteNS, oneNS, this.RemoteAssumed
		}
		s.Note = fmt.Sprintf("%d× this CPU, one thread per core; price %s for the system + %s per core (%s)",
			n, model.Thousands(builtinSystem[n]), model.Num(builtinPricePerCore), Illustrative)
		out = append(out, s)
	}
	half := base
	half.Name, half.Sockets, half.CoresPerSocket, half.GHz = "half cores, +25% clock", 1, max(cores/2, 1), ghz*1.25
	half.Price = price(1, cores)
	half.Note = fmt.Sprintf("%d cores at %s GHz: a frequency-optimised part at the price of the full one (%s)",
		half.CoresPerSocket, model.Fixed(half.GHz, 2), Illustrative)
	out = append(out, half)
	k := max(smt, 2)
	on := base
	on.Name, on.Sockets, on.SMT, on.Price = fmt.Sprintf("this CPU ×1, SMT %d", k), 1, k, price(1, cores)
	on.Note = fmt.Sprintf("%d threads per core at the SMT gain stated; same price (a firmware setting)", k)
	if smt == 1 {
		on.Note = fmt.Sprintf(
			"this CPU has one thread per core: a CPU like it with %d, at the SMT gain stated; same price (%s)", k, Illustrative)
	}
	out = append(out, on)
	fast := base
	cut := dram.AccessNS(3200, builtinDRAMSlow) - dram.AccessNS(3200, builtinDRAMFast)
	fast.Name, fast.Sockets, fast.LocalNS = "this CPU ×1, low-latency DRAM", 1, math.Max(oneNS-cut, 1)
	fast.Price = price(1, cores) + builtinDRAMPremium
	fast.Note = fmt.Sprintf("DDR4-3200 16-18-18 instead of 22-22-22: %s ns less per access; %s more (%s)",
		model.Fixed(cut, 2), model.Thousands(builtinDRAMPremium), Illustrative)
	out = append(out, fast)
	return out
}
