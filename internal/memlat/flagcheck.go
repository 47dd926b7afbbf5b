package memlat

import (
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/setting"
)

// SetPagesNodes sets c's page sizes and matrix nodes as 'numalab probe
// mem' takes them, --pages (4k, 2m or both) and --nodes (e.g. 0,1; empty:
// all), and names the flag and value of each it cannot take.
func (c *Config) SetPagesNodes(pages, nodes string) []error {
	var errs []error
	switch pages {
	case "4k", "2m":
		c.Pages = []string{pages}
	case "both":
	default:
		errs = append(errs, setting.Errorf("pages", "%q is not a page size (want 4k, 2m or both)", pages))
	}
	if nodes != "" {
		for _, f := range strings.Split(nodes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 0 {
				errs = append(errs, setting.Errorf("nodes", "%q is not a list of node numbers (want e.g. 0,1)", nodes))
				break
			}
			c.Nodes = append(c.Nodes, n)
		}
	}
	return errs
}
