package capture

import (
	"context"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/proctree"
)

// waitRendererPids waits until exactly n renderer helpers of this process
// are alive and returns them (nil after 30 s).
func waitRendererPids(n int) []int {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if pids := rendererPids(); len(pids) == n {
			return append([]int{}, pids...) // not nil when n is 0
		}
	}
	return nil
}

// captureWith is capture with the process's one supervisor, sup.
func captureWith(t *testing.T, sup *proctree.Supervisor, sc *Scenario, opts Options) *Record {
	t.Helper()
	rec, err := Capture(context.Background(), sup, sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	checkRecord(t, rec, opts)
	return rec
}

// TestRenderersStartAhead: captures with Renderers record the same
// screens as captures that start their own helper; each capture gets a
// helper no capture used before, the next one is already running when a
// capture ends, and Close ends it.
func TestRenderersStartAhead(t *testing.T) {
	h, r, ahead := renderersAhead(t)
	defer r.Close()
	script := `printf '\033[1;32mgreen\033[0m\r\nsecond line\r\n'; printf 'x%.0s' $(seq 1 150)`
	edit := func(m obj) { m["terminal"] = obj{"columns": 50, "rows": 7, "scrollback": 3} }
	sc, opts := shScenario(t, script, edit)
	want := captureWith(t, h.Supervisor, sc, opts)
	used := map[int]bool{}
	for i := 0; i < 2; i++ {
		sc, opts := shScenario(t, script, edit)
		opts.Renderers = r
		rec := captureWith(t, h.Supervisor, sc, opts)
		if output(rec) != output(want) {
			t.Fatalf("capture %d: output %q, want %q", i, output(rec), output(want))
		}
		if got, w := rec.RenderedFrames[len(rec.RenderedFrames)-1], want.RenderedFrames[len(want.RenderedFrames)-1]; got.Columns != 50 || got.Rows != 7 ||
			!slices.Equal(got.Lines, w.Lines) || got.SerializedState != w.SerializedState || got.CursorX != w.CursorX || got.CursorY != w.CursorY {
			t.Fatalf("capture %d: last screen %+v, want %+v", i, got, w)
		}
		if used[ahead[0]] {
			t.Fatalf("capture %d: helper %d was used twice", i, ahead[0])
		}
		used[ahead[0]] = true
		next := waitRendererPids(1)
		if next == nil || next[0] == ahead[0] {
			t.Fatalf("capture %d: no new helper was started ahead (%v, before %v)", i, next, ahead)
		}
		ahead = next
	}
	r.Close()
	if pids := waitRendererPids(0); pids == nil {
		t.Fatalf("Close left helpers %v", rendererPids())
	}
	sc, opts = shScenario(t, script, edit)
	opts.Renderers = r
	if rec, err := Capture(context.Background(), h.Supervisor, sc, opts); err == nil || rec != nil || !strings.Contains(err.Error(), "renderers were closed") {
		t.Fatalf("a capture with closed renderers: record %v, err %v", rec != nil, err)
	}
}

// TestRenderersReplaceADeadHelper: a helper started ahead that was killed
// while it waited is replaced before launch, so the capture renders; and
// when no helper can start (Node is /bin/false) the capture fails with the
// renderer's error, as without Renderers (the replacement's hello is owed
// after the launch, so the record comes with it).
func TestRenderersReplaceADeadHelper(t *testing.T) {
	if len(rendererPids()) != 0 {
		t.Skip("another renderer helper of this process is alive")
	}
	h := testHelper(t)
	r := NewRenderers(h)
	defer r.Close()
	// once its start is over (hello said), kill the helper waiting ahead
	r.mu.Lock()
	got := <-r.next
	r.next <- got
	r.mu.Unlock()
	if got.err != nil {
		t.Fatal(got.err)
	}
	syscall.Kill(got.s.tree.Pid(), syscall.SIGKILL) //nolint:errcheck // checked by the capture below
	<-got.s.tree.Exited()
	sc, opts := shScenario(t, `echo rendered`, nil)
	opts.Renderers = r
	rec := captureWith(t, h.Supervisor, sc, opts)
	if last := rec.RenderedFrames[len(rec.RenderedFrames)-1]; strings.TrimRight(last.Lines[0], " ") != "rendered" {
		t.Fatalf("screen %q", last.Lines)
	}

	h.Node = "/bin/false"
	broken := NewRenderers(h)
	defer broken.Close()
	sc, opts = shScenario(t, `echo hi`, nil)
	opts.Renderers = broken
	if rec, err := Capture(context.Background(), h.Supervisor, sc, opts); err == nil || rec == nil || !strings.Contains(err.Error(), "terminal renderer (xterm.js helper) failed") {
		t.Fatalf("record %v, err %v", rec != nil, err)
	}
}

// renderersAhead starts Renderers on the test helper and waits for the
// one helper it starts ahead (its pids); a test that finds another
// renderer helper of this process alive is skipped.
func renderersAhead(t *testing.T) (RendererHelper, *Renderers, []int) {
	t.Helper()
	if len(rendererPids()) != 0 {
		t.Skip("another renderer helper of this process is alive")
	}
	h := testHelper(t)
	r := NewRenderers(h)
	ahead := waitRendererPids(1)
	if ahead == nil {
		r.Close()
		t.Fatal("no helper was started ahead")
	}
	return h, r, ahead
}
