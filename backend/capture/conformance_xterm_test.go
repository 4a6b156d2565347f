package capture

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
)

// corpusDir holds the rendering conformance corpus: cases.json and the
// recorded streams it names.
const corpusDir = "testdata/render-corpus"

// corpusCase is one stream of the corpus, rendered at Columns x Rows.
// Exactly one of File (a recorded stream in corpusDir) and Text holds the
// bytes. KnownDifference, when set, says why Go's screen differs from
// xterm.js's for this stream; such a case must still differ (the test
// fails when it starts to match, so the list stays true).
type corpusCase struct {
	Name            string `json:"name"`
	Columns         int    `json:"columns"`
	Rows            int    `json:"rows"`
	File            string `json:"file,omitempty"`
	Text            string `json:"text,omitempty"`
	Source          string `json:"source"`
	KnownDifference string `json:"known_difference,omitempty"`
	// Resize, when set, resizes the terminal after the bytes, and Then is
	// written after the resize.
	Resize *struct {
		Columns int `json:"columns"`
		Rows    int `json:"rows"`
	} `json:"resize,omitempty"`
	Then string `json:"then,omitempty"`
}

func loadCorpus(t testing.TB) []corpusCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(corpusDir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []corpusCase
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cases); err != nil {
		t.Fatalf("cases.json: %v", err)
	}
	seen := map[string]bool{}
	for i, c := range cases {
		if c.Name == "" || seen[c.Name] || c.Columns < 1 || c.Rows < 1 || (c.File == "") == (c.Text == "") {
			t.Fatalf("cases.json: [%d] needs a unique name, a size and exactly one of file/text: %+v", i, c)
		}
		seen[c.Name] = true
	}
	return cases
}

