package capture

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRenderFastForwardLearnsReadiness: the fast-forward decides its cuts
// where the bytes are read, so after anything that leaves xterm.js's state
// unknown to the capture (escape sequences, the alternate screen entered
// and left, a resize) it learns from a frame whether a run may start and
// in which column the cursor is. 120 seeded streams, each on a fresh
// terminal: such a prefix, then long plain blocks in pieces with a frame
// after every piece (as a capture asks for them), again a prefix and a
// block, and last a resize that narrows the terminal (which reflows the
// scrollback into view, so a wrong cut shows). Frames are asked for ahead
// of their answers, as a capture asks, so the state is learned from a
// frame after more plain text was sent. Every frame equals an
// independent @xterm/headless run's view after the same piece, and the
// fast-forward must have cut in many streams, every cut made in a state
// it learned from a frame.
func TestRenderFastForwardLearnsReadiness(t *testing.T) {
	node := requireNode(t)
	const streams = 120
	r := rand.New(rand.NewPCG(16, 6))
	ahead := rand.New(rand.NewPCG(16, 7)) // how many frames are asked for before answers are taken
	h := RendererHelper{Node: node, Supervisor: newSupervisor(t)}
	s, err := startScreen(h, Terminal{Columns: 10, Rows: 4, Scrollback: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	prefixes := []func(*rand.Rand) string{
		func(r *rand.Rand) string { return randomStream(r, 1+r.IntN(8)) },
		func(r *rand.Rand) string {
			return "\x1b[?1049h\x1b[2J\x1b[Hfull screen " + randomStream(r, 1+r.IntN(4)) + "\x1b[?1049l"
		},
		func(r *rand.Rand) string { return "\x1b[1;32mgreen\x1b[0m \xc3\xa9\r\n" },
		nil, // a resize
	}
	var items []xtermItem
	var got [][]RenderedFrame
	var cutStreams int
	var cuts int64
	for i := range streams {
		sb := r.IntN(30)
		if i%10 == 0 {
			sb = 0
		}
		cols, rows := 2+r.IntN(30), 1+r.IntN(8)
		if err := s.reset(Terminal{Columns: cols, Rows: rows, Scrollback: sb}); err != nil {
			t.Fatal(err)
		}
		item := xtermItem{ID: fmt.Sprint("stream ", i), Columns: cols, Rows: rows, Scrollback: &sb}
		// frames are asked for as a capture asks: often several before
		// the first answer is taken (framesAhead), so the capture learns
		// from a frame after more plain text was sent
		var frames []RenderedFrame
		pending := 0
		take := func() {
			for ; pending > 0; pending-- {
				f, err := s.frameOf(s.next())
				if err != nil {
					t.Fatalf("%s: %v", item.ID, err)
				}
				frames = append(frames, f)
			}
		}
		frame := func() {
			if err := s.requestFrame(); err != nil {
				t.Fatalf("%s: %v", item.ID, err)
			}
			pending++
			item.ViewsAfter = append(item.ViewsAfter, len(item.PartsBase64)-1)
			if pending >= 1+ahead.IntN(framesAhead) {
				take()
			}
		}
		write := func(p []byte) {
			if err := s.write(p); err != nil {
				t.Fatal(err)
			}
			item.PartsBase64 = append(item.PartsBase64, base64.StdEncoding.EncodeToString(p))
			frame()
		}
		resize := func(c, rr int) {
			if err := s.resize(c, rr); err != nil {
				t.Fatal(err)
			}
			item.ResizesBefore = append(item.ResizesBefore, xtermResize{Part: len(item.PartsBase64), Columns: max(c, minColumns), Rows: rr})
			item.PartsBase64 = append(item.PartsBase64, "")
			frame()
		}
		before := s.ff.cuts
		for range 1 + r.IntN(2) {
			if p := prefixes[r.IntN(len(prefixes))]; p != nil {
				write([]byte(p(r)))
			} else {
				cols, rows = 2+r.IntN(30), 1+r.IntN(8)
				resize(cols, rows)
			}
			block := plainBlock(r, sb+2*rows+r.IntN(4*(sb+rows)+4), cols)
			for _, p := range splitLarge([]byte(block), r) {
				write(p)
			}
		}
		resize(2+r.IntN(4), 1+r.IntN(8))
		take()
		if s.ff.cuts > before {
			cutStreams++
			cuts += s.ff.cuts - before
		}
		items, got = append(items, item), append(got, frames)
	}
	if _, err := s.stats(); err != nil { // the helper applied every cut
		t.Fatal(err)
	}
	answers := runRenderMJS(t, node, items)
	matched, n := 0, 0
	for i, a := range answers {
		if a.Error != "" {
			t.Errorf("%s: xterm.js threw %q", items[i].ID, a.Error)
			continue
		}
		if len(a.Views) != len(got[i]) {
			t.Fatalf("%s: xterm.js answered %d views for %d frames", items[i].ID, len(a.Views), len(got[i]))
		}
		for j, f := range got[i] {
			n++
			if d := a.Views[j].diff(frameView(f)); len(d) > 0 {
				t.Errorf("%s, frame %d: the rendered frame differs from xterm.js:\n  %s", items[i].ID, j, strings.Join(d, "\n  "))
				continue
			}
			matched++
		}
	}
	t.Logf("plain blocks after escape sequences, the alternate screen and resizes: %d/%d frames match @xterm/headless; the fast-forward cut %d times in %d of %d streams",
		matched, n, cuts, cutStreams, streams)
	if cutStreams < streams/3 {
		t.Errorf("the fast-forward cut in only %d of %d streams: it does not learn readiness from frames", cutStreams, streams)
	}
}

// TestRendererRefusesAWrongRun: the run messages the capture sends
// (render_fastforward.go) are checked by the helper against xterm.js's
// own state, from the attacker's side: a run begun where xterm.js's state
// does not allow one (the alternate screen, a scroll region, a sequence
// not finished) or for another size, scrollback or cursor column, a cut
// outside a run or past the last column, output that is not plain inside
// a run, and an end as cut without a cut are each an error naming the
// problem, never a screen rendered from a false claim.
func TestRendererRefusesAWrongRun(t *testing.T) {
	h := testHelper(t)
	term := Terminal{Columns: 8, Rows: 4, Scrollback: 3}
	begin := func(c, r, sb, x int) message {
		var p [10]byte
		binary.LittleEndian.PutUint16(p[0:], uint16(c))
		binary.LittleEndian.PutUint16(p[2:], uint16(r))
		binary.LittleEndian.PutUint32(p[4:], uint32(sb))
		binary.LittleEndian.PutUint16(p[8:], uint16(x))
		return message{typ: 'b', payload: string(p[:])}
	}
	cut := func(x int) message {
		var p [2]byte
		binary.LittleEndian.PutUint16(p[:], uint16(x))
		return message{typ: 'c', payload: string(p[:])}
	}
	end := func(wasCut byte) message {
		return message{typ: 'x', payload: string([]byte{wasCut, 9, 0, 0, 0, 0, 0, 0, 0})}
	}
	out := func(s string) message { return message{typ: 'w', payload: s, plain: plainPrefix(s)} }
	for _, tc := range []struct {
		name string
		msgs []message
		want string
	}{
		{"begun on the alternate screen", []message{out("\x1b[?1049h"), begin(8, 4, 3, 0)}, "not in a state that allows one"},
		{"begun in a scroll region", []message{out("\x1b[1;2r"), begin(8, 4, 3, 0)}, "not in a state that allows one"},
		{"begun inside a sequence", []message{out("\x1b["), begin(8, 4, 3, 0)}, "not in a state that allows one"},
		{"begun inside a UTF-8 character", []message{out("\xc3"), begin(8, 4, 3, 0)}, "not in a state that allows one"},
		{"begun for other columns", []message{begin(9, 4, 3, 0)}, "for 9x4 with 3 lines of scrollback, the terminal is 8x4 with 3"},
		{"begun for other scrollback", []message{begin(8, 4, 4, 0)}, "for 8x4 with 4 lines"},
		{"begun in another column", []message{out("abc"), begin(8, 4, 3, 2)}, "from column 2, the cursor is in column 3"},
		{"cut outside a run", []message{cut(0)}, "cut: no plain run"},
		{"cut after the run ended", []message{begin(8, 4, 3, 0), end(0), cut(0)}, "cut: no plain run"},
		{"cut past the last column", []message{begin(8, 4, 3, 0), cut(8)}, "cut to column 8 of 8"},
		{"other output in a run", []message{begin(8, 4, 3, 0), out("ab\x1b[?1049h")}, "output that is not plain"},
		{"ended as cut without a cut", []message{begin(8, 4, 3, 0), out("ab\n"), end(1)}, "ended as cut without a cut"},
		{"ended outside a run", []message{end(0)}, "no plain run"},
		{"a cut flag of 2", []message{begin(8, 4, 3, 0), end(2)}, "cut flag 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startTestScreen(t, h, term)
			for _, m := range tc.msgs {
				s.queueMessage(m)
			}
			f, err := s.snapshot()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %q, %v; want an error with %q", f.Lines, err, tc.want)
			}
		})
	}
	// and the same messages where they fit render
	s := startTestScreen(t, h, term)
	for _, m := range []message{out("ab"), begin(8, 4, 3, 2), out("cd\n"), cut(4), out("ef"), end(0)} {
		s.queueMessage(m)
	}
	if f := xsnap(t, s); f.Lines[3] != "    ef  " || f.CursorX != 6 {
		t.Errorf("rows %q, cursor column %d", f.Lines, f.CursorX)
	}
}

