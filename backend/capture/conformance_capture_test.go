package capture

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// TestCapturedFramesMatchXterm captures a command that writes megabytes of
// plain lines (which the renderer's fast-forward skips when a chunk holds
// enough of them), coloured text, a progress line redrawn with CR and a
// screenful that stays, and checks every rendered frame of the record
// against an independent @xterm/headless run over the record's raw frames
// (render.mjs, written in the same pieces the capture sends): rows, cursor
// and active buffer after each raw frame, and each frame's
// serialized_state restoring that screen.
func TestCapturedFramesMatchXterm(t *testing.T) {
	node := requireNode(t)
	script := `stty -onlcr; yes 'plain line of text that scrolls away, and then some more words' | head -c 3000000; ` +
		`printf '\033[1;31mred\033[0m bold\r\n'; for p in one two three four five; do printf '\r[%s] progress' $p; done; printf '\r\n'; ` +
		`yes 'short' | head -c 400000; printf 'the end\r\n\033[7mreverse\033[0m'`
	sc, opts := shScenario(t, script, func(m obj) {
		m["limits"] = obj{"output_bytes": 10_000_000, "frames": 100000}
	})
	rec := capture(t, sc, opts)
	long := checkFramesMatchXterm(t, node, sc, rec)
	t.Logf("%d rendered frames match xterm.js and restore; %d raw frames held enough lines for the fast-forward", len(rec.RenderedFrames), long)
}

// checkFramesMatchXterm checks every rendered frame of rec, a capture of
// sc, against an independent @xterm/headless run over its raw frames and
// dispatched resizes in capture order (the event journal's), as the viewer
// replays them (TestCapturedFramesMatchXterm), and returns how many raw
// frames held enough lines for the fast-forward to cut. The rendered
// frames must be the views after the first steps of that run (all of
// them unless the capture was truncated).
func checkFramesMatchXterm(t *testing.T, node string, sc *Scenario, rec *Record) int {
	t.Helper()
	item := xtermItem{ID: "capture", Columns: sc.Terminal.Columns, Rows: sc.Terminal.Rows}
	sb := sc.Terminal.Scrollback
	item.Scrollback = &sb
	long, steps := 0, 0 // raw frames with enough lines for the fast-forward to cut; renderer inputs
	for _, e := range rec.EventJournal {
		switch e.Collection {
		case "frames":
			f := rec.Frames[e.Index]
			if strings.Count(f.Data, "\n") >= sb+2*sc.Terminal.Rows {
				long++
			}
			for d := f.Data; len(d) > 0; { // the renderer's messages
				n := min(len(d), writeMessage)
				item.PartsBase64 = append(item.PartsBase64, base64.StdEncoding.EncodeToString([]byte(d[:n])))
				d = d[n:]
			}
		case "interaction_events":
			ev := rec.InteractionEvents[e.Index]
			var c, r int
			if _, err := fmt.Sscanf(ev.Data, "%dx%d", &c, &r); ev.Type != EventResize || ev.Outcome != OutcomeDispatched || err != nil {
				continue
			}
			item.ResizesBefore = append(item.ResizesBefore, xtermResize{Part: len(item.PartsBase64), Columns: max(c, minColumns), Rows: r})
			item.PartsBase64 = append(item.PartsBase64, "")
		default:
			continue
		}
		item.ViewsAfter = append(item.ViewsAfter, len(item.PartsBase64)-1)
		steps++
	}
	if len(rec.Frames) == 0 || len(rec.RenderedFrames) > steps || (!rec.Truncated && len(rec.RenderedFrames) != steps) {
		t.Fatalf("%d raw frames and resizes, %d rendered, truncated %v", steps, len(rec.RenderedFrames), rec.Truncated)
	}
	items := []xtermItem{item}
	for i, f := range rec.RenderedFrames {
		items = append(items, newXtermItem(fmt.Sprint("restored:", i), f.Columns, f.Rows, []byte(f.SerializedState)))
	}
	views, restored := xtermViews(t, node, items)
	if len(views) != steps {
		t.Fatalf("xterm.js answered %d views for %d raw frames and resizes", len(views), steps)
	}
	for i, f := range rec.RenderedFrames {
		if d := views[i].diff(frameView(f)); len(d) > 0 {
			t.Errorf("rendered frame %d differs from xterm.js:\n  %s", i, strings.Join(d, "\n  "))
		}
		if d := views[i].diff(restored[fmt.Sprint("restored:", i)]); len(d) > 0 {
			t.Errorf("rendered frame %d: serialized_state does not restore the screen:\n  %s", i, strings.Join(d, "\n  "))
		}
	}
	return long
}

// xtermViews runs render.mjs on items: the first has ViewsAfter set, and
// its views are returned; the others' views are returned by id.
func xtermViews(t *testing.T, node string, items []xtermItem) ([]view, map[string]view) {
	t.Helper()
	got := runRenderMJS(t, node, items)
	if got[0].Error != "" {
		t.Fatalf("xterm.js threw on the capture's output: %s", got[0].Error)
	}
	byID := map[string]view{}
	for _, g := range got[1:] {
		byID[g.ID] = g.view
	}
	return got[0].Views, byID
}
