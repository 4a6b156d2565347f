package capture

import (
	"image/color"
	"strconv"
	"strings"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// serializeScreen writes the escape-sequence stream of a rendered frame's
// serialized_state: written to an xterm.js terminal of the same size, it
// makes that terminal show the emulator's visible screen.
//
// It is hand-written because no Go library produces it: x/vt's Render and
// ultraviolet's buffer rendering emit the styled text of the rows only
// (no alternate buffer, no cursor, no pending wrap, and a line break
// between rows that scrolls when the screen is full), and xterm.js's own
// SerializeAddon is JavaScript.
//
// Restored: the active buffer (the alternate one is entered with 1049),
// every cell's grapheme (wide characters, combining marks), its SGR
// attributes (bold, faint, italic, underline and its style, blink,
// inverse, invisible, strikethrough), foreground, background and underline
// colours (16, 256 and truecolor), OSC 8 hyperlinks, blank cells with a
// background colour (erased, as xterm.js erases them), the cursor position
// including a pending wrap at the last column, autowrap (DECAWM) when it
// is off, and cursor visibility.
//
// Not restored (the emulator does not expose them, or they are not part
// of the screen): scrollback, the normal buffer beneath an active
// alternate one, the current pen, terminal modes other than the three
// above, scroll margins, tab stops, character sets, the saved cursor, the
// title and colour palette changes. Which rows were soft-wrapped is not
// restored either, so selecting text across them copies a line break.
//
// The stream starts with RIS (ESC c), so it also works on a terminal that
// already shows something.
func serializeScreen(b *strings.Builder, e *vt.Emulator, pendingWrap, noAutowrap, cursorHidden bool) {
	cols, rows := e.Width(), e.Height()
	b.WriteString("\x1bc")
	if e.IsAltScreen() {
		b.WriteString("\x1b[?1049h")
	}
	var pen uv.Style // the style last written, starting from RIS's default
	var link uv.Link
	px, py := 0, 0 // where xterm.js's cursor is; px == cols: wrap pending
	for y := range rows {
		end := lastSignificant(e, y, cols)
		if end < 0 {
			continue
		}
		if px != 0 || py != y {
			b.WriteString("\x1b[" + strconv.Itoa(y+1) + "H")
		}
		px, py = 0, y
		for x := 0; x < end; {
			// A wide character's second half is stepped over below; an
			// empty cell met here is one left alone by an insert or
			// delete, and shows as a blank.
			c := cellAt(e, x, y)
			if blank(c) {
				n := 1
				for x+n < end {
					d := cellAt(e, x+n, y)
					if !blank(d) || !d.Style.Equal(&c.Style) || !d.Link.Equal(&c.Link) {
						break
					}
					n++
				}
				if writeBlanks(b, &pen, &link, c, n, x+n < end) {
					px = x + n
				}
				x += n
				continue
			}
			setStyle(b, &pen, c.Style)
			setLink(b, &link, c.Link)
			if c.Content == "" {
				b.WriteByte(' ') // an empty cell with attributes
			} else {
				b.WriteString(c.Content)
			}
			x += max(c.Width, 1)
			px = min(x, cols)
		}
	}
	setLink(b, &link, uv.Link{})
	if !pen.IsZero() {
		b.WriteString("\x1b[0m")
	}
	pos := e.CursorPosition()
	switch {
	case pendingWrap && pos.X == cols-1 && px == cols && py == pos.Y:
		// the last cell painted left the cursor waiting to wrap, as it is
	case pendingWrap && pos.X == cols-1 && writeLastCell(b, e, pos.Y, cols):
		// writing the cell at the last column again leaves the cursor
		// where the original was: past it, waiting to wrap
	case px == pos.X && py == pos.Y:
	default:
		b.WriteString("\x1b[" + strconv.Itoa(pos.Y+1) + ";" + strconv.Itoa(pos.X+1) + "H")
	}
	if noAutowrap {
		b.WriteString("\x1b[?7l")
	}
	if cursorHidden {
		b.WriteString("\x1b[?25l")
	}
}

// blank reports whether c shows nothing but its background: a space (or
// an empty cell) with no foreground, attribute, underline or link.
func blank(c *uv.Cell) bool {
	s := c.Style
	return (c.Content == " " || c.Content == "") && s.Fg == nil && s.UnderlineColor == nil &&
		s.Underline == uv.UnderlineNone && s.Attrs == 0 && c.Link.IsZero()
}

// lastSignificant returns the column after the last cell of row y that
// differs from a cleared cell, or -1 when the whole row is clear.
func lastSignificant(e *vt.Emulator, y, cols int) int {
	for x := cols - 1; x >= 0; x-- {
		c := cellAt(e, x, y)
		if blank(c) && c.Style.Bg == nil {
			continue
		}
		return min(x+max(c.Width, 1), cols)
	}
	return -1
}

// cellAt is the emulator's cell at x, y, or a blank one when there is none.
func cellAt(e *vt.Emulator, x, y int) *uv.Cell {
	if c := e.CellAt(x, y); c != nil {
		return c
	}
	return &uv.EmptyCell
}

// writeBlanks reproduces n blank cells like c. Without a background they
// are skipped over (CUF) or written as spaces when that is shorter; with
// one they are erased with that background (ECH), which is how xterm.js
// leaves cells that were cleared while a background colour was set. more
// says whether cells follow on the row; it reports whether the cursor was
// moved past the blanks.
func writeBlanks(b *strings.Builder, pen *uv.Style, link *uv.Link, c *uv.Cell, n int, more bool) bool {
	setLink(b, link, uv.Link{})
	if c.Style.Bg == nil {
		switch {
		case n < 4:
			setStyle(b, pen, uv.Style{})
			b.WriteString(strings.Repeat(" ", n))
		case more:
			b.WriteString("\x1b[" + strconv.Itoa(n) + "C")
		default:
			return false
		}
		return true
	}
	setStyle(b, pen, uv.Style{Bg: c.Style.Bg})
	b.WriteString("\x1b[" + strconv.Itoa(n) + "X")
	if more {
		b.WriteString("\x1b[" + strconv.Itoa(n) + "C")
	}
	return more
}

// writeLastCell positions the cursor on the cell covering the last column
// of row y and writes that cell again, which leaves xterm.js in the
// pending-wrap state. It reports false when there is no such cell.
func writeLastCell(b *strings.Builder, e *vt.Emulator, y, cols int) bool {
	for x := cols - 1; x >= 0 && x >= cols-2; x-- {
		c := e.CellAt(x, y)
		if c == nil || c.Width == 0 && c.Content == "" {
			continue
		}
		if x+max(c.Width, 1) != cols {
			return false
		}
		b.WriteString("\x1b[" + strconv.Itoa(y+1) + ";" + strconv.Itoa(x+1) + "H")
		var pen uv.Style
		var link uv.Link
		setStyle(b, &pen, c.Style)
		setLink(b, &link, c.Link)
		if c.Content == "" {
			b.WriteByte(' ')
		} else {
			b.WriteString(c.Content)
		}
		setLink(b, &link, uv.Link{})
		if !pen.IsZero() {
			b.WriteString("\x1b[0m")
		}
		return true
	}
	return false
}

// setStyle switches the pen to s with one SGR sequence that starts from a
// reset, so no attribute of the previous pen can leak.
func setStyle(b *strings.Builder, pen *uv.Style, s uv.Style) {
	if pen.Equal(&s) {
		return
	}
	*pen = s
	b.WriteString("\x1b[0")
	attrs := []struct {
		bit  uint8
		code string
	}{
		{uv.AttrBold, ";1"}, {uv.AttrFaint, ";2"}, {uv.AttrItalic, ";3"}, {uv.AttrBlink, ";5"},
		{uv.AttrRapidBlink, ";6"}, {uv.AttrReverse, ";7"}, {uv.AttrConceal, ";8"}, {uv.AttrStrikethrough, ";9"},
	}
	for _, a := range attrs {
		if s.Attrs&a.bit != 0 {
			b.WriteString(a.code)
		}
	}
	switch s.Underline {
	case uv.UnderlineNone:
	case uv.UnderlineSingle:
		b.WriteString(";4")
	default:
		b.WriteString(";4:" + strconv.Itoa(int(s.Underline)))
	}
	writeColor(b, s.Fg, 30, 90, "38")
	writeColor(b, s.Bg, 40, 100, "48")
	writeColor(b, s.UnderlineColor, -1, -1, "58")
	b.WriteByte('m')
}

// writeColor appends the SGR parameters of c: the 16 basic colours as
// base+n (or bright+n-8), an indexed colour as ext;5;n and any other
// colour as ext;2;r;g;b. A basic colour has no short form for the
// underline (base < 0) and is written as an indexed one.
func writeColor(b *strings.Builder, c color.Color, base, bright int, ext string) {
	switch c := c.(type) {
	case nil:
	case ansi.BasicColor:
		switch {
		case base < 0:
			b.WriteString(";" + ext + ";5;" + strconv.Itoa(int(c)))
		case c < 8:
			b.WriteString(";" + strconv.Itoa(base+int(c)))
		default:
			b.WriteString(";" + strconv.Itoa(bright+int(c)-8))
		}
	case ansi.IndexedColor:
		b.WriteString(";" + ext + ";5;" + strconv.Itoa(int(c)))
	default:
		r, g, bl, _ := c.RGBA()
		b.WriteString(";" + ext + ";2;" + strconv.Itoa(int(r>>8)) + ";" + strconv.Itoa(int(g>>8)) + ";" + strconv.Itoa(int(bl>>8)))
	}
}

// setLink switches the current OSC 8 hyperlink to l.
func setLink(b *strings.Builder, cur *uv.Link, l uv.Link) {
	if cur.Equal(&l) {
		return
	}
	*cur = l
	b.WriteString("\x1b]8;" + l.Params + ";" + l.URL + "\x1b\\")
}
