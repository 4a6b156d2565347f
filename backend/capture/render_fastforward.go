package capture

import (
	"reflect"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// Fast-forwarding plain text.
//
// A command that prints a lot scrolls most of its output off the screen
// before the chunk ends, and x/vt copies every cell of every row for each
// line it scrolls (profiled: 70% of a 10 MB capture). Only the screen after
// the chunk is recorded, and x/vt's scrollback is never read, so rows that
// scroll away need not be drawn. This is hand-written because no emulator
// offers it: for a run of plain text (printable ASCII, CR, LF and SGR
// sequences, which only set the pen) the cursor alone is simulated,
// exactly as x/vt moves it, and the emulator starts reading the run where
// the last `rows` scrolls begin, with its pen set by the SGR sequences
// before that point and its cursor placed as the simulation says. Every
// row on the screen at that point, and everything drawn on it, is
// scrolled away by those `rows` scrolls, so the screen, cursor, pen and
// pending wrap after the run are the ones reading all of it would give.
// TestFastForwardMatchesFullParse checks this against x/vt reading every
// byte.
//
// It applies only when plain text means the same to x/vt everywhere in the
// run: autowrap on, no insert mode (xtermFront prints those itself), no
// LNM, no left/right margins, a scroll region of the whole screen, and no
// character set that maps ASCII (UK, DEC graphics). x/vt keeps these in
// unexported fields; they are read (never written) through reflection, and
// when x/vt renames one the fast path turns itself off (vtFields.ok) and
// TestFastForwardApplies fails, so the change cannot go unnoticed.

// plainByte reports whether b is plain text for the fast path.
func plainByte(b byte) bool { return b == '\r' || b == '\n' || (b >= 0x20 && b < 0x7f) }

// isSGR reports whether seq is one whole SGR sequence (CSI with only
// digits, ';' and ':' for parameters, final 'm'): it sets the pen and
// nothing else, so a run of plain text may hold it.
func isSGR(seq []byte) bool {
	if len(seq) < 3 || seq[0] != 0x1b || seq[1] != '[' || seq[len(seq)-1] != 'm' {
		return false
	}
	for _, c := range seq[2 : len(seq)-1] {
		if (c < '0' || c > '9') && c != ';' && c != ':' {
			return false
		}
	}
	return true
}

// sgrEnd returns the end of the SGR sequence at run[i:] (an ESC), or -1.
func sgrEnd(run []byte, i int) int {
	j := i + 2
	for j < len(run) && j-i < maxSeq && run[j] != 'm' && (run[j] >= '0' && run[j] <= '9' || run[j] == ';' || run[j] == ':') {
		j++
	}
	if j >= len(run) || !isSGR(run[i:j+1]) {
		return -1
	}
	return j + 1
}

// isPlainRun reports whether run holds only plain text and SGR sequences.
func isPlainRun(run []byte) bool {
	for i := 0; i < len(run); {
		switch b := run[i]; {
		case b == 0x1b:
			if i = sgrEnd(run, i); i < 0 {
				return false
			}
		case plainByte(b):
			i++
		default:
			return false
		}
	}
	return true
}

// cursorState is the emulator's cursor before one byte of a run.
type cursorState struct {
	at      int // the byte's index in the run
	x, y    int
	phantom bool // a wrap is pending
	scroll  bool // the byte scrolls the screen
}

// skipPlain returns where the emulator may start reading run and the
// cursor it must have there, or false when it must read all of run. It
// leaves the SGR sequences of run in f.sgrs; f.scrolls is its scratch
// space.
func (f *xtermFront) skipPlain(run []byte) (cursorState, bool) {
	cols, rows := f.emu.Width(), f.emu.Height()
	if len(run) <= rows || !f.plainMeansText() {
		return cursorState{}, false
	}
	pos := f.emu.CursorPosition()
	x, y, phantom := pos.X, pos.Y, pendingWrap(f.emu)
	if cap(f.scrolls) < rows {
		f.scrolls = make([]cursorState, rows)
	}
	ring := f.scrolls[:rows] // the cursor before each of the last rows scrolls
	n := 0                   // scrolls so far
	// down moves the cursor down a row from before (at byte i), scrolling
	// at the bottom, as x/vt's index does inside a whole-screen region; a
	// line feed does it, and so does a character printed while a wrap is
	// pending.
	down := func(i int) {
		if y == rows-1 {
			ring[n%rows] = cursorState{at: i, x: x, y: y, phantom: phantom}
			n++
		} else {
			y++
		}
		phantom = false
	}
	// print prints the characters run[i:j] (none is CR or LF); a line of
	// them is counted, not walked.
	print := func(i, j int) {
		for i < j {
			if phantom {
				down(i)
				x = 0
			}
			if room := cols - 1 - x; j-i <= room { // all fit before the last column
				x += j - i
				return
			} else {
				i += room + 1 // the last one of these lands on the last column
			}
			x, phantom = cols-1, true
		}
	}
	lastPrint := cursorState{at: -1}
	f.sgrs = f.sgrs[:0]
	for i := 0; i < len(run); {
		switch run[i] {
		case '\n':
			down(i)
			i++
		case '\r':
			x, phantom = 0, false
			i++
		case 0x1b: // an SGR sequence (isPlainRun): the cursor stays
			end := sgrEnd(run, i)
			f.sgrs = append(f.sgrs, [2]int{i, end})
			i = end
		default:
			j := i + 1
			for j < len(run) && run[j] != '\r' && run[j] != '\n' && run[j] != 0x1b {
				j++
			}
			print(i, j-1)
			lastPrint = cursorState{at: j - 1, x: x, y: y, phantom: phantom}
			print(j-1, j)
			i = j
		}
	}
	if n < rows {
		return cursorState{}, false
	}
	cut := ring[n%rows] // the first of the last rows scrolls
	cut.scroll = true
	// x/vt remembers the last printed character (for REP): keep it inside
	// what the emulator reads.
	if lastPrint.at >= 0 && lastPrint.at < cut.at {
		cut = lastPrint
	}
	return cut, cut.at > 0
}

// writePlain writes run, a run of plain text, to the emulator, skipping
// what would scroll off the screen (see skipPlain).
//
// When the emulator may start at the first of the last rows scrolls, the
// scrolls themselves are skipped too (x/vt copies the whole screen for
// each): that scroll leaves the cursor on a new blank bottom row, and the
// rows-1 after it push it to the top, so the screen is blanked (ED from
// the top: the same blank cells, with the pen's background, that
// scrolling brings in), the cursor goes to the top row as that scroll left
// it, and the rest of the run moves it down to the bottom without
// scrolling. Not when an SGR sequence follows the cut: a row scrolled in
// after it could take another background.
func (f *xtermFront) writePlain(run []byte) {
	cut, ok := f.skipPlain(run)
	if !ok {
		f.emu.Write(run) //nolint:errcheck // never fails while open
		return
	}
	// The pen at the cut is the one the SGR sequences before it leave.
	pen := []byte(nil)
	blank := cut.scroll
	for _, sgr := range f.sgrs {
		if sgr[0] < cut.at {
			pen = append(pen, run[sgr[0]:sgr[1]]...)
		} else {
			blank = false // rows scrolled in later may take another background
		}
	}
	if len(pen) > 0 {
		f.emu.Write(pen) //nolint:errcheck // never fails while open
	}
	from := cut.at
	switch {
	case !blank:
		f.place(uv.Pos(cut.x, cut.y), cut.phantom)
	case run[cut.at] == '\n': // a line feed keeps the column, ends a pending wrap
		f.emu.Write([]byte("\x1b[H\x1b[J" + cup(uv.Pos(cut.x, 0)))) //nolint:errcheck // never fails while open
		from++
	default: // a character wrapping to the new row
		f.emu.Write([]byte("\x1b[H\x1b[J")) //nolint:errcheck // never fails while open
	}
	f.skipped += from
	f.emu.Write(run[from:]) //nolint:errcheck // never fails while open
}

// plainMeansText reports whether x/vt's state makes plain text mean the
// same as in a freshly reset terminal (see the package comment above).
func (f *xtermFront) plainMeansText() bool {
	if !f.fastForward || !vtState.ok || f.insert || f.noWrap || f.desync {
		return false
	}
	e := reflect.ValueOf(f.emu).Elem()
	modes := e.FieldByIndex(vtState.modes)
	for _, m := range [...]reflect.Value{vtState.lnm, vtState.lrmm} {
		if v := modes.MapIndex(m); v.IsValid() && ansi.ModeSetting(v.Uint()).IsSet() {
			return false
		}
	}
	if v := modes.MapIndex(vtState.awm); !v.IsValid() || !ansi.ModeSetting(v.Uint()).IsSet() {
		return false
	}
	charsets := e.FieldByIndex(vtState.charsets)
	for i := range charsets.Len() {
		if !charsets.Index(i).IsNil() {
			return false
		}
	}
	region := e.FieldByIndex(vtState.scr).Elem().FieldByIndex(vtState.scroll)
	min, max := region.Field(0), region.Field(1)
	return min.Field(0).Int() == 0 && min.Field(1).Int() == 0 &&
		int(max.Field(0).Int()) == f.emu.Width() && int(max.Field(1).Int()) == f.emu.Height()
}

// vtFields locates the unexported x/vt fields plainMeansText reads.
type vtFields struct {
	ok                   bool
	modes, charsets, scr []int
	scroll               []int // in vt.Screen
	lnm, lrmm, awm       reflect.Value
}

// vtState is looked up once; it is never written after.
var vtState = func() vtFields {
	var v vtFields
	et := reflect.TypeFor[vt.Emulator]()
	field := func(t reflect.Type, name string, kind reflect.Kind) []int {
		f, ok := t.FieldByName(name)
		if !ok || f.Type.Kind() != kind {
			return nil
		}
		return f.Index
	}
	v.modes = field(et, "modes", reflect.Map)
	v.charsets = field(et, "charsets", reflect.Array)
	v.scr = field(et, "scr", reflect.Pointer)
	v.scroll = field(reflect.TypeFor[vt.Screen](), "scroll", reflect.Struct)
	if v.modes == nil || v.charsets == nil || v.scr == nil || v.scroll == nil ||
		et.FieldByIndex(v.scr).Type.Elem() != reflect.TypeFor[vt.Screen]() ||
		reflect.TypeFor[vt.Screen]().FieldByIndex(v.scroll).Type != reflect.TypeFor[uv.Rectangle]() ||
		et.FieldByIndex(v.modes).Type != reflect.TypeFor[ansi.Modes]() {
		return v
	}
	key := func(m ansi.Mode) reflect.Value { return reflect.ValueOf(&m).Elem() }
	v.lnm, v.lrmm, v.awm = key(ansi.ModeLineFeedNewLine), key(ansi.ModeLeftRightMargin), key(ansi.ModeAutoWrap)
	v.ok = true
	return v
}()
