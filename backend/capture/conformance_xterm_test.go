package capture

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// corpusDir holds the rendering conformance corpus: cases.json and the
// recorded streams it names.
const corpusDir = "testdata/render-corpus"

// corpusCase is one stream of the corpus, rendered at Columns x Rows.
// Exactly one of File (a recorded stream in corpusDir) and Text holds the
// bytes.
type corpusCase struct {
	Name    string `json:"name"`
	Columns int    `json:"columns"`
	Rows    int    `json:"rows"`
	File    string `json:"file,omitempty"`
	Text    string `json:"text,omitempty"`
	Source  string `json:"source"`
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
// Attributes and cursor visibility are compared when both views have
// them (a rendered frame has neither).
func (want view) diff(got view) []string {
	var d []string
	if want.Error != "" || got.Error != "" {
		if (want.Error == "") != (got.Error == "") {
			return []string{fmt.Sprintf("xterm.js threw: %q (want) %q (got)", want.Error, got.Error)}
		}
		return nil // both threw
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

// frameView is the view of a rendered frame (no attributes).
func frameView(f RenderedFrame) view {
	return view{Lines: f.Lines, CursorX: f.CursorX, CursorY: f.CursorY, ActiveBuffer: f.ActiveBuffer}
}

// helperRun is one stream for the capture's renderer: written in parts
// (as a PTY delivers it), then resized and Then written when Resize is
// set.
type helperRun struct {
	Columns, Rows int
	Parts         [][]byte
	Resize        *xtermSize
	Then          []byte
	// Scrollback is the terminal's scrollback (nil: 1000).
	Scrollback *int
}

func (r helperRun) terminal() Terminal {
	t := Terminal{Columns: r.Columns, Rows: r.Rows, Scrollback: 1000}
	if r.Scrollback != nil {
		t.Scrollback = *r.Scrollback
	}
	return t
}

// helperFrames renders runs with the capture's renderer helper and
// returns the last frame of each, or the renderer's error. One helper
// renders many runs, each on a fresh terminal of its size (reset), which
// keeps thousands of streams fast; a helper that failed (xterm.js threw)
// is replaced for the next run.
func helperFrames(t testing.TB, h RendererHelper, runs []helperRun) ([]RenderedFrame, []error, fastStats) {
	t.Helper()
	frames, errs := make([]RenderedFrame, len(runs)), make([]error, len(runs))
	var s *screen
	var total fastStats
	done := func() { // adds up what the fast-forward of s did
		if st, err := s.stats(); err == nil {
			total.Skipped += st.Skipped
			total.Cuts += st.Cuts
		}
		s.close()
	}
	defer func() {
		if s != nil {
			done()
		}
	}()
	for i, r := range runs {
		if s == nil || s.err != nil {
			if s != nil {
				done()
			}
			var err error
			if s, err = startScreen(h, r.terminal()); err != nil {
				t.Fatal(err)
			}
		}
		s.reset(r.terminal())
		for _, p := range r.Parts {
			s.write(p)
		}
		if r.Resize != nil {
			s.resize(r.Resize.Columns, r.Resize.Rows)
			s.write(r.Then)
		}
		frames[i], errs[i] = s.snapshot()
	}
	done()
	s = nil
	return frames, errs, total
}

// splitParts cuts data into pieces of 1 to 64 bytes chosen by seed, so
// sequences and UTF-8 characters are split across writes as a PTY splits
// them.
func splitParts(data []byte, seed int) [][]byte {
	var parts [][]byte
	for i, n := 0, 0; i < len(data); i += n {
		n = min(1+(seed*31+i*7)%64, len(data)-i)
		parts = append(parts, data[i:i+n])
	}
	return parts
}

// xtermItem is one stream for render.mjs.
type xtermItem struct {
	ID         string `json:"id"`
	Columns    int    `json:"columns"`
	Rows       int    `json:"rows"`
	DataBase64 string `json:"data_base64"`
	// PartsBase64, when set, are the writes to make instead of one
	PartsBase64 []string   `json:"parts_base64,omitempty"`
	Resize      *xtermSize `json:"resize,omitempty"`
	ThenBase64  string     `json:"then_base64,omitempty"`
	// Scrollback, when set, is the terminal's scrollback (else 1000).
	Scrollback *int `json:"scrollback,omitempty"`
	// ViewsAfter, when set, asks for the view after each of these parts.
	ViewsAfter []int `json:"views_after,omitempty"`
	// ResizesBefore resizes the terminal before the parts they name.
	ResizesBefore []xtermResize `json:"resizes_before,omitempty"`
}

// xtermResize resizes render.mjs's terminal before part Part is written.
type xtermResize struct {
	Part    int `json:"part"`
	Columns int `json:"columns"`
	Rows    int `json:"rows"`
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

// renderAnswer is one item's answer from render.mjs: its view, and the
// views after the parts it named in ViewsAfter.
type renderAnswer struct {
	ID    string `json:"id"`
	Views []view `json:"views"`
	view
}

// runRenderMJS runs frontend/conformance/render.mjs on items with the
// real Node and @xterm/headless and returns one answer per item, in order.
func runRenderMJS(t testing.TB, node string, items []xtermItem) []renderAnswer {
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
	// A test's proctree.Supervisor may be open meanwhile: it reaps every
	// child of this process (wait4(-1)), so Cmd.Wait can find render.mjs
	// already reaped (ECHILD) and its exit status gone. Its answers are
	// then taken when they are whole (every item answered, parsed below).
	if errors.Is(err, syscall.ECHILD) {
		err = nil
	}
	if err != nil {
		msg := stderr.String()
		if len(msg) > 2000 {
			msg = "…" + msg[len(msg)-2000:]
		}
		t.Fatalf("render.mjs: %v\n%s", err, msg)
	}
	var got []renderAnswer
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("render.mjs output: %v", err)
	}
	if len(got) != len(items) {
		t.Fatalf("render.mjs answered %d items for %d", len(got), len(items))
	}
	return got
}

// xtermRender is runRenderMJS's views by id.
func xtermRender(t testing.TB, node string, items []xtermItem) map[string]view {
	t.Helper()
	views := map[string]view{}
	for _, g := range runRenderMJS(t, node, items) {
		views[g.ID] = g.view
	}
	return views
}
