package capture

import (
	"slices"
	"strconv"
	"unicode/utf8"

	uv "github.com/charmbracelet/ultraviolet"
)

// Printing characters as xterm.js does (see xtermFront).

// char handles one non-ASCII character: printable, a C1 control, or a
// byte that is not UTF-8 (raw).
func (f *xtermFront) char(r rune, raw []byte) {
	switch {
	case r == utf8.RuneError && len(raw) == 1:
		return // xterm.js drops bytes that are not UTF-8
	case r < 0xa0:
		// a C1 control: xterm.js acts on IND, NEL, HTS and the ones that
		// open a sequence or string (and ST), as their 7-bit forms ESC Fe,
		// and ignores the others
		switch r {
		case 0x84, 0x85, 0x88, 0x90, 0x98, 0x9b, 0x9c, 0x9d, 0x9e, 0x9f:
			f.write([]byte{0x1b, byte(r - 0x40)})
		}
		return
	}
	w := xtermWidth(r)
	f.flush()
	if w == 0 && f.join > 0 {
		f.attach(string(r))
		return
	}
	if w == 0 {
		w = 1 // xterm.js gives a lone zero-width character a cell
		f.printCell(string(r), w, "x")
		f.join = 0
		return
	}
	placeholder := "x"
	if w == 2 {
		placeholder = "\u3000" // ideographic space: two columns in x/vt too
	}
	f.printCell(string(r), w, placeholder)
}

// printCell prints a w-column cell holding content: x/vt prints the
// placeholder (of the same width in x/vt) with the current pen and
// hyperlink, then the cell's content is set to content.
func (f *xtermFront) printCell(content string, w int, placeholder string) {
	cols := f.emu.Width()
	pos := f.emu.CursorPosition()
	wrap := pendingWrap(f.emu)
	wrapped := -1 // the row a wide character did not fit on
	if w == 2 && !wrap && pos.X == cols-1 {
		if f.noWrap {
			f.join = 0
			return // xterm.js drops a wide character that cannot fit
		}
		f.forward("\r\n") // xterm.js wraps before it
		next := f.emu.CursorPosition()
		wrapped = pos.Y
		if next.Y == pos.Y { // the line feed scrolled
			wrapped--
		}
		pos, wrap = next, false
	}
	if f.insert && wrap && !f.noWrap {
		// xterm.js wraps first and inserts on the next row; x/vt would
		// insert at the last column
		f.forward("\r\n")
		pos, wrap = f.emu.CursorPosition(), false
	}
	if f.insert {
		f.forward("\x1b[" + strconv.Itoa(w) + "@")
	}
	f.forward(placeholder)
	after := f.emu.CursorPosition()
	x := pos.X
	if wrap && !f.noWrap {
		x = 0
	}
	c := f.emu.CellAt(x, after.Y)
	if c == nil {
		return
	}
	cell := *c
	cell.Content, cell.Width = content, w
	if w == 2 && x == cols-2 && !f.noWrap {
		// x/vt leaves the cursor on the wide character's second half
		// with no wrap pending; printing there sets the pending wrap,
		// and the wide cell is put back over what was printed.
		f.forward("x")
	}
	f.emu.SetCell(x, after.Y, &cell)
	if wrapped >= 0 {
		// xterm.js fills the cell the wide character did not fit in
		// with the current pen (the placeholder was printed with it)
		f.emu.SetCell(cols-1, wrapped, &uv.Cell{Content: " ", Width: 1, Style: c.Style, Link: c.Link})
	}
	f.join, f.last, f.lastWidth = w, content, w
	f.pastEnd = f.noWrap && x+w == cols
}

// asciiString holds the one-byte strings, so remembering the last ASCII
// character printed costs no allocation.
var asciiString = func() (t [128]string) {
	for i := range t {
		t[i] = string(rune(i))
	}
	return t
}()

// attach adds a zero-width character to the cell before the cursor (the
// cell under it while a wrap is pending), as xterm.js does.
func (f *xtermFront) attach(mark string) {
	pos := f.emu.CursorPosition()
	x := pos.X
	if !pendingWrap(f.emu) && !f.pastEnd {
		x--
	}
	f.last += mark
	if c := f.emu.CellAt(x, pos.Y); x > 0 && c != nil && c.Width == 0 && c.Content == "" {
		x-- // the second half of a wide character
	}
	c := f.emu.CellAt(x, pos.Y)
	if x < 0 || c == nil {
		return
	}
	cell := *c
	if cell.Content == "" {
		cell.Content = " "
	}
	cell.Content += mark
	f.emu.SetCell(x, pos.Y, &cell)
}

// repeat applies REP as xterm.js does: the last printed cell is printed
// again n times, and nothing happens unless the sequence follows a
// printed character directly. (x/vt would repeat the placeholders.)
func (f *xtermFront) repeat(body []byte, join int) {
	if join == 0 || f.last == "" {
		return
	}
	n, err := strconv.Atoi(string(body))
	if err != nil || n > 1<<16 {
		n = 1 << 16
	}
	n = max(n, 1)
	content, w := f.last, f.lastWidth
	for range n {
		if len(content) == 1 && !f.insert && !f.noWrap {
			f.out = append(f.out, content...)
			continue
		}
		f.flush()
		placeholder := "x"
		if w == 2 {
			placeholder = "\u3000"
		}
		f.printCell(content, w, placeholder)
	}
	f.join = 0
}

// xtermWidth is xterm.js's width of r (U+00A0 and up): 0, 1 or 2.
func xtermWidth(r rune) int {
	if inRanges(r, xtermZeroWidth) {
		return 0
	}
	if inRanges(r, xtermWide) {
		return 2
	}
	return 1
}

func inRanges(r rune, ranges [][2]rune) bool {
	_, found := slices.BinarySearchFunc(ranges, r, func(rg [2]rune, r rune) int {
		switch {
		case rg[1] < r:
			return -1
		case rg[0] > r:
			return 1
		}
		return 0
	})
	return found
}
