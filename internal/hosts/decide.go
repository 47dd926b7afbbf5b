package hosts

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aclements/go-moremath/stats"
	"github.com/numalab/numalab/internal/model"
)

// MaxMoreRepeats bounds the repeats Compare looks for: beyond it, the
// hosts cost the same to within what repeats can tell apart.
const MaxMoreRepeats = 1000

// decide names the cheapest host per 1,000 tps (Hosts is sorted), unless
// its cost band overlaps another host's: then "cannot tell", with the
// repeats more on each that would part the bands.
func (c *Comparison) decide() {
	w := c.Hosts[0]
	for _, o := range c.Hosts[1:] {
		if !w.Banded || !o.Banded || w.Unbounded || o.CostLow <= w.CostHigh {
			c.Rivals = append(c.Rivals, o.Name)
		}
	}
	if len(c.Rivals) == 0 {
		c.Decision = w.Name
		c.Recommendation = fmt.Sprintf("Buy %s: %s, the cheapest of %d hosts measured; %s.",
			w.Name, costWords(w), len(c.Hosts), tpsWords(w))
		return
	}
	names := append([]string{w.Name}, c.Rivals...)
	who := strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	var once []string
	more, ok := 0, true
	for _, h := range c.Hosts {
		if !h.Banded && (h.Name == w.Name || slices.Contains(c.Rivals, h.Name)) {
			once = append(once, h.Name)
		}
	}
	for _, o := range c.Hosts[1:] {
		if !slices.Contains(c.Rivals, o.Name) || len(once) > 0 {
			continue
		}
		m, found := MoreRepeats(w, o)
		ok = ok && found
		more = max(more, m)
	}
	// Bands overlap; a host measured once has none to overlap.
	s := fmt.Sprintf("Cannot tell: %s overlap (%s: %s", who, w.Name, costWords(w))
	if len(once) > 0 {
		s = fmt.Sprintf("Cannot tell between %s (%s: %s", who, w.Name, costWords(w))
	}
	for _, o := range c.Hosts[1:] {
		if slices.Contains(c.Rivals, o.Name) {
			s += fmt.Sprintf("; %s: %s", o.Name, costWords(o))
		}
	}
	s += ")"
	switch {
	case len(once) > 0:
		s += fmt.Sprintf("; %s measured once, so no spread is known: repeat the runs (at least 3 repeats: "+
			"'numalab run oltp --repeat 3', or a longer 'numalab eval') to decide.",
			strings.Join(once, " and ")+" "+plural(len(once), "was", "were"))
	case ok:
		c.MoreRepeats = more
		s += fmt.Sprintf("; %d more %s on each would decide (at the means and spreads measured).",
			more, plural(more, "repeat", "repeats"))
	default:
		s += fmt.Sprintf("; even %d more repeats on each would not part them at the spreads measured: they cost "+
			"the same per 1,000 tps to within what repeats can tell, so let something else decide.",
			MaxMoreRepeats)
	}
	c.Recommendation = s
}

// MoreRepeats is the fewest repeats more on each of a (the cheaper) and b
// after which, at the means and standard deviations measured, a's cost
// band would end below b's; false when one was measured once, or when no
// number up to MaxMoreRepeats would do.
func MoreRepeats(a, b Host) (int, bool) {
	na, nb := len(a.Repeats), len(b.Repeats)
	if na < 2 || nb < 2 {
		return 0, false
	}
	sa, sb := stats.StdDev(a.Repeats), stats.StdDev(b.Repeats)
	for m := 0; m <= MaxMoreRepeats; m++ {
		lowA := a.TPS - halfWidth(na+m, sa)
		highB := b.TPS + halfWidth(nb+m, sb)
		if lowA > 0 && perKTPS(b.TotalCost, highB) > perKTPS(a.TotalCost, lowA) {
			return m, true
		}
	}
	return 0, false
}

// costWords is a host's cost per 1,000 tps with its band.
func costWords(h Host) string {
	switch {
	case !h.Banded:
		return fmt.Sprintf("%s per 1,000 tps, measured once", model.Thousands(h.CostPerKTPS))
	case h.Unbounded:
		return fmt.Sprintf("%s per 1,000 tps, band %s to no upper bound (its tps band reaches 0)",
			model.Thousands(h.CostPerKTPS), model.Thousands(h.CostLow))
	}
	return fmt.Sprintf("%s per 1,000 tps, band %s to %s",
		model.Thousands(h.CostPerKTPS), model.Thousands(h.CostLow), model.Thousands(h.CostHigh))
}

// tpsWords is a host's measured tps with its band and cell.
func tpsWords(h Host) string {
	return fmt.Sprintf("%s tps measured (band %s to %s, %d repeats of %s)",
		model.Thousands(h.TPS), model.Thousands(h.TPSLow), model.Thousands(h.TPSHigh),
		len(h.Repeats), h.Cell)
}