func (c corpusCase) bytes(t testing.TB) []byte {
	t.Helper()
	if c.File == "" {
		return []byte(c.Text)
	}
	b, err := os.ReadFile(filepath.Join(corpusDir, c.File))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// view is what a screen shows, in the shape render.mjs prints it.
type view struct {
	Lines        []string `json:"lines"`
	Attrs        []string `json:"attrs"`
	CursorX      int      `json:"cursor_x"`
	CursorY      int      `json:"cursor_y"`
	ActiveBuffer string   `json:"active_buffer"`
	CursorHidden *bool    `json:"cursor_hidden"`
	Error        string   `json:"error,omitempty"` // xterm.js threw on the stream
}

// diff lists every way got differs from want, naming the row or field.
func (want view) diff(got view) []string {
	var d []string
	if want.Error != "" || got.Error != "" {
		return []string{fmt.Sprintf("xterm.js threw: %q (want) %q (got)", want.Error, got.Error)}
	}
	if len(got.Lines) != len(want.Lines) {
		return []string{fmt.Sprintf("%d rows, want %d", len(got.Lines), len(want.Lines))}
	}
	for i := range want.Lines {
		if got.Lines[i] != want.Lines[i] {
			d = append(d, fmt.Sprintf("row %d text %q, want %q", i, got.Lines[i], want.Lines[i]))
		}
	}
	for i := range want.Attrs {
		if i < len(got.Attrs) && got.Attrs[i] != want.Attrs[i] {
			d = append(d, fmt.Sprintf("row %d attributes %s, want %s", i, got.Attrs[i], want.Attrs[i]))
		}
	}
	if got.CursorX != want.CursorX || got.CursorY != want.CursorY {
		d = append(d, fmt.Sprintf("cursor (%d,%d), want (%d,%d)", got.CursorX, got.CursorY, want.CursorX, want.CursorY))
	}
	if got.ActiveBuffer != want.ActiveBuffer {
		d = append(d, fmt.Sprintf("active buffer %s, want %s", got.ActiveBuffer, want.ActiveBuffer))
	}
	if got.CursorHidden != nil && want.CursorHidden != nil && *got.CursorHidden != *want.CursorHidden {
		d = append(d, fmt.Sprintf("cursor hidden %v, want %v", *got.CursorHidden, *want.CursorHidden))
	}
	return d
}

// goView renders data with the capture's screen at columns x rows, then
// applies the case's resize and writes its Then bytes, if any.
func goView(columns, rows int, data []byte, resize ...corpusCase) (view, RenderedFrame) {
	s := newScreen(Terminal{Columns: columns, Rows: rows, Scrollback: 1000})
	defer s.close()
	s.write(data)
	for _, c := range resize {
		if c.Resize != nil {
			s.resize(c.Resize.Columns, c.Resize.Rows)
			s.write([]byte(c.Then))
			columns, rows = c.Resize.Columns, c.Resize.Rows
		}
	}
	f, err := s.snapshot()
	if err != nil { // differs from every xterm.js screen
		return view{Lines: []string{err.Error()}}, f
	}
	hidden := s.front.hidden
	v := view{Lines: f.Lines, CursorX: f.CursorX, CursorY: f.CursorY, ActiveBuffer: f.ActiveBuffer, CursorHidden: &hidden}
	for y := range rows {
		v.Attrs = append(v.Attrs, goRowAttrs(s, y, columns))
	}
	return v, f
}

// goRowAttrs is render.mjs's rowAttrs for an x/vt row: runs of cell
// signatures "fg/bg/flags".
func goRowAttrs(s *screen, y, cols int) string {
	var runs []string
	prev, count := "", 0
	var wide *uv.Cell // the wide cell whose trailing half comes next
	for x := range cols {
		c := s.emu.CellAt(x, y)
		switch {
		case c != nil && c.Width == 0 && c.Content == "" && wide != nil:
			c, wide = wide, nil // xterm.js gives the trailing half its wide cell's attributes
		case c != nil && c.Width > 1:
			wide = c
		default:
			wide = nil
		}
		sig := "//"
		if c != nil {
			sig = goSignature(c.Style, !c.Link.IsZero())
		}
		if sig == prev {
			count++
			continue
		}
		if count > 0 {
			runs = append(runs, prev+"*"+strconv.Itoa(count))
		}
		prev, count = sig, 1
	}
	if count > 0 {
		runs = append(runs, prev+"*"+strconv.Itoa(count))
	}
	return strings.Join(runs, "|")
}

// goSignature is render.mjs's cellSignature of a cell with style s; a cell
// of an OSC 8 hyperlink counts as underlined, as xterm.js reports it.
func goSignature(s uv.Style, linked bool) string {
	flags := ""
	for _, f := range []struct {
		on   bool
		code string
	}{
		{s.Attrs&uv.AttrBold != 0, "b"}, {s.Attrs&uv.AttrFaint != 0, "d"}, {s.Attrs&uv.AttrItalic != 0, "i"},
		{s.Underline != uv.UnderlineNone || linked, "u"}, {s.Attrs&uv.AttrBlink != 0, "k"}, {s.Attrs&uv.AttrReverse != 0, "r"},
		{s.Attrs&uv.AttrConceal != 0, "h"}, {s.Attrs&uv.AttrStrikethrough != 0, "s"},
	} {
		if f.on {
			flags += f.code
		}
	}
	return goColor(s.Fg) + "/" + goColor(s.Bg) + "/" + flags
}

func goColor(c color.Color) string {
	switch c := c.(type) {
	case nil:
		return ""
	case ansi.BasicColor:
		return "p" + strconv.Itoa(int(c))
	case ansi.IndexedColor:
		return "p" + strconv.Itoa(int(c))
	default:
		r, g, b, _ := c.RGBA()
		return fmt.Sprintf("r%02x%02x%02x", r>>8, g>>8, b>>8)
	}
}

// xtermItem is one stream for render.mjs.
type xtermItem struct {
	ID         string     `json:"id"`
	Columns    int        `json:"columns"`
	Rows       int        `json:"rows"`
	DataBase64 string     `json:"data_base64"`
	Resize     *xtermSize `json:"resize,omitempty"`
	ThenBase64 string     `json:"then_base64,omitempty"`
}

type xtermSize struct {
	Columns int `json:"columns"`
	Rows    int `json:"rows"`
}

func newXtermItem(id string, columns, rows int, data []byte) xtermItem {
	return xtermItem{ID: id, Columns: columns, Rows: rows, DataBase64: base64.StdEncoding.EncodeToString(data)}
}

// frontendDir is the checkout's frontend/, where npm installs @xterm/headless.
func frontendDir() string { return filepath.Join("..", "..", "frontend") }

// requireNode skips the test when Node or the frontend's node_modules are
// missing (make test installs both before the Go tests; under CI=true a
// missing one fails instead, so CI cannot pass without running xterm.js).
func requireNode(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	missing := ""
	switch {
	case err != nil:
		missing = "node is not on PATH"
	default:
		if _, err := os.Stat(filepath.Join(frontendDir(), "node_modules", "@xterm", "headless", "package.json")); err != nil {
			missing = "frontend/node_modules/@xterm/headless is missing (run `make frontend` or `cd frontend && npm ci`)"
		}
	}
	if missing != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("xterm.js conformance cannot run: %s", missing)
		}
		t.Skipf("xterm.js conformance skipped: %s", missing)
	}
	return node
}

// xtermRender runs frontend/conformance/render.mjs on items with the real
// Node and @xterm/headless and returns the views by id.
func xtermRender(t testing.TB, node string, items []xtermItem) map[string]view {
	t.Helper()
	in, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(frontendDir(), "conformance", "render.mjs"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := stderr.String()
		if len(msg) > 2000 {
			msg = "…" + msg[len(msg)-2000:]
		}
		t.Fatalf("render.mjs: %v\n%s", err, msg)
	}
	var got []struct {
		ID string `json:"id"`
		view
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("render.mjs output: %v", err)
	}
	if len(got) != len(items) {
		t.Fatalf("render.mjs answered %d items for %d", len(got), len(items))
	}
	views := make(map[string]view, len(got))
	for _, g := range got {
		views[g.ID] = g.view
	}
	return views
}
