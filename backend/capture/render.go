package capture

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/vt"
)

// screen is the terminal emulator that renders the target's output.
//
// The emulator writes its replies to terminal queries (DA, DSR, CPR) into
// an internal pipe and blocks until someone reads them, so a goroutine
// drains that pipe for the screen's whole life. The replies are discarded:
// the target does not receive them (a limitation Capture records).
type screen struct {
	emu   *vt.Emulator
	front *xtermFront // makes x/vt's screen match xterm.js (render_fixups.go)
	stop  atomic.Bool
	done  chan struct{}
	// err is set once the emulator failed (x/vt panicked on output it
	// mis-handles; the output is the target's, so it is untrusted): the
	// screen then ignores everything and reports err.
	err error
}

func newScreen(t Terminal) *screen {
	s := &screen{emu: vt.NewEmulator(t.Columns, t.Rows), done: make(chan struct{})}
	s.front = &xtermFront{emu: s.emu, fastForward: true}
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

// guarded runs step unless the screen already failed, turning a panic of
// the emulator into s.err; it returns s.err.
func (s *screen) guarded(step func()) error {
	if s.err == nil {
		func() {
			defer func() {
				if p := recover(); p != nil {
					s.err = fmt.Errorf("the terminal emulator failed on the output: %v", p)
				}
			}()
			step()
		}()
	}
	return s.err
}

// write parses b as terminal output.
func (s *screen) write(b []byte) error { return s.guarded(func() { s.front.write(b) }) }

// resize changes the screen size.
func (s *screen) resize(columns, rows int) error {
	return s.guarded(func() { s.resizeUnguarded(columns, rows) })
}

// snapshot renders the visible screen (see render).
func (s *screen) snapshot() (f RenderedFrame, err error) {
	err = s.guarded(func() { f = s.render() })
	return f, err
}

func (s *screen) resizeUnguarded(columns, rows int) {
	s.front.flush()
	if pos := s.emu.CursorPosition(); pos.Y >= rows {
		// xterm.js keeps the cursor row on screen when rows shrink: the
		// rows above it scroll off the top (x/vt would cut the bottom and
		// clamp the cursor). The scroll region does not matter here.
		n := pos.Y - rows + 1
		wrap := pendingWrap(s.emu)
		s.front.forward("\x1b[r\x1b[" + strconv.Itoa(n) + "S")
		s.front.moveTo(uv.Pos(pos.X, pos.Y-n), wrap)
	}
	s.emu.Resize(columns, rows)
	s.front.resized(columns)
}

// render renders the visible screen: every row as text padded to the
// column count (a wide character fills its columns, as xterm.js's
// translateToString does), the cursor, the active buffer, and the
// serialized state from which xterm.js restores that screen
// (serializeScreen).
//
// The cursor is reported as xterm.js reports it: after a character was
// written at the last column with autowrap on, the cursor waits to wrap and
// its column is the column count, one past the last column (also with
// autowrap off, where xterm.js then overwrites the last cell).
func (s *screen) render() RenderedFrame {
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
	wrap := pendingWrap(s.emu) || s.front.pastEnd
	if wrap && pos.X == cols-1 {
		pos.X = cols
	}
	active := BufferNormal
	if s.emu.IsAltScreen() {
		active = BufferAlternate
	}
	b.Reset()
	serializeScreen(&b, s.emu, wrap, s.front.noWrap, s.front.hidden)
	return RenderedFrame{
		Columns: cols, Rows: rows, CursorX: pos.X, CursorY: pos.Y,
		ActiveBuffer: active, Lines: lines, SerializedState: b.String(),
	}
}

// pendingWrap reports whether the emulator's cursor waits to wrap: a
// character was written at the last column and the next one goes to the
// next row. x/vt v0.1.0 keeps this in an unexported field and offers no
// accessor, so it is read (never written) through reflection; if a later
// x/vt renames the field, the answer is false and the conformance test
// (pending-wrap cases) fails, so the change cannot go unnoticed.
func pendingWrap(e *vt.Emulator) bool {
	if phantomField == nil {
		return false
	}
	return reflect.ValueOf(e).Elem().FieldByIndex(phantomField).Bool()
}

// phantomField is the index of x/vt's pending-wrap field, looked up once
// (nil when x/vt has no such bool field).
var phantomField = func() []int {
	f, ok := reflect.TypeFor[vt.Emulator]().FieldByName("atPhantom")
	if !ok || f.Type.Kind() != reflect.Bool {
		return nil
	}
	return f.Index
}()
