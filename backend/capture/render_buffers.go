package capture

import (
	"bytes"
	"slices"
	"strings"

	uv "github.com/charmbracelet/ultraviolet"
)

// Modes, the two buffers and tab stops as xterm.js keeps them (see
// xtermFront).

// modes applies SM/RM (and their DEC private forms) one parameter at a time.
func (f *xtermFront) modes(body []byte, private bool, set bool) {
	params := body
	prefix := "\x1b["
	if private {
		params, prefix = body[1:], "\x1b[?"
	}
	if slices.ContainsFunc(params, func(c byte) bool { return (c < '0' || c > '9') && c != ';' }) {
		f.out = append(f.out, f.seq...)
		return
	}
	end := "l"
	if set {
		end = "h"
	}
	for _, p := range bytes.Split(params, []byte{';'}) {
		seq := prefix + string(p) + end
		switch {
		case !private && string(p) == "4":
			f.insert = set
			f.out = append(f.out, seq...)
		case private && string(p) == "7":
			f.noWrap = !set
			f.out = append(f.out, seq...)
		case private && string(p) == "25":
			f.hidden = !set
			f.out = append(f.out, seq...)
		case private && string(p) == "1049" && !set && !f.isAlt():
			f.out = append(f.out, "\x1b8"...) // xterm.js restores the cursor even so
		case private && (string(p) == "47" || string(p) == "1047" || string(p) == "1049"):
			f.flush()
			pos, wrap := f.emu.CursorPosition(), pendingWrap(f.emu)
			wasAlt := f.emu.IsAltScreen()
			var pen uv.Style
			var link uv.Link
			if string(p) != "1049" {
				pen, link = f.pen(pos, wrap) // 47 and 1047 keep the pen in xterm.js
			}
			if string(p) == "47" {
				seq = "\x1b[?1047" + end
			}
			f.forward(seq)
			if set && !wasAlt {
				f.fillAlternate()
			}
			if f.emu.IsAltScreen() != wasAlt {
				f.loadTabs()
			}
			if set || string(p) != "1049" { // leaving 1049 restores the saved cursor
				f.moveTo(pos, wrap)
			}
			if string(p) != "1049" {
				var b strings.Builder
				var none uv.Style
				var noLink uv.Link
				setStyle(&b, &none, pen)
				setLink(&b, &noLink, link)
				f.forward(b.String())
			}
		case private && string(p) == "69":
			// DECLRMM: xterm.js has no left/right margins, so x/vt must not
			// get them either
		case private && string(p) == "6":
			f.out = append(f.out, seq...)
			f.out = append(f.out, "\x1b[H"...)
		default:
			f.out = append(f.out, seq...)
		}
	}
}

// isAlt reports whether the alternate screen is active, after what is held.
func (f *xtermFront) isAlt() bool {
	f.flush()
	return f.emu.IsAltScreen()
}

// buffer is 1 while the alternate screen is active, else 0.
func (f *xtermFront) buffer() int {
	if f.isAlt() {
		return 1
	}
	return 0
}

// fillAlternate clears a newly entered alternate screen with the pen's
// background, as xterm.js does (x/vt clears it with none). The background
// is read from a cell erased with it (ECH).
func (f *xtermFront) fillAlternate() {
	f.forward("\x1b[X")
	pos := f.emu.CursorPosition()
	c := f.emu.CellAt(pos.X, pos.Y)
	if c == nil || c.Style.Bg == nil {
		return
	}
	blank := uv.Cell{Content: " ", Width: 1, Style: uv.Style{Bg: c.Style.Bg}}
	for y := range f.emu.Height() {
		for x := range f.emu.Width() {
			f.emu.SetCell(x, y, &blank)
		}
	}
}

