package eval

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/evalplan"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
)

// TestRunStepsBudget: under a deadline, a step that at the pace so far
// would not fit beside what the essential steps after it are planned to
// take is left out saying so; an essential one runs anyway, cut at its
// share of what is left when another essential step follows, at the
// deadline when none does; the steps after the deadline are left out;
// none of these is a failure.
func TestRunStepsBudget(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	var ran []string
	sleep := func(name string, d time.Duration) func(context.Context, Stored) error {
		return func(ctx context.Context, _ Stored) error {
			ran = append(ran, name)
			select {
			case <-time.After(d):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	planned := func(d time.Duration) func() time.Duration { return func() time.Duration { return d } }
	steps := []*step{
		{title: "first", run: sleep("first", 0)},
		// Planned at 100 ms, takes 200 ms: the pace is 2.
		{title: "slow", run: sleep("slow", 200*time.Millisecond), est: planned(100 * time.Millisecond)},
		// Left out at once (no server here): it says nothing of the pace.
		{title: "no server", run: func(context.Context, Stored) error { return noRoom(0, time.Hour) }, est: planned(0)},
		// 250 ms planned, 500 at the pace; about 400 left, 400 of it
		// kept for the two essential steps (2 × 100 ms at the pace).
		{title: "too long", run: sleep("too long", 0), est: planned(250 * time.Millisecond)},
		// Half of the 400 left: its plan beside the next one's.
		{title: "essential", run: sleep("essential", time.Hour), est: planned(100 * time.Millisecond), essential: true},
		{title: "last essential", run: sleep("last essential", time.Hour),
			est: planned(100 * time.Millisecond), essential: true},
		{title: "after", run: sleep("after", 0), est: planned(0)},
	}
	var stdout, stderr strings.Builder
	if err := runSteps(ctx, &stdout, &stderr, time.Now(), steps, func() {}); err != nil {
		t.Fatalf("runSteps = %v\n%s", err, stderr.String())
	}
	if strings.Join(ran, ",") != "first,slow,essential,last essential" {
		t.Errorf("ran %v, want first, slow and the essential steps", ran)
	}
	// The pace is what the steps took on the spot (2 on an idle machine,
	// more on a busy one): what "too long" kept follows from it.
	m := regexp.MustCompile(`at this machine's pace \(the steps so far took ([0-9.]+)× their plan\)`).FindStringSubmatch(
		fmt.Sprint(steps[3].err))
	if m == nil {
		t.Fatalf("step %q: %v, want skipped at this machine's pace", steps[3].title, steps[3].err)
	}
	pace, _ := strconv.ParseFloat(m[1], 64)
	if pace < 1.95 {
		t.Errorf("pace %v, want at least 2 (200 ms taken against 100 ms planned)", pace)
	}
	kept := func(f float64) string {
		return fmt.Sprintf("beside the %v kept", evalplan.Round(time.Duration(f*float64(200*time.Millisecond))))
	}
	if e := fmt.Sprint(steps[3].err); !strings.Contains(e, kept(pace-0.05)) && !strings.Contains(e, kept(pace+0.05)) {
		t.Errorf("step %q: %v, want %q (2 × 100 ms planned at the pace %v)", steps[3].title, e, kept(pace), pace)
	}
	share := regexp.MustCompile(`its share of the budget ended \([0-9.]+m?s, ` +
		`keeping 100ms for the steps after it that the model rests on\) during this step, which was cut there`)
	if !skipped(steps[4].err) || !share.MatchString(steps[4].err.Error()) {
		t.Errorf("step %q: %v, want cut at its share (%s)", steps[4].title, steps[4].err, share)
	}
	for _, c := range []struct {
		step int
		want string
	}{
		{3, "for the steps after it that the model rests on"},
		{5, "the budget's end came during this step, which was cut there (what it measured is stored)"},
		{6, "the budget's end came before this step"},
	} {
		if s := steps[c.step]; !skipped(s.err) || !strings.Contains(s.err.Error(), c.want) {
			t.Errorf("step %q: %v, want skipped with %q", s.title, s.err, c.want)
		}
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// TestWriteRunsCut: a step a deadline cut is listed with the run it
// stored (in the report), not as skipped, saying which deadline.
func TestWriteRunsCut(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: %w during this step", evalplan.ErrNoRoom, errBudgetEnd), "cut at the budget's end"},
		{fmt.Errorf("%w: %w (20s, keeping 1m0s …) during this step", evalplan.ErrNoRoom, errShareEnd),
			"cut at its share of the budget"},
	} {
		s := &step{title: "tpcc-ro on SQLite", id: 4, err: c.err}
		var b strings.Builder
		report.WriteStepRuns(&b, stepRuns([]*step{s},
			map[int64]*result.Run{4: {ID: 4, Status: result.StatusInterrupted, Headline: "900 tps"}}), &report.Report{})
		if want := "  tpcc-ro on SQLite: run 4 (interrupted): 900 tps; " + c.want + "\n"; b.String() != want {
			t.Errorf("got %q, want %q", b.String(), want)
		}
	}
}
