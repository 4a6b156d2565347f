package capture

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// plainBlock is lines of printable ASCII ended by LF, CR LF, LF CR or a
// lone CR (sometimes none), from empty to three rows wide: the output the
// fast-forward skips (render_fastforward.go).
func plainBlock(r *rand.Rand, lines, columns int) string {
	ends := []string{"\n", "\n", "\r\n", "\n\r", "\r", "", "\n\n"}
	var b strings.Builder
	for range lines {
		n := r.IntN(3*columns + 2)
		for range n {
			b.WriteByte(byte(0x20 + r.IntN(0x5f)))
		}
		b.WriteString(ends[r.IntN(len(ends))])
	}
	return b.String()
}

// TestRenderFastForwardConformance runs 600 seeded streams made for the
// fast-forward through conformance: plain blocks long enough to
// be cut (more than scrollback + 2 × rows line feeds) on small screens
// with small scrollbacks, before, between and after random escape
// sequences (which can leave xterm.js in a state where no cut is allowed:
// the alternate buffer, a scroll region, autowrap off, a character set, a
// sequence split across writes), written in pieces of every size, two
// thirds of them then resized (which reflows the scrollback and pulls it
// into view, so a scrollback the cut got wrong shows) and written to
// again. Every final frame must equal an independent @xterm/headless run
// over all the bytes, and the fast-forward must have cut many of them.
func TestRenderFastForwardConformance(t *testing.T) {
	const streams = 600
	r := rand.New(rand.NewPCG(16, 3))
	names := make([]string, streams)
	runs := make([]helperRun, streams)
	for i := range runs {
		sb := r.IntN(30)
		if i%10 == 0 {
			sb = 0
		}
		run := helperRun{Columns: 2 + r.IntN(30), Rows: 1 + r.IntN(8), Scrollback: &sb}
		var data strings.Builder
		for range 1 + r.IntN(3) {
			if r.IntN(2) == 0 {
				data.WriteString(randomStream(r, 1+r.IntN(8)))
			}
			data.WriteString(plainBlock(r, sb+2*run.Rows+r.IntN(3*(sb+run.Rows)+4), run.Columns))
		}
		if r.IntN(3) == 0 {
			data.WriteString(randomStream(r, 1+r.IntN(6)))
		}
		if r.IntN(2) == 0 { // pieces as a PTY delivers them
			run.Parts = splitParts([]byte(data.String()), i)
		} else { // or large writes, so a run is cut inside one message
			run.Parts = splitLarge([]byte(data.String()), r)
		}
		if r.IntN(3) != 0 {
			run.Resize = &xtermSize{Columns: 2 + r.IntN(30), Rows: 1 + r.IntN(10)}
			run.Then = []byte(plainBlock(r, r.IntN(4), run.Columns))
		}
		names[i], runs[i] = fmt.Sprint("fast-forward ", i), run
	}
	n, matched, restored, threw, ff := conformanceStats(t, names, runs, nil)
	t.Logf("fast-forward streams vs @xterm/headless: %d/%d rendered frames match, serialized_state restores %d/%d (xterm.js threw on %d); the fast-forward cut %d times, skipping %d bytes",
		matched, n-threw, restored, n-threw, threw, ff.Cuts, ff.Skipped)
	if ff.Cuts < streams/3 {
		t.Errorf("the fast-forward cut only %d times in %d streams: the test does not exercise it", ff.Cuts, streams)
	}
}

// splitLarge cuts data into pieces of up to 4 KiB chosen by r.
func splitLarge(data []byte, r *rand.Rand) [][]byte {
	var parts [][]byte
	for len(data) > 0 {
		n := min(1+r.IntN(4096), len(data))
		parts = append(parts, data[:n])
		data = data[n:]
	}
	return parts
}

// TestRenderFastForwardKeepsTheBufferRing: xterm.js's reflow on a resize
// depends on where its circular list of buffer lines starts, not only on
// the lines, so a cut must leave that start where parsing every byte
// would have (fastforward.mjs, keepRing). The pinned stream (found by a
// frames-during-runs variant of the conformance test: 29×5, scrollback
// 9, cut once, then narrowed to 2 columns) and 300 seeded streams of
// plain lines cut and then narrowed to 2–5 columns must render as an
// independent @xterm/headless run over all the bytes.
func TestRenderFastForwardKeepsTheBufferRing(t *testing.T) {
	pinned, err := os.ReadFile(filepath.Join("testdata", "fastforward", "reflow-ring.bin"))
	if err != nil {
		t.Fatal(err)
	}
	sb := 9
	names := []string{"pinned"}
	runs := []helperRun{{Columns: 29, Rows: 5, Scrollback: &sb, Parts: [][]byte{pinned[:3061], pinned[3061:]},
		Resize: &xtermSize{Columns: 2, Rows: 5}}}
	r := rand.New(rand.NewPCG(16, 5))
	for i := range 300 {
		sb := r.IntN(20)
		run := helperRun{Columns: 2 + r.IntN(40), Rows: 1 + r.IntN(8), Scrollback: &sb}
		data := plainBlock(r, sb+2*run.Rows+r.IntN(4*(sb+run.Rows)+4), run.Columns)
		run.Parts = splitLarge([]byte(data), r)
		run.Resize = &xtermSize{Columns: 2 + r.IntN(4), Rows: 1 + r.IntN(8)}
		names, runs = append(names, fmt.Sprint("narrowed ", i)), append(runs, run)
	}
	n, matched, restored, threw, ff := conformanceStats(t, names, runs, nil)
	t.Logf("cut and narrowed streams vs @xterm/headless: %d/%d rendered frames match, serialized_state restores %d/%d; the fast-forward cut %d times",
		matched, n-threw, restored, n-threw, ff.Cuts)
	if ff.Cuts < 100 {
		t.Errorf("the fast-forward cut only %d times: the test does not exercise it", ff.Cuts)
	}
}

