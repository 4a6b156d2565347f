package capture

import (
	"fmt"
	"strings"
	"testing"
)

// Some behaviour tests need a real program to be in a given state when a
// timed event or a time checkpoint comes (the shell has turned echo off
// when the password is typed; the link was changed before the later
// checkpoint). A timed scenario cannot wait for that state (reactive
// scenarios can, and are tested in reactive_test.go), and a loaded CI
// machine (2 cores, load average 17) stretches the shell's start-up and
// its forks past any fixed margin. So such a test states its timing
// precondition from the record itself, where the capture's causal order
// (order.go: an event is journaled before the output it caused, output
// before what was recorded after it was read) proves it, and runs again
// with every time scaled up when the precondition did not hold: the
// assertions are made only on a run where the program was where the test
// needs it, and a run that proves nothing is never counted as a pass.

// timingScales are the factors a timing-sensitive test multiplies its
// times by, one run each, until its precondition holds.
var timingScales = []int{1, 2, 4, 8}

// withTimingPrecondition runs attempt with each of timingScales, each in
// a subtest of its own (a capture's supervisor lives until the end of its
// test), until it reports its precondition met (unmet == ""), and returns
// that run's record; attempt makes its timing-independent assertions
// itself on every run. The test fails when no scale met the precondition.
func withTimingPrecondition(t *testing.T, attempt func(t *testing.T, scale int) (rec *Record, unmet string)) *Record {
	t.Helper()
	var why []string
	for _, scale := range timingScales {
		var rec *Record
		unmet := "the run failed"
		t.Run(fmt.Sprintf("times_x%d", scale), func(t *testing.T) { rec, unmet = attempt(t, scale) })
		if t.Failed() {
			t.FailNow()
		}
		if unmet == "" {
			return rec
		}
		why = append(why, unmet)
		t.Logf("times ×%d: timing precondition not met (%s); running again with longer times", scale, unmet)
	}
	t.Fatalf("the timing precondition was not met at any of the scales %v: %s", timingScales, strings.Join(why, "; "))
	return nil
}

// frameBefore reports whether the first raw frame holding text is
// journaled before interaction event i: the output was read before the
// event was performed, so the program had written it by then.
func frameBefore(rec *Record, text string, i int) bool {
	ev := journalPos(rec, "interaction_events", i)
	for k, f := range rec.Frames {
		if strings.Contains(f.Data, text) {
			p := journalPos(rec, "frames", k)
			return p >= 0 && ev >= 0 && p < ev
		}
	}
	return false
}
