package null

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/runconfig"
)

// RunConfig is a null sweep ('numalab run null'); it is stored with the
// run.
type RunConfig struct {
	// Common are the engine, the windows, the repeats and the pacing of
	// the calls: Load's Pacing, the zero value running closed loops, its
	// arrivals seeded by Seed (1; run null has no --seed); its MonitorLoad
	// is --monitor's paced half. run null has no load curve, and no DB.
	runconfig.Common
	Transports []string `json:"transports"`
	Pairings   []string `json:"pairings"`
	Protocol   string   `json:"protocol"`
	// Call is what a round trip asks: CallSelect1 (also when empty) or,
	// on MariaDB with the prepared protocol, CallPointSelect.
	Call    string `json:"call,omitempty"`
	Streams []int  `json:"streams"`
	// Monitor names the facilities whose cost 'run null --monitor'
	// measures (package monitor); AllowSettings lets it set them in its
	// sessions on a --dsn server.
	Monitor       []string `json:"monitor,omitempty"`
	AllowSettings bool     `json:"allow_settings,omitempty"`
}

// DefaultRunConfig is 'numalab run null' without flags.
func DefaultRunConfig() RunConfig {
	return RunConfig{Common: runconfig.Common{Engine: "postgres", Duration: 5 * time.Second, Warmup: time.Second,
		Repeat: 3, Seed: 1},
		Transports: []string{Unix, TCP}, Pairings: Pairings, Protocol: Prepared, Call: CallSelect1, Streams: []int{1}}
}

// Check validates the configuration.
func (c *RunConfig) Check() error {
	var errs []error
	bad := func(flag, v, want string) { errs = append(errs, fmt.Errorf("-%s: %q %s", flag, v, want)) }
	spec, _, ok := dialectOf(c.Engine)
	servers := engine.List(func(s engine.Spec) bool { _, _, ok := dialectOf(s.Name); return ok && s.Server })
	switch {
	case !ok:
		bad("engine", c.Engine, "is not an engine of the null transaction: want "+Engines())
	case !spec.Server:
		if c.DSN != "" {
			bad("dsn", result.Redact(c.DSN), "is for --engine "+servers)
		}
		if len(c.Monitor) > 0 {
			bad("monitor", strings.Join(c.Monitor, ","), "is for --engine "+servers+": "+spec.Title+
				"'s null transaction runs in this process, with no server and no session whose monitoring to switch")
		}
	default:
		if len(c.Transports) == 0 {
			bad("transport", "", "is empty: want unix, tcp or unix,tcp")
		}
		for _, t := range c.Transports {
			if t != Unix && t != TCP {
				bad("transport", t, "is not a transport: want unix or tcp")
			}
		}
		if c.DSN != "" && len(c.Transports) > 1 {
			bad("transport", fmt.Sprint(c.Transports), "names two transports, and a --dsn is one (its host says which)")
		}
	}
	for _, p := range c.Pairings {
		if !slices.Contains(Pairings, p) {
			bad("pairing", p, "is not a pairing: want same-cpu, smt-sibling, other-core or other-node")
		}
	}
	if c.Protocol != Prepared && c.Protocol != Simple {
		bad("protocol", c.Protocol, "is not a protocol: want prepared or simple")
	}
	switch c.Call {
	case "", CallSelect1:
	case CallPointSelect:
		if !PointSelectOn(c.Engine) || c.Protocol != Prepared {
			bad("call", c.Call, "is for --engine "+engine.List(func(s engine.Spec) bool { return PointSelectOn(s.Name) })+
				" with --protocol prepared (sysbench's oltp_point_select prepares its statement)")
		}
	default:
		bad("call", c.Call, "is not a call: want select1 or point-select")
	}
	if len(c.Streams) == 0 || slices.Min(c.Streams) < 1 {
		bad("streams", fmt.Sprint(c.Streams), "needs counts of 1 or more: want e.g. 1,2,4")
	}
	return errors.Join(append(errs, c.Common.Check())...)
}
