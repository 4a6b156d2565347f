package capture

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestScreenRendersAndAnswersQueriesWithoutBlocking(t *testing.T) {
	s := newScreen(Terminal{Columns: 6, Rows: 2, Scrollback: 10})
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A cursor-position query and a device-attributes query make the
		// emulator write replies; without the drainer Write would block.
		for range 100 {
			s.write([]byte("\x1b[6n\x1b[c"))
		}
		s.write([]byte("ab\r\n日x"))
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("emulator write blocked")
	}
	f := snap(t, s)
	if f.Lines[0] != "ab    " || f.Lines[1] != "日x   " {
		t.Fatalf("lines %q", f.Lines)
	}
	if f.CursorX != 3 || f.CursorY != 1 || f.ActiveBuffer != BufferNormal || f.SerializedState != "\x1bcab\x1b[2H日x" {
		t.Fatalf("frame %+v", f)
	}
	s.write([]byte("\x1b[?1049h"))
	if snap(t, s).ActiveBuffer != BufferAlternate {
		t.Fatal("alternate screen not reported")
	}
	s.resize(3, 1)
	if f := snap(t, s); f.Columns != 3 || f.Rows != 1 || len(f.Lines) != 1 {
		t.Fatalf("after resize %+v", f)
	}
	s.close()
}

// FuzzScreen feeds arbitrary bytes, in two writes and across a resize, to
// the capture's screen: it must never panic or block, and every frame must
// have the screen's size.
func FuzzScreen(f *testing.F) {
	for _, seed := range []string{"abc\x1b[2;9r\x1bM", "日本\u0301\x1b[?1049h\x1b[4h😀", "\x1b[?7labcdef\x1b[1J\x1b[2J", "\x1b]8;;u\x1b\\l\x1b[s\x1b[u\x1b#8"} {
		f.Add([]byte(seed), uint8(3), uint8(5), uint8(2))
	}
	f.Fuzz(func(t *testing.T, data []byte, split, cols, rows uint8) {
		c, r := 1+int(cols)%40, 1+int(rows)%12
		s := newScreen(Terminal{Columns: c, Rows: r, Scrollback: 10})
		defer s.close()
		cut := int(split) % (len(data) + 1)
		done := make(chan string, 1)
		go func() {
			defer close(done)
			s.write(data[:cut])
			if f, err := s.snapshot(); err != nil || len(f.Lines) != r || f.Columns != c {
				done <- fmt.Sprintf("frame %dx%d with %d lines, want %dx%d (%v)", f.Columns, f.Rows, len(f.Lines), c, r, err)
				return
			}
			s.resize(max(c/2, 1), r+1)
			s.write(data[cut:])
			if f, err := s.snapshot(); err != nil || len(f.Lines) != r+1 || f.CursorX > f.Columns || f.CursorY >= f.Rows {
				done <- fmt.Sprintf("frame after resize %+v (%v)", f, err)
			}
		}()
		select {
		case msg, ok := <-done:
			if ok {
				t.Fatal(msg)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("rendering %q (%dx%d, split at %d) did not finish in 10 s", data, c, r, cut)
		}
	})
}

// snap is s.snapshot for tests: the emulator must not have failed.
func snap(t testing.TB, s *screen) RenderedFrame {
	t.Helper()
	f, err := s.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestScreenFailureIsContained makes the emulator fail (it panics on a
// nil cell buffer here; in the wild, on output x/vt mis-handles) and
// checks that the failure is an error of the screen, sticky, and that a
// capture's recorder stops rendered frames with a limitation saying why
// while raw frames go on.
func TestScreenFailureIsContained(t *testing.T) {
	s := newScreen(Terminal{Columns: 10, Rows: 2, Scrollback: 10})
	if err := s.write([]byte("ok")); err != nil {
		t.Fatal(err)
	}
	emu := s.front.emu
	s.front.emu = nil // every use panics
	if err := s.write([]byte("boom")); err == nil || !strings.Contains(err.Error(), "terminal emulator failed") {
		t.Fatalf("write after failure: %v", err)
	}
	s.front.emu = emu
	if _, err := s.snapshot(); err == nil {
		t.Fatal("a failed screen must stay failed")
	}
	if err := s.resize(4, 4); err == nil {
		t.Fatal("a failed screen must stay failed")
	}
	s.close()

	sc := parseOK(t, mustJSON(t, obj{"approved": true, "executable": "/bin/sh", "working_directory": "/"}))
	norm, err := newNormalizer(sc, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec := &Record{}
	scr := newScreen(sc.Terminal)
	defer scr.close()
	r := &recorder{rec: rec, limits: sc.Limits, norm: norm, text: stream{literals: norm.literals}, scr: scr}
	r.chunk([]byte("first\r\n"), 0)
	good := scr.front.emu
	scr.front.emu = nil
	r.chunk([]byte("second\r\n"), time.Millisecond)
	scr.front.emu = good
	r.chunk([]byte("third\r\n"), 2*time.Millisecond)
	if len(rec.Frames) != 3 || len(rec.RenderedFrames) != 1 || !rec.Truncated {
		t.Fatalf("frames %d, rendered %d, truncated %v", len(rec.Frames), len(rec.RenderedFrames), rec.Truncated)
	}
	if l := rec.Limitations[len(rec.Limitations)-1]; !strings.Contains(l, "rendered frames stopped: the terminal emulator failed") {
		t.Fatalf("limitation %q", l)
	}
}
