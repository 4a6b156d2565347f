package capture

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// conformance compares the capture's renderer with an independent
// @xterm/headless run (render.mjs: a fresh Terminal per stream, one write)
// on the same streams: every rendered frame (rows, cursor, active buffer)
// must equal that run's screen, and every frame's serialized_state,
// written to a fresh xterm.js terminal of the frame's size, must restore
// that screen (rows, cell colours and attributes, cursor, its visibility,
// the active buffer). Streams on which xterm.js itself throws must make
// the renderer fail too. It returns the number of streams, of matching
// frames, of restoring states and of streams xterm.js threw on.
func conformance(t *testing.T, names []string, runs []helperRun, known map[string]string) (n, matched, restored, threw int) {
	t.Helper()
	n, matched, restored, threw, _ = conformanceStats(t, names, runs, known)
	return n, matched, restored, threw
}

// conformanceStats is conformance that also says what the helper's
// fast-forward did on the streams.
func conformanceStats(t *testing.T, names []string, runs []helperRun, known map[string]string) (n, matched, restored, threw int, ff fastStats) {
	t.Helper()
	node := requireNode(t)
	sum, snaps := testSnapshots(t) // the helper as the app starts it
	h := RendererHelper{Node: node, Supervisor: newSupervisor(t), NodeSHA256: sum, Snapshots: snaps}
	frames, errs, ff := helperFrames(t, h, runs)
	var items []xtermItem
	for i, r := range runs {
		var data []byte
		for _, p := range r.Parts {
			data = append(data, p...)
		}
		orig := newXtermItem("original:"+names[i], r.Columns, r.Rows, data)
		for _, p := range r.Parts { // the same writes: see render.mjs
			orig.PartsBase64 = append(orig.PartsBase64, base64.StdEncoding.EncodeToString(p))
		}
		if r.Resize != nil {
			orig.Resize = r.Resize
			orig.ThenBase64 = base64.StdEncoding.EncodeToString(r.Then)
		}
		orig.Scrollback = r.Scrollback
		items = append(items, orig)
		if errs[i] == nil {
			items = append(items, newXtermItem("restored:"+names[i], frames[i].Columns, frames[i].Rows, []byte(frames[i].SerializedState)))
		}
	}
	xterm := xtermRender(t, node, items)
	for i, name := range names {
		want := xterm["original:"+name]
		if want.Error != "" {
			threw++
			if errs[i] == nil || !strings.Contains(errs[i].Error(), "xterm.js failed") {
				t.Errorf("%s: xterm.js threw %q, the renderer answered %v", name, want.Error, errs[i])
			}
			continue
		}
		if errs[i] != nil {
			t.Errorf("%s: the renderer failed: %v", name, errs[i])
			continue
		}
		if d := want.diff(frameView(frames[i])); len(d) > 0 {
			t.Errorf("%s (%dx%d, %q): the rendered frame differs from xterm.js:\n  %s", name, runs[i].Columns, runs[i].Rows, runData(runs[i]), strings.Join(d, "\n  "))
		} else {
			matched++
		}
		d := want.diff(xterm["restored:"+name])
		switch reason, isKnown := known[name]; {
		case isKnown && len(d) == 0:
			t.Errorf("%s is listed as a known difference (%s) but now restores: remove it", name, reason)
		case isKnown:
			t.Logf("%s: known difference: %s", name, reason)
		case len(d) > 0:
			t.Errorf("%s (%dx%d, %q): serialized_state %q does not restore the screen:\n  %s", name, runs[i].Columns, runs[i].Rows, runData(runs[i]), frames[i].SerializedState, strings.Join(d, "\n  "))
		}
		if len(d) == 0 {
			restored++
		}
	}
	return len(names), matched, restored, threw, ff
}

// TestRenderConformance runs the corpus (real programs' output and
// hand-written cases, testdata/render-corpus) through conformance, each
// stream split into small writes as a PTY delivers it.
func TestRenderConformance(t *testing.T) {
	var names []string
	var runs []helperRun
	for i, c := range loadCorpus(t) {
		r := helperRun{Columns: c.Columns, Rows: c.Rows, Parts: splitParts(c.bytes(t), i)}
		if c.Resize != nil {
			r.Resize, r.Then = &xtermSize{Columns: c.Resize.Columns, Rows: c.Resize.Rows}, []byte(c.Then)
		}
		names, runs = append(names, c.Name), append(runs, r)
	}
	n, matched, restored, threw := conformance(t, names, runs, nil)
	t.Logf("corpus vs @xterm/headless: %d/%d rendered frames match, serialized_state restores %d/%d; xterm.js threw on %d",
		matched, n-threw, restored, n-threw, threw)
}

// runData is a run's bytes, for messages: the stream, then the resize and
// what follows it.
func runData(r helperRun) string {
	var b []byte
	for _, p := range r.Parts {
		b = append(b, p...)
	}
	if r.Resize != nil {
		b = fmt.Appendf(b, " <resize %dx%d> %s", r.Resize.Columns, r.Resize.Rows, r.Then)
	}
	if len(b) > 300 {
		b = append(b[:300], "…"...)
	}
	return string(b)
}
