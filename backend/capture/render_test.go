package capture

import (
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
	f := s.snapshot()
	if f.Lines[0] != "ab    " || f.Lines[1] != "日x   " {
		t.Fatalf("lines %q", f.Lines)
	}
	if f.CursorX != 3 || f.CursorY != 1 || f.ActiveBuffer != BufferNormal || f.SerializedState != "ab    \r\n日x   " {
		t.Fatalf("frame %+v", f)
	}
	s.write([]byte("\x1b[?1049h"))
	if s.snapshot().ActiveBuffer != BufferAlternate {
		t.Fatal("alternate screen not reported")
	}
	s.resize(3, 1)
	if f := s.snapshot(); f.Columns != 3 || f.Rows != 1 || len(f.Lines) != 1 {
		t.Fatalf("after resize %+v", f)
	}
	s.close()
}
