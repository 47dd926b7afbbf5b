package report

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// browserScenarios are the fixtures the browser renders: every section
// between them.
var browserScenarios = []scenario{scenarios[0], workloadScenarios[0]}

// writeReport renders a fixture into dir/report.html.
func writeReport(t *testing.T, dir string, sc scenario) (path string, html string) {
	t.Helper()
	html = renderHTML(t, sc.runs(t))
	path = filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, html
}

// The HTML passes the tidy validator without a warning.
func TestHTMLTidy(t *testing.T) {
	tidy, err := exec.LookPath("tidy")
	if err != nil {
		t.Skip("tidy is not installed (Debian package tidy): cannot validate the HTML")
	}
	for _, sc := range allScenarios {
		path := filepath.Join(t.TempDir(), sc.name+".html")
		if err := os.WriteFile(path, []byte(renderHTML(t, sc.runs(t))), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(tidy, "-q", "-e", path).CombinedOutput()
		if err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("%s: tidy: %v\n%s", sc.name, err, out)
		}
	}
}

func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (Debian package chromium): cannot check the report in a browser")
	return ""
}

// runChromium runs headless Chromium with a private profile and no
// network services; it returns stdout and stderr.
func runChromium(t *testing.T, bin string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.String(), stderr.String()
}

// probeScript measures every SVG after layout; it goes into a test copy
// only: the report itself has no script.
const probeScript = `<script>
(function () {
  var out = [];
  document.querySelectorAll('svg').forEach(function (s) {
    var r = s.getBoundingClientRect();
    var marks = s.querySelectorAll('polyline,circle,rect,line').length;
    var drawn = 0;
    s.querySelectorAll('polyline,circle,rect').forEach(function (e) {
      var b = e.getBBox();
      if (b.width > 0 || b.height > 0) drawn++;
    });
    out.push(s.id + ' ' + Math.round(r.width) + ' ' + Math.round(r.height) + ' ' + marks + ' ' + drawn);
  });
  var p = document.createElement('pre');
  p.id = 'svgprobe';
  p.textContent = out.join('\n');
  document.body.appendChild(p);
})();
</script>`

// In a real browser, the report loads without errors and every chart has
// drawn: each SVG has a size on the page and marks with a size.
func TestBrowserRendersCharts(t *testing.T) {
	bin := chromium(t)
	for _, sc := range browserScenarios {
		t.Run(sc.name, func(t *testing.T) {
			dir := t.TempDir()
			_, html := writeReport(t, dir, sc)
			probe := filepath.Join(dir, "probe.html")
			if err := os.WriteFile(probe, []byte(strings.Replace(html, "</body>", probeScript+"\n</body>", 1)),
				0o644); err != nil {
				t.Fatal(err)
			}
			dom, logs := runChromium(t, bin, "--window-size=1400,2000", "--dump-dom", "file://"+probe)
			for _, bad := range []string{"Uncaught", "Failed to load resource", "ERR_", "Refused to"} {
				if strings.Contains(logs, bad) {
					t.Errorf("chromium reported %q while loading the report:\n%s", bad, logs)
				}
			}
			m := regexp.MustCompile(`(?s)<pre id="svgprobe">(.*?)</pre>`).FindStringSubmatch(dom)
			if m == nil {
				t.Fatalf("the probe script did not run; DOM:\n%.2000s", dom)
			}
			want := strings.Count(html, "<svg ")
			lines := strings.Split(strings.TrimSpace(m[1]), "\n")
			if len(lines) != want || want < 6 {
				t.Fatalf("browser saw %d SVGs, the report has %d (want at least 6):\n%s", len(lines), want, m[1])
			}
			for _, l := range lines {
				f := strings.Fields(l)
				if len(f) != 5 {
					t.Fatalf("probe line %q", l)
				}
				w, _ := strconv.Atoi(f[1])
				h, _ := strconv.Atoi(f[2])
				marks, _ := strconv.Atoi(f[3])
				drawn, _ := strconv.Atoi(f[4])
				if w < 200 || h < 100 || marks < 4 || drawn < 4 {
					t.Errorf("chart %s: %d×%d px with %d marks, %d of them drawn: want a visible chart", f[0], w, h, marks, drawn)
				}
			}
		})
	}
}

// A screenshot of the report (no script at all) is not blank: the page
// has text, boxes and charts in many colours.
func TestBrowserScreenshot(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	path, _ := writeReport(t, dir, scenarios[0])
	shot := filepath.Join(dir, "shot.png")
	runChromium(t, bin, "--window-size=1400,2000", "--hide-scrollbars", "--screenshot="+shot, "file://"+path)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	colours, ink := pngStats(img)
	if colours < 50 || ink < 0.05 {
		t.Errorf("screenshot looks blank: %d colours, %.1f%% of pixels differ from the background", colours, 100*ink)
	}
}

// pngStats counts distinct colours and the fraction of pixels unlike the
// most common one.
func pngStats(img image.Image) (int, float64) {
	count := map[uint64]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			count[uint64(r)<<48|uint64(g)<<32|uint64(bl)<<16|uint64(a)]++
		}
	}
	top, total := 0, b.Dx()*b.Dy()
	for _, n := range count {
		top = max(top, n)
	}
	return len(count), float64(total-top) / float64(max(total, 1))
}
