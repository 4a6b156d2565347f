package capture

import (
	"bytes"
	"encoding/base64"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderConformance renders every corpus stream with the capture's
// screen and with the real @xterm/headless (through Node) at the same
// size and requires the same rows (text padded to the column count), cell
// colours and attributes, cursor, cursor visibility and active buffer.
// It then writes each frame's serialized_state to a fresh xterm.js
// terminal of that size and requires that terminal to show the frame.
// Cases marked known_difference must still differ; all others must match.
func TestRenderConformance(t *testing.T) {
	cases := loadCorpus(t)
	node := requireNode(t)
	goViews := make([]view, len(cases))
	var items []xtermItem
	for i, c := range cases {
		v, f := goView(c.Columns, c.Rows, c.bytes(t), c)
		goViews[i] = v
		orig := newXtermItem("original:"+c.Name, c.Columns, c.Rows, c.bytes(t))
		if c.Resize != nil {
			orig.Resize = &xtermSize{Columns: c.Resize.Columns, Rows: c.Resize.Rows}
			orig.ThenBase64 = base64.StdEncoding.EncodeToString([]byte(c.Then))
		}
		items = append(items, orig, newXtermItem("restored:"+c.Name, f.Columns, f.Rows, []byte(f.SerializedState)))
	}
	xterm := xtermRender(t, node, items)

	matched, restored, known := 0, 0, 0
	for i, c := range cases {
		render := xterm["original:"+c.Name].diff(goViews[i])
		restore := goViews[i].diff(xterm["restored:"+c.Name])
		if len(render) == 0 {
			matched++
		}
		if len(restore) == 0 {
			restored++
		}
		switch {
		case c.KnownDifference != "" && len(render) == 0 && len(restore) == 0:
			t.Errorf("%s: marked known_difference but now matches xterm.js: remove the mark", c.Name)
		case c.KnownDifference != "":
			known++
			t.Logf("%s: known difference (%s):\n  %s", c.Name, c.KnownDifference, strings.Join(append(render, restore...), "\n  "))
		default:
			if len(render) > 0 {
				t.Errorf("%s (%dx%d, %s): Go screen differs from xterm.js:\n  %s", c.Name, c.Columns, c.Rows, c.Source, strings.Join(render, "\n  "))
			}
			if len(restore) > 0 {
				t.Errorf("%s: serialized_state does not restore the frame in xterm.js:\n  %s", c.Name, strings.Join(restore, "\n  "))
			}
		}
	}
	t.Logf("rendering conformance vs @xterm/headless: %d/%d streams match (%.1f%%), %d known differences; serialized_state restores %d/%d frames",
		matched, len(cases), 100*float64(matched)/float64(len(cases)), known, restored, len(cases))
}

// TestRenderChunkIndependence feeds every corpus stream to the screen in
// small chunks, as a PTY delivers it, and requires the same screen as one
// write: xterm.js's screen does not depend on how its input was split.
func TestRenderChunkIndependence(t *testing.T) {
	for _, c := range loadCorpus(t) {
		data := c.bytes(t)
		whole, _ := goView(c.Columns, c.Rows, data)
		whole.Attrs, whole.CursorHidden = nil, nil
		for _, size := range []int{1, 3, 7} {
			s := newScreen(Terminal{Columns: c.Columns, Rows: c.Rows, Scrollback: 1000})
			for i := 0; i < len(data); i += size {
				s.write(data[i:min(i+size, len(data))])
			}
			f := snap(t, s)
			s.close()
			part := view{Lines: f.Lines, CursorX: f.CursorX, CursorY: f.CursorY, ActiveBuffer: f.ActiveBuffer}
			if d := whole.diff(part); len(d) > 0 {
				t.Errorf("%s in %d-byte chunks differs from one write:\n  %s", c.Name, size, strings.Join(d, "\n  "))
			}
		}
	}
}

// TestXtermWidthTableIsCurrent regenerates render_widths.go from the
// installed @xterm/headless (frontend/conformance/gen-widths.mjs) and
// requires the committed table to be the same, so an xterm.js upgrade that
// changes character widths cannot go unnoticed.
func TestXtermWidthTableIsCurrent(t *testing.T) {
	node := requireNode(t)
	out, err := exec.Command(node, filepath.Join(frontendDir(), "conformance", "gen-widths.mjs")).Output()
	if err != nil {
		t.Fatalf("gen-widths.mjs: %v", err)
	}
	want, err := format.Source(out)
	if err != nil {
		t.Fatalf("gen-widths.mjs output: %v", err)
	}
	got, err := os.ReadFile("render_widths.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("render_widths.go is stale: run `node frontend/conformance/gen-widths.mjs > backend/capture/render_widths.go && gofmt -w backend/capture/render_widths.go`")
	}
	for r, w := range map[rune]int{'é': 1, '\u0301': 0, '日': 2, '😀': 1, '\u200d': 0, '\U00020000': 2} {
		if got := xtermWidth(r); got != w {
			t.Errorf("xtermWidth(%U) = %d, want %d", r, got, w)
		}
	}
}
