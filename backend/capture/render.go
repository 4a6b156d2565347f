package capture

import (
	"strings"
	"sync/atomic"

	"github.com/charmbracelet/x/vt"
)

// screen is the terminal emulator that renders the target's output.
//
// The emulator writes its replies to terminal queries (DA, DSR, CPR) into
// an internal pipe and blocks until someone reads them, so a goroutine
// drains that pipe for the screen's whole life. The replies are discarded:
// the target does not receive them (a limitation Capture records).
type screen struct {
	emu  *vt.Emulator
	stop atomic.Bool
	done chan struct{}
}

func newScreen(t Terminal) *screen {
	s := &screen{emu: vt.NewEmulator(t.Columns, t.Rows), done: make(chan struct{})}
	s.emu.SetScrollbackSize(t.Scrollback)
	go s.drain()
	return s
}

func (s *screen) drain() {
	defer close(s.done)
	buf := make([]byte, 4096)
	for !s.stop.Load() {
		if _, err := s.emu.Read(buf); err != nil {
			return
		}
	}
}

// close stops the drainer and closes the emulator. The drainer is woken by
// one byte written to the reply pipe (from a goroutine: the drainer may
// already have stopped, and closing the emulator then unblocks that write),
// so the emulator is closed only after the drainer's last read.
func (s *screen) close() {
	s.stop.Store(true)
	pipe := s.emu.InputPipe()
	go pipe.Write([]byte{0}) //nolint:errcheck // only a wake-up
	<-s.done
	s.emu.Close()
}

func (s *screen) write(b []byte) { s.emu.Write(b) } //nolint:errcheck // never fails while open

func (s *screen) resize(columns, rows int) { s.emu.Resize(columns, rows) }

// snapshot renders the visible screen: every row as text padded to the
// column count (a wide character fills its columns, as xterm.js's
// translateToString does), the cursor, and the active buffer. The
// serialized state is the rows joined with CRLF: a plain-text form, not
// xterm.js's serialize format (a limitation Capture records).
func (s *screen) snapshot() RenderedFrame {
	cols, rows := s.emu.Width(), s.emu.Height()
	lines := make([]string, rows)
	var b strings.Builder
	for y := range rows {
		b.Reset()
		for x := 0; x < cols; {
			c := s.emu.CellAt(x, y)
			step := 1
			switch {
			case c == nil || c.Content == "":
				b.WriteByte(' ')
			default:
				b.WriteString(c.Content)
				step = max(c.Width, 1)
			}
			x += step
		}
		lines[y] = b.String()
	}
	pos := s.emu.CursorPosition()
	active := BufferNormal
	if s.emu.IsAltScreen() {
		active = BufferAlternate
	}
	return RenderedFrame{
		Columns: cols, Rows: rows, CursorX: pos.X, CursorY: pos.Y,
		ActiveBuffer: active, Lines: lines, SerializedState: strings.Join(lines, "\r\n"),
	}
}