// FuzzAdvance holds advance, the run's column arithmetic computed per
// line, to the rule's byte-by-byte statement (render_fastforward.go): a
// printable character at column C first wraps to column 0 (one autowrap),
// then advances a column; LF moves a pending wrap back to C − 1; CR goes
// to column 0. Bytes that are not plain are skipped (a run holds none).
func FuzzAdvance(f *testing.F) {
	f.Add("abc\ndef\r\n", 0, 3)
	f.Add("abcdefgh\rxy\n\n", 2, 2)
	f.Add("\r\r\n", 5, 5)
	f.Fuzz(func(t *testing.T, text string, x, cols int) {
		cols = 2 + int(uint(cols)%300)
		x = int(uint(x) % uint(cols+1))
		var plain strings.Builder
		for i := 0; i < len(text); i++ {
			if isPlainByte(text[i]) {
				plain.WriteByte(text[i])
			}
		}
		text = plain.String()
		wx, wwraps, wlfs := x, int64(0), int64(0)
		var wantAt, gotAt []int
		for i := 0; i < len(text); i++ {
			switch text[i] {
			case '\n':
				wx = min(wx, cols-1)
				wlfs++
				wantAt = append(wantAt, i+1, wx)
			case '\r':
				wx = 0
			default:
				if wx >= cols {
					wx = 0
					wwraps++
				}
				wx++
			}
		}
		gx, gwraps, glfs := advance(text, x, cols, func(off, x int) { gotAt = append(gotAt, off, x) })
		if gx != wx || gwraps != wwraps || glfs != wlfs || fmt.Sprint(gotAt) != fmt.Sprint(wantAt) {
			t.Fatalf("advance(%q, %d, %d) = column %d, %d wraps, %d line feeds, %v; want %d, %d, %d, %v", text, x, cols, gx, gwraps, glfs, gotAt, wx, wwraps, wlfs, wantAt)
		}
	})
}
