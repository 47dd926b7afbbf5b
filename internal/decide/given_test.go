package decide

import (
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/model"
)

func TestGivenCPU(t *testing.T) {
	c, as := GivenCPU(3, model.Latencies{LocalNS: 67}, 16, 2)
	// --local-ns is read as 'numalab model' reads it: a multi-socket
	// server's local latency, and one socket's without --one-socket-ns;
	// the remote latency follows the published ratio.
	remote := 67 * model.PublishedRemoteRatio.Value
	if want := (CPU{GHz: 3, CoresPerSocket: 16, SMT: 2, OneSocketNS: 67, LocalNS: 67, RemoteNS: remote,
		RemoteAssumed: true}); c != want {
		t.Errorf("CPU %+v, want %+v", c, want)
	}
	if len(as) != 4 || as[3].Value != remote || !strings.HasPrefix(as[3].Source, "no --remote-ns") ||
		!as[3].Banded() || as[2].Banded() {
		t.Errorf("no remote: %+v", as)
	}
	c, _ = GivenCPU(3, model.Latencies{LocalNS: 89, OneSocketNS: 76}, 16, 2)
	if c.OneSocketNS != 76 || c.LocalNS != 89 {
		t.Errorf("--one-socket-ns 76 --local-ns 89: %+v", c)
	}
	c, as = GivenCPU(3, model.Latencies{LocalNS: 67, RemoteNS: 140}, 16, 2)
	if r := c.RemoteNS; r != 140 || as[3].Source != "--remote-ns" || c.RemoteAssumed {
		t.Errorf("remote given: %g, %+v", r, as)
	}
	if w := GivenWorkload(model.Workload{Instructions: 1e7, Miss: 0.05}); len(w) != 2 || w[0].Basis != calib.Assumed ||
		w[1].Value != 0.05 {
		t.Errorf("GivenWorkload = %+v", w)
	}
}
