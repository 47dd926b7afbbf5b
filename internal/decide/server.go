package decide

// Server is a candidate to buy: its shape, its memory latency and its
// price. The throughput formulas are the model's (docs/model.md), after Joe
// Chang's sizing articles.
type Server struct {
	Name           string  `json:"name" toml:"name"`
	Sockets        int     `json:"sockets" toml:"sockets"`
	CoresPerSocket int     `json:"cores_per_socket" toml:"cores_per_socket"`
	GHz            float64 `json:"ghz" toml:"ghz"`
	SMT            int     `json:"smt" toml:"smt"` // hardware threads per core in use
	LocalNS        float64 `json:"local_ns" toml:"local_ns"`
	RemoteNS       float64 `json:"remote_ns,omitempty" toml:"remote_ns"`
	// DDR ("3200 22-22-22": MT/s, then CL-tRCD-tRP) with ControllerNS
	// gives LocalNS when it is not given: the random-row access at the
	// DRAM, (tRP + tRCD + CL)·2000/R ns, plus the time outside the DRAM
	// chips (core to memory controller and back).
	DDR            string  `json:"ddr,omitempty" toml:"ddr"`
	ControllerNS   float64 `json:"controller_ns,omitempty" toml:"controller_ns"`
	BufferNS       float64 `json:"buffer_ns,omitempty" toml:"buffer_ns"` // on every access, every socket count
	Price          float64 `json:"price" toml:"price"`                   // the whole server
	LicencePerCore float64 `json:"licence_per_core" toml:"licence_per_core"`
	Note           string  `json:"note,omitempty" toml:"note"` // how it was chosen or derived

	line int // where the candidates file defines it; 0: built in
	// oneNS is, for a built-in candidate derived from one socket's
	// latency, that latency: its multi-socket latencies follow the
	// published ratios (Uncertainty); remoteDerived says its remote
	// latency does too.
	oneNS         float64
	remoteDerived bool
	// catLow and catHigh are, for a catalogue CPU (catalogue.go), the
	// band of its one-socket latency, whose middle oneNS (or LocalNS)
	// is; both 0 otherwise.
	catLow, catHigh float64
	// perCore, perCoreLow and perCoreHigh are, for a catalogue CPU with
	// a published per-core figure, that figure and its band: against this
	// machine's (Uncertainty.ThisSpeed) they give its per-core speed k,
	// and its core cycles per transaction are A·f/(f₀·k) at its clock f,
	// f₀ this machine's, so that its core time is this machine's over k.
	// 0: this machine's A at its own clock (the same IPC).
	perCore, perCoreLow, perCoreHigh float64
	// cpu is a catalogue candidate's CPU: its servers of one and two
	// sockets share one per-core figure (pairedRivals).
	cpu string
}

// Cores is every physical core of the server, all licensed.
func (s Server) Cores() int { return s.Sockets * s.CoresPerSocket }

// LatencyNS is the server's average memory latency with a fraction r of
// accesses remote: (1 − r)·Lloc + r·Lrem + B; one socket: Lloc + B.
func (s Server) LatencyNS(r float64) float64 {
	if s.Sockets <= 1 {
		return s.LocalNS + s.BufferNS
	}
	return (1-r)*s.LocalNS + r*s.RemoteNS + s.BufferNS
}

// NoLocality is the remote fraction with no memory locality: every node
// equally likely, (S − 1)/S.
func (s Server) NoLocality() float64 {
	return float64(s.Sockets-1) / float64(s.Sockets)
}
