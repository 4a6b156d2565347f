package capture

import (
	"bytes"
	"fmt"
	"os"
	"testing"
)

// TestLiveRenderersFindsTheHelperStartedAhead: the idle helper Renderers
// keeps started ahead is found in /proc by LiveRenderers, as the pinned
// Node it runs on, owned by this process and with its resident set; once
// Close ended it, it is not listed.
func TestLiveRenderersFindsTheHelperStartedAhead(t *testing.T) {
	h, r, ahead := renderersAhead(t)
	defer r.Close()
	mine := func() []RendererProcess {
		var out []RendererProcess
		for _, p := range LiveRenderers() {
			if p.OwnerPID == os.Getpid() {
				out = append(out, p)
			}
		}
		return out
	}
	got := mine()
	if len(got) != 1 || got[0].PID != ahead[0] || !got[0].OwnerAlive || got[0].RSSKiB <= 0 {
		t.Fatalf("LiveRenderers: %+v, want pid %d owned by %d and alive", got, ahead[0], os.Getpid())
	}
	cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", got[0].PID))
	if argv0, _, _ := bytes.Cut(cmd, []byte{0}); err != nil || string(argv0) != h.Node {
		t.Errorf("helper %d runs %q (%v), want the pinned Node %s", got[0].PID, argv0, err, h.Node)
	}
	r.Close()
	if waitRendererPids(0) == nil {
		t.Fatal("the helper started ahead outlived Close")
	}
	if got := mine(); len(got) != 0 {
		t.Errorf("after Close: %+v", got)
	}
}