// TestRenderFastForwardFramesConformance: frames taken while a plain run
// goes on (the run shows xterm.js only its visible rows once it can be
// cut, screen.show in render_fastforward.go) equal an independent @xterm/headless run over the
// bytes up to each frame, and the frame after the run, after a resize
// that reflows the scrollback into view, equals one over all the bytes:
// what show wrote leaves no trace once the run ends. 150 seeded streams
// of plain blocks among escape sequences, in pieces, a frame after about
// one piece in four and after the last.
func TestRenderFastForwardFramesConformance(t *testing.T) {
	node := requireNode(t)
	const streams = 150
	r := rand.New(rand.NewPCG(16, 4))
	h := RendererHelper{Node: node, Supervisor: newSupervisor(t)}
	s, err := startScreen(h, Terminal{Columns: 10, Rows: 4, Scrollback: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	var items []xtermItem
	got := map[string]RenderedFrame{}
	shows := 0
	for i := range streams {
		sb := r.IntN(30)
		if i%10 == 0 {
			sb = 0
		}
		term := Terminal{Columns: 2 + r.IntN(30), Rows: 1 + r.IntN(8), Scrollback: sb}
		var data strings.Builder
		for range 1 + r.IntN(3) {
			if r.IntN(3) == 0 {
				data.WriteString(randomStream(r, 1+r.IntN(8)))
			}
			data.WriteString(plainBlock(r, sb+2*term.Rows+r.IntN(6*(sb+term.Rows)+4), term.Columns))
		}
		var parts [][]byte
		if r.IntN(2) == 0 {
			parts = splitParts([]byte(data.String()), i)
		} else {
			parts = splitLarge([]byte(data.String()), r)
		}
		if err := s.reset(term); err != nil {
			t.Fatal(err)
		}
		var prefix [][]byte
		item := func(id string, parts [][]byte) xtermItem {
			var all []byte
			it := newXtermItem(id, term.Columns, term.Rows, nil)
			for _, p := range parts {
				all = append(all, p...)
				it.PartsBase64 = append(it.PartsBase64, base64.StdEncoding.EncodeToString(p))
			}
			it.DataBase64 = base64.StdEncoding.EncodeToString(all)
			it.Scrollback = &sb
			return it
		}
		for j, p := range parts {
			s.write(p)
			prefix = append(prefix, p)
			if r.IntN(4) == 0 || j == len(parts)-1 {
				id := fmt.Sprintf("stream %d frame after part %d", i, j)
				f, err := s.snapshot()
				if err != nil {
					t.Fatalf("%s: %v", id, err)
				}
				got[id] = f
				items = append(items, item(id, slices.Clone(prefix)))
				shows++
			}
		}
		resize := &xtermSize{Columns: 2 + r.IntN(30), Rows: 1 + r.IntN(10)}
		then := []byte(plainBlock(r, r.IntN(4), term.Columns))
		s.resize(resize.Columns, resize.Rows)
		s.write(then)
		id := fmt.Sprintf("stream %d after the resize", i)
		f, err := s.snapshot()
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		got[id] = f
		it := item(id, parts)
		it.Resize, it.ThenBase64 = resize, base64.StdEncoding.EncodeToString(then)
		items = append(items, it)
	}
	st, err := s.stats()
	if err != nil {
		t.Fatal(err)
	}
	want := xtermRender(t, node, items)
	matched := 0
	for id, f := range got {
		w := want[id]
		if w.Error != "" {
			t.Errorf("%s: xterm.js threw %q", id, w.Error)
			continue
		}
		if d := w.diff(frameView(f)); len(d) > 0 {
			t.Errorf("%s: the rendered frame differs from xterm.js:\n  %s", id, strings.Join(d, "\n  "))
			continue
		}
		matched++
	}
	t.Logf("fast-forward streams with frames during the runs: %d/%d frames match @xterm/headless (%d during the streams, %d after a resize); the fast-forward cut %d times, skipping %d bytes",
		matched, len(got), shows, streams, st.Cuts, st.Skipped)
	if st.Cuts < streams/3 {
		t.Errorf("the fast-forward cut only %d times in %d streams: the test does not exercise it", st.Cuts, streams)
	}
}
