package app

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// rendererHelpers are the live renderer helpers this test process
// started (their environment's GATEHOUSE_RENDERER marker names its pid).
func rendererHelpers() []int {
	return liveProcessesWhose("environ", "GATEHOUSE_RENDERER="+strconv.Itoa(os.Getpid())+".")
}

// waitHelpers waits until the live helpers satisfy ok, and returns them.
func waitHelpers(t *testing.T, what string, ok func([]int) bool) []int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := rendererHelpers()
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: renderer helpers %v", what, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The app's captures take the renderer helper started ahead of them (the
// helper alive before a capture is the one it used and ended, and another
// is started ahead for the next), and closing the facade leaves no helper.
func TestFacadeCapturesUseRenderersStartedAheadAndCloseThem(t *testing.T) {
	if len(rendererHelpers()) != 0 {
		t.Skip("another test's renderer helpers are alive")
	}
	ts := startServer(t)
	work := t.TempDir()
	allowCaptures(t, ts, work)
	events, stop := ts.facade.events.subscribe(256)
	defer stop()
	capture := func() {
		t.Helper()
		res, status, e := apiCall[StartCaptureResult](t, ts, "StartCapture", StartCaptureArgs{Scenario: uiScenario(work, "echo ahead", 10000)})
		if status != 200 {
			t.Fatalf("start: %d %+v", status, e)
		}
		if got := waitCapture(t, events, res.CaptureID); got[len(got)-1].State != "done" {
			t.Fatalf("outcome %+v", got[len(got)-1])
		}
	}
	capture() // the renderers are made by now: when the facade opened (racing allowCaptures) or by this capture
	ahead := waitHelpers(t, "after the first capture", func(p []int) bool { return len(p) == 1 })
	capture()
	waitHelpers(t, "after the second capture", func(p []int) bool { return len(p) == 1 && !slices.Contains(p, ahead[0]) })
	ts.facade.close()
	waitHelpers(t, "after close", func(p []int) bool { return len(p) == 0 })
}

// A facade opened with captures enabled starts a helper before any
// capture asks for one.
func TestFacadeStartsARendererAheadWhenCapturesAreEnabled(t *testing.T) {
	if len(rendererHelpers()) != 0 {
		t.Skip("another test's renderer helpers are alive")
	}
	setCaptureEnv(t, t.TempDir())
	ts := startServer(t)
	waitHelpers(t, "after the facade opened", func(p []int) bool { return len(p) == 1 })
	ts.facade.close()
	waitHelpers(t, "after close", func(p []int) bool { return len(p) == 0 })
}
