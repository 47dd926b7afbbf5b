package report

import (
	"encoding/json"
	"fmt"
	htmlpkg "html"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
)

// fitScenario is the 2-vCPU guest's runs with the measured fit eval stored
// on it (a real model-fit run: its cells, the speed sentinel's series with
// both references, no held-out check): the scenario of the fit and
// sentinel charts.
var fitScenario = scenario{"kvm-2vcpu-fit", func(t *testing.T) []*result.Run {
	runs := vmRuns(t)
	b, err := os.ReadFile(filepath.Join("testdata", "kvm-2vcpu-model-fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fit []*result.Run
	if err := json.Unmarshal(b, &fit); err != nil {
		t.Fatal(err)
	}
	return stored(t, append(runs, fit...))
}}

// The fit scenario joins every output test (golden files, tidy, anchors,
// self-contained) and the browser's chart test, without touching the
// lists the workload tests own.
func init() { allScenarios = append(allScenarios, fitScenario) }

// In a real browser, the fit's and the sentinel's charts draw every point:
// the fit's eight cells and the sentinel's nine samples of the stored fit
// (its 1×1 NUMA matrix is why the scenario is not among browserScenarios).
func TestBrowserFitCharts(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	_, html := writeReport(t, dir, fitScenario)
	probe := filepath.Join(dir, "probe.html")
	if err := os.WriteFile(probe, []byte(strings.Replace(html, "</body>", probeScript+"\n</body>", 1)),
		0o644); err != nil {
		t.Fatal(err)
	}
	dom, _ := runChromium(t, bin, "--window-size=1400,2000", "--dump-dom", "file://"+probe)
	want := map[string]int{AnchorFit + "-svg": 8, AnchorSentinel + "-svg": 9}
	for id, n := range want {
		m := regexp.MustCompile(`(?m)^` + id + ` (\d+) (\d+) (\d+) (\d+)$`).FindStringSubmatch(dom)
		if m == nil {
			t.Errorf("chart %s is not on the page", id)
			continue
		}
		w, _ := strconv.Atoi(m[1])
		drawn, _ := strconv.Atoi(m[4])
		if w < 300 || drawn < n {
			t.Errorf("chart %s: %s px wide with %d marks drawn, want at least %d", id, m[1], drawn, n)
		}
	}
}

// layoutProbe measures the page after layout with every disclosure open:
// the page's width, each table against the box it scrolls in, every
// element outside a scroll box that ends right of the page, and the words
// and charts of the first screen. It goes into a test copy only.
const layoutProbe = `<script>
(function () {
  document.querySelectorAll('details').forEach(function (d) { d.open = true; });
  var W = document.documentElement.clientWidth, H = window.innerHeight;
  var out = ['page ' + W + ' ' + H + ' ' + document.documentElement.scrollWidth];
  var name = function (e) {
    var n = e.tagName.toLowerCase();
    if (e.id) return n + '#' + e.id;
    var p = e.parentElement ? e.parentElement.closest('[id]') : null;
    return n + (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ')[0] : '') + '@' + (p ? p.id : 'body');
  };
  document.querySelectorAll('table').forEach(function (t) {
    var box = t.closest('.scroll') || t.parentElement;
    var id = t.id || (t.closest('[id]') ? t.closest('[id]').id : '?');
    out.push('table ' + id + ' ' + Math.ceil(t.getBoundingClientRect().width) + ' ' + box.clientWidth + ' ' + box.scrollWidth);
  });
  document.querySelectorAll('body *').forEach(function (e) {
    if (e.parentElement.closest('.scroll, svg')) return;
    var r = e.getBoundingClientRect();
    var pe = e.parentElement;
    if (r.width > 0 && r.right > W + 1 && (pe === document.body || pe.getBoundingClientRect().right <= W + 1)) {
      out.push('wide ' + name(e) + ' ' + Math.ceil(r.right));
    }
  });
  var card = 0, cw = document.createTreeWalker(document.getElementById('decision'), NodeFilter.SHOW_TEXT), cn;
  while ((cn = cw.nextNode())) { if (!cn.parentElement.closest('svg')) card += (cn.data.match(/\S+/g) || []).length; }
  out.push('card ' + card);
  var words = 0, walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT), n, rg = document.createRange();
  while ((n = walk.nextNode())) {
    if (n.parentElement.closest('svg, title')) continue;
    var re = /\S+/g, m;
    while ((m = re.exec(n.data))) {
      rg.setStart(n, m.index); rg.setEnd(n, m.index + m[0].length);
      var r = rg.getBoundingClientRect();
      if (r.width > 0 && r.top < H && r.bottom > 0) words++;
      if (r.right > W + 1 && !n.parentElement.closest('.scroll')) out.push('wide ' + name(n.parentElement) + ':' + m[0].slice(0, 40).replace(/\s/g, '') + ' ' + Math.ceil(r.right));
    }
  }
  var charts = 0;
  document.querySelectorAll('svg').forEach(function (s) { var r = s.getBoundingClientRect(); if (r.width > 0 && r.top < H) charts++; });
  out.push('first ' + words + ' ' + charts);
  var p = document.createElement('pre');
  p.id = 'layoutprobe';
  p.textContent = out.join('\n');
  parent.document.body.appendChild(p);
})();
</script>`

// layout is what the probe saw at one window size.
type layout struct {
	width, height, scrollWidth int
	tables                     []tableFit // every table, disclosures open
	wide                       []string   // elements outside a scroll box past the page's right edge
	firstWords, firstCharts    int        // on the first screen
	cardWords                  int        // in the decision card, outside its chart
}

type tableFit struct {
	id                         string
	width, box, boxScrollWidth int
}

func (f tableFit) scrolls() bool { return f.boxScrollWidth > f.box+1 }

// probeLayout renders html in headless Chromium at w×h and returns what
// the layout probe saw.
func probeLayout(t *testing.T, bin, html string, w, h int) layout {
	t.Helper()
	dir := t.TempDir()
	// Chromium's window is at least 500 px wide, so the report is laid
	// out in a frame of w×h (srcdoc: same origin, so the probe inside it
	// writes its findings into this page).
	probed := strings.Replace(html, "</body>", layoutProbe+"\n</body>", 1)
	page := fmt.Sprintf(`<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0"><iframe width="%d" height="%d" style="border:0;display:block" srcdoc="%s"></iframe></body></html>`,
		w, h, htmlpkg.EscapeString(probed))
	probe := filepath.Join(dir, "probe.html")
	if err := os.WriteFile(probe, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, _ := runChromium(t, bin, fmt.Sprintf("--window-size=%d,%d", max(w, 500)+40, h+40), "--hide-scrollbars",
		"--dump-dom", "file://"+probe)
	m := regexp.MustCompile(`(?s)<pre id="layoutprobe">(.*?)</pre>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the layout probe did not run; DOM:\n%.2000s", dom)
	}
	var l layout
	atoi := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("layout probe: %q is not a number", s)
		}
		return n
	}
	for _, line := range strings.Split(strings.TrimSpace(m[1]), "\n") {
		f := strings.Fields(line)
		switch {
		case f[0] == "page" && len(f) == 4:
			l.width, l.height, l.scrollWidth = atoi(f[1]), atoi(f[2]), atoi(f[3])
		case f[0] == "table" && len(f) == 5:
			l.tables = append(l.tables, tableFit{id: f[1], width: atoi(f[2]), box: atoi(f[3]), boxScrollWidth: atoi(f[4])})
		case f[0] == "wide" && len(f) == 3:
			l.wide = append(l.wide, f[1]+" ends at "+f[2]+" px")
		case f[0] == "card" && len(f) == 2:
			l.cardWords = atoi(f[1])
		case f[0] == "first" && len(f) == 3:
			l.firstWords, l.firstCharts = atoi(f[1]), atoi(f[2])
		default:
			t.Fatalf("layout probe line %q", line)
		}
	}
	if l.width < w/2 || len(l.tables) == 0 {
		t.Fatalf("layout probe saw a %d px page with %d tables", l.width, len(l.tables))
	}
	return l
}

// knownWide are the tables of the workload sections (being moved out of
// this package into the workloads, issue #37's prerequisite) that still
// scroll sideways at 1,400 px after the CSS; each with the reason. They
// are restructured after the move; empty when none is left.
var knownWide = map[string]string{}

// maxCardWords is "no more than about 60 words" (issue #37), the "about"
// being the inputs' names, which decide gives, and the workload and engine
// the answer is for (issue #47: "For tpcc-ro on postgres: ").
const maxCardWords = 74

// Nothing hides (issue #37): at 1,400 px every table fits its box without
// a sideways scroll and the first screen shows a chart; at a 390 px phone
// width nothing is wider than the page (wide tables scroll inside their
// box). With a decision, the decision card's chart is on the first screen. Every scenario, every disclosure open.
func TestBrowserLayout(t *testing.T) {
	bin := chromium(t)
	for _, sc := range allScenarios {
		t.Run(sc.name, func(t *testing.T) {
			html := renderHTML(t, sc.runs(t))
			desk := probeLayout(t, bin, html, 1400, 900)
			var scrolls []string
			for _, f := range desk.tables {
				if f.scrolls() {
					scrolls = append(scrolls, fmt.Sprintf("%s %d px in a %d px box", f.id, f.boxScrollWidth, f.box))
					if why, ok := knownWide[f.id]; ok {
						t.Logf("1,400 px: table %s is %d px in a %d px box: known, %s", f.id, f.boxScrollWidth, f.box, why)
						continue
					}
					t.Errorf("1,400 px: table %s is %d px wide in a %d px box: it scrolls sideways", f.id, f.boxScrollWidth, f.box)
				}
			}
			t.Logf("1,400×900: %d tables, %d scroll sideways %q; first screen: %d words, %d charts; card %d words",
				len(desk.tables), len(scrolls), scrolls, desk.firstWords, desk.firstCharts, desk.cardWords)
			if desk.scrollWidth > desk.width {
				t.Errorf("1,400 px: the page is %d px wide in a %d px window: %q", desk.scrollWidth, desk.width, desk.wide)
			}
			if desk.cardWords > maxCardWords {
				t.Errorf("the decision card has %d words of text, want at most %d", desk.cardWords, maxCardWords)
			}
			if desk.firstCharts == 0 && Purchase(build(t, sc.runs(t))) != nil {
				t.Errorf("1,400×900: no chart on the first screen (%d words)", desk.firstWords)
			}
			phone := probeLayout(t, bin, html, 390, 844)
			t.Logf("390×844: page %d px, %d elements past its edge; first screen: %d words, %d charts",
				phone.scrollWidth, len(phone.wide), phone.firstWords, phone.firstCharts)
			if phone.scrollWidth > phone.width || len(phone.wide) > 0 {
				t.Errorf("390 px: the page is %d px wide in a %d px window; past its edge: %q",
					phone.scrollWidth, phone.width, phone.wide)
			}
		})
	}
}
