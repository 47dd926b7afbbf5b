package decide

import (
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/model"
)

func TestGivenCPU(t *testing.T) {
	c, as := GivenCPU(3, 67, 0, 16, 2)
	// --local-ns is one socket's: the multi-socket local and remote
	// latencies follow the published ratios.
	multi := 67 * model.PublishedMultiSocketLocal.Value
	remote := multi * model.PublishedRemoteRatio.Value
	if want := (CPU{GHz: 3, CoresPerSocket: 16, SMT: 2, OneSocketNS: 67, LocalNS: multi, RemoteNS: remote, RemoteAssumed: true}); c != want {
		t.Errorf("CPU %+v, want %+v", c, want)
	}
	if len(as) != 4 || as[3].Value != remote || !strings.HasPrefix(as[3].Source, "no --remote-ns") || !as[3].Banded() || !as[2].Banded() {
		t.Errorf("no remote: %+v", as)
	}
	c, as = GivenCPU(3, 67, 140, 16, 2)
	if r := c.RemoteNS; r != 140 || as[3].Source != "--remote-ns" || c.RemoteAssumed {
		t.Errorf("remote given: %g, %+v", r, as)
	}
	if w := GivenWorkload(model.Workload{Instructions: 1e7, Miss: 0.05}); len(w) != 2 || w[0].Basis != calib.Assumed || w[1].Value != 0.05 {
		t.Errorf("GivenWorkload = %+v", w)
	}
}