// pen reads the emulator's current pen and hyperlink, which x/vt does not
// expose, by printing a character at the cursor and reading its cell; the
// row and the cursor (at pos, with its pending wrap) are then put back.
func (f *xtermFront) pen(pos uv.Position, wrap bool) (uv.Style, uv.Link) {
	cols := f.emu.Width()
	row := make([]uv.Cell, cols)
	for x := range cols {
		if c := f.emu.CellAt(x, pos.Y); c != nil {
			row[x] = *c
		} else {
			row[x] = uv.EmptyCell
		}
	}
	x := min(pos.X, cols-1)
	f.forward(cup(uv.Pos(x, pos.Y)) + "x")
	var pen uv.Style
	var link uv.Link
	if c := f.emu.CellAt(x, pos.Y); c != nil {
		pen, link = c.Style, c.Link
	}
	for x, c := range row {
		if c.Width == 0 && c.Content == "" && x > 0 && row[x-1].Width > 1 {
			continue // set with the wide cell before it
		}
		f.emu.SetCell(x, pos.Y, &c)
	}
	f.moveTo(pos, wrap)
	return pen, link
}

// moveTo puts the cursor back at pos after a fix-up moved it, with the
// pending wrap it had: a space is printed at the last column to set it,
// and the cell that was there is put back.
func (f *xtermFront) moveTo(pos uv.Position, wrap bool) {
	f.flush()
	f.place(pos, wrap && !f.insert)
}

// place moves the emulator's cursor to pos, with a pending wrap when wrap
// is set (a space printed at the last column, its cell then put back),
// writing straight to the emulator: nothing may be held.
func (f *xtermFront) place(pos uv.Position, wrap bool) {
	f.emu.Write([]byte(cup(pos))) //nolint:errcheck // never fails while open
	if !wrap {
		return
	}
	c := f.emu.CellAt(pos.X, pos.Y)
	if c == nil {
		return
	}
	cell := *c
	f.emu.Write([]byte{' '}) //nolint:errcheck // never fails while open
	f.emu.SetCell(pos.X, pos.Y, &cell)
}

// setTab records HTS (set) or TBC (clear the stop at the cursor, or all)
// in the active buffer's stops; the emulator has already applied it.
func (f *xtermFront) setTab(set, all bool) {
	f.flush()
	b := f.buffer()
	cols := f.emu.Width()
	if f.tabs[b] == nil {
		f.tabs[b] = defaultTabs(cols)
	}
	if all {
		clear(f.tabs[b])
		return
	}
	if x := f.emu.CursorPosition().X; x < len(f.tabs[b]) && !pendingWrap(f.emu) {
		f.tabs[b][x] = set
	}
}

// loadTabs gives the emulator, which keeps one set of tab stops, those of
// the buffer just made active.
func (f *xtermFront) loadTabs() {
	if f.tabs[0] == nil && f.tabs[1] == nil {
		return // both default: nothing differs
	}
	stops := f.tabs[f.buffer()]
	cols := f.emu.Width()
	if stops == nil {
		stops = defaultTabs(cols)
	}
	pos, wrap := f.emu.CursorPosition(), pendingWrap(f.emu)
	var b strings.Builder
	b.WriteString("\x1b[3g")
	for x, on := range stops {
		if on && x < cols {
			b.WriteString(cup(uv.Pos(x, pos.Y)) + "\x1bH")
		}
	}
	f.forward(b.String())
	f.moveTo(pos, wrap)
}

// resized keeps the tab stops over a resize as xterm.js does (stops kept,
// default stops for new columns) and gives the emulator, which resets them,
// the active buffer's.
func (f *xtermFront) resized(cols int) {
	f.region = [2][2]int{} // resizing resets the scroll regions
	for b, stops := range f.tabs {
		if stops == nil {
			continue
		}
		grown := defaultTabs(cols)
		copy(grown, stops)
		f.tabs[b] = grown
	}
	f.loadTabs()
}

// defaultTabs are the stops every 8 columns.
func defaultTabs(cols int) []bool {
	t := make([]bool, cols)
	for x := 0; x < cols; x += 8 {
		t[x] = true
	}
	return t
}
