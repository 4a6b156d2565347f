package capture

import (
	"bytes"
	"slices"
	"strconv"
	"unicode/utf8"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/vt"
)

// xtermFront sits in front of the x/vt emulator and makes its screen match
// xterm.js (the viewer's renderer) where x/vt v0.1.0 differs, as measured
// by the conformance corpus (conformance_test.go). It is hand-written
// because no emulator library for Go follows xterm.js: it tokenizes the
// stream just enough to find escape sequences and characters, forwards
// everything else to x/vt unchanged in as few writes as possible, and
// handles these itself:
//
//   - characters other than ASCII: widths are xterm.js's (its default
//     Unicode 6 tables, render_widths.go, not x/vt's grapheme widths), a
//     zero-width character joins the cell before it (also across writes)
//     as xterm.js does instead of forming grapheme clusters, and a wide
//     character that does not fit in the last column wraps first;
//   - IRM insert mode for printed characters (x/vt ignores it);
//   - REP repeats the last printed cell (x/vt would repeat placeholders);
//   - SD fills the new rows with default attributes, a 0 count means 1
//     (CNL and others), cursor visibility is one flag for both buffers,
//     and a newly entered alternate screen is cleared with the pen's
//     background;
//   - IND and NEL (ESC D, ESC E), DECALN (ESC # 8), SCOSC/SCORC (CSI s,
//     CSI u without parameters; CSI s with parameters too, and DECLRMM
//     (?69) is ignored: xterm.js has no left/right margins);
//   - ED 1 (x/vt erases the whole cursor row), ED 2 (x/vt erases without
//     the pen's background);
//   - EL 0 while a wrap is pending (xterm.js keeps the last cell);
//   - DECSTBM bottom margins past the screen (x/vt panics on them later);
//   - tab stops are kept per buffer, as xterm.js does;
//   - alternate screens 47/1047/1049 keep the cursor where it was, leaving
//     1049 restores the saved cursor even when the normal screen was
//     active, and DECOM homes the cursor when switched.
type xtermFront struct {
	emu     *vt.Emulator
	out     []byte // bytes waiting to be forwarded unchanged
	state   int
	seq     []byte // the escape sequence being read (bounded)
	partial []byte // an incomplete UTF-8 character at the end of a write
	join    int    // width of the last printed cell when a zero-width character may join it, else 0
	insert  bool   // IRM
	noWrap  bool   // DECAWM reset
	// pastEnd: with DECAWM reset, the last thing done printed a cell
	// ending at the last column; xterm.js's cursor is then past it.
	pastEnd bool
	hidden  bool // DECTCEM reset: one flag for both buffers, as in xterm.js
	// region is the scroll region rows [top, bottom) of the normal and
	// the alternate buffer; bottom 0 means the last row.
	region [2][2]int
	// tabs are the tab stops of the normal and the alternate buffer, nil
	// while they are the default ones (every 8 columns).
	tabs [2][]bool
	// last is the last printed cell's content and width, for REP.
	last      string
	lastWidth int
	// plainFrom is where the run of plain text at the end of out begins
	// (render_fastforward.go): out[plainFrom:] holds only characters, CR,
	// LF and SGR sequences read in the ground state.
	plainFrom int
	scrolls   []cursorState // skipPlain's scratch space
	sgrs      [][2]int      // skipPlain's SGR sequences of the run: [start, end)
	// fastForward enables skipping plain text that scrolls away
	// (render_fastforward.go); off, the emulator reads every byte.
	fastForward bool
	skipped     int // bytes fast-forwarded so far
	// desync: an overlong sequence was forwarded unfinished, so x/vt's
	// parser may read what follows as part of it; plain text is never
	// fast-forwarded after that.
	desync bool
}

// Tokenizer states, as in the VT500 parser that xterm.js and x/vt follow.
const (
	stGround = iota
	stEsc
	stCSI
	stString // OSC, DCS, SOS, PM, APC: up to BEL, CAN, SUB or ESC
)

// maxSeq bounds a buffered escape sequence; a longer one is forwarded as
// it is (x/vt's parser bounds it too).
const maxSeq = 64

func (f *xtermFront) write(p []byte) {
	if len(f.partial) > 0 {
		p = append(f.partial, p...)
		f.partial = nil
	}
	for i := 0; i < len(p); {
		b := p[i]
		plain := false // this byte extends the run of plain text in out
		switch f.state {
		case stGround:
			switch {
			case b == 0x1b:
				// join is reset once the sequence is complete: REP needs it
				f.state, f.seq = stEsc, append(f.seq[:0], b)
				f.pastEnd = false
				i++
			case b < 0x20 || b == 0x7f:
				f.out = append(f.out, b)
				f.join, f.pastEnd = 0, false
				plain = b == '\r' || b == '\n'
				i++
			case b < 0x80:
				if f.insert || f.noWrap {
					f.flush()
					f.printCell(string(rune(b)), 1, string(rune(b)))
				} else {
					// a run of printable ASCII, CR and LF goes out as it is
					j := i + 1
					for j < len(p) && plainByte(p[j]) {
						j++
					}
					f.out = append(f.out, p[i:j]...)
					f.asciiRun(p[i:j])
					plain = true
					i = j
					continue
				}
				i++
			default:
				if !utf8.FullRune(p[i:]) {
					f.partial = append([]byte(nil), p[i:]...)
					i = len(p)
					continue
				}
				r, n := utf8.DecodeRune(p[i:])
				f.char(r, p[i:i+n])
				i += n
			}
		case stEsc:
			f.seq = append(f.seq, b)
			i++
			switch {
			case b == '[':
				f.state = stCSI
			case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
				f.state, f.join = stString, 0
				f.out, f.seq = append(f.out, f.seq...), f.seq[:0]
			case b >= 0x20 && b < 0x30 && len(f.seq) < maxSeq: // intermediate
			case b >= 0x20 && b < 0x30: // overlong: x/vt still waits for a final byte
				f.state, f.desync = stGround, true
				f.escape()
			case b == 0x18 || b == 0x1a:
				f.state, f.join = stGround, 0
				f.out = append(f.out, f.seq...)
			case b == 0x1b:
				f.out = append(f.out, f.seq[:len(f.seq)-1]...)
				f.seq = append(f.seq[:0], b)
			default:
				f.state = stGround
				f.escape()
			}
		case stCSI:
			i++
			switch {
			case b >= 0x40 && b <= 0x7e:
				f.seq = append(f.seq, b)
				f.state = stGround
				f.csi()
				plain = isSGR(f.seq) // forwarded as it is: it only sets the pen
			case b == 0x1b:
				f.out = append(f.out, f.seq...)
				f.state, f.seq = stEsc, append(f.seq[:0], b)
			case b == 0x18 || b == 0x1a || len(f.seq) >= maxSeq:
				f.out = append(f.out, f.seq...)
				f.out = append(f.out, b)
				f.state, f.join = stGround, 0
				f.desync = f.desync || len(f.seq) >= maxSeq
			default:
				f.seq = append(f.seq, b)
			}
		case stString:
			// Strings pass through; only their end matters. BEL, CAN and
			// SUB end one; so does ESC, which starts the next sequence (ST,
			// ESC \, is one), as in xterm.js and x/vt.
			j := i
			for j < len(p) && f.state == stString {
				switch p[j] {
				case 0x07, 0x18, 0x1a:
					f.state = stGround
					j++
				case 0x1b:
					f.state = stGround
				default:
					j++
				}
			}
			f.out = append(f.out, p[i:j]...)
			i = j
		}
		if !plain && f.state != stEsc && f.state != stCSI { // a sequence still being read is not in out
			f.plainFrom = len(f.out)
		}
	}
	f.flush()
}

// asciiRun notes what run, printable ASCII (its first byte) then any
// printable ASCII, CR and LF, leaves behind: the last printed cell (for
// REP and a joining zero-width character) unless a CR or LF ends it.
func (f *xtermFront) asciiRun(run []byte) {
	for k := len(run) - 1; k >= 0; k-- {
		if b := run[k]; b != '\r' && b != '\n' {
			f.last, f.lastWidth = asciiString[b], 1
			break
		}
	}
	f.join = 1
	if end := run[len(run)-1]; end == '\r' || end == '\n' {
		f.join = 0
	}
	if bytes.ContainsAny(run, "\r\n") {
		f.pastEnd = false
	}
}

// flush forwards the bytes held so far, so the emulator's state is current.
// The run of plain text at their end may be fast-forwarded (writePlain).
func (f *xtermFront) flush() {
	if len(f.out) == 0 {
		return
	}
	from := min(f.plainFrom, len(f.out))
	if !isPlainRun(f.out[from:]) {
		from = len(f.out) // held by a fix-up mid-token: not a run of text
	}
	if from > 0 {
		f.emu.Write(f.out[:from]) //nolint:errcheck // never fails while open
	}
	if from < len(f.out) {
		f.writePlain(f.out[from:])
	}
	f.out, f.plainFrom = f.out[:0], 0
}

// forward writes s to the emulator after everything held so far.
func (f *xtermFront) forward(s string) {
	f.flush()
	f.emu.Write([]byte(s)) //nolint:errcheck // never fails while open
}

// escape handles a complete ESC sequence in f.seq.
func (f *xtermFront) escape() {
	f.join = 0
	switch string(f.seq) {
	case "\x1bD": // IND
		f.out = append(f.out, '\n')
	case "\x1bE": // NEL
		f.out = append(f.out, "\r\n"...)
	case "\x1bH": // HTS
		f.out = append(f.out, f.seq...)
		f.setTab(true, false)
	case "\x1b#8": // DECALN
		f.flush()
		cols, rows := f.emu.Width(), f.emu.Height()
		for y := range rows {
			for x := range cols {
				f.emu.SetCell(x, y, &uv.Cell{Content: "E", Width: 1})
			}
		}
		f.forward("\x1b[r\x1b[H")
		f.region[f.buffer()] = [2]int{}
	case "\x1bc": // RIS
		f.insert, f.noWrap, f.hidden = false, false, false
		f.region = [2][2]int{}
		f.tabs = [2][]bool{}
		f.out = append(f.out, f.seq...)
	default:
		f.out = append(f.out, f.seq...)
	}
}

// csi handles a complete CSI sequence in f.seq.
func (f *xtermFront) csi() {
	join := f.join
	f.join = 0
	body := f.seq[2 : len(f.seq)-1]
	final := f.seq[len(f.seq)-1]
	private := len(body) > 0 && body[0] == '?'
	if final == 'K' {
		f.flush() // pendingWrap reads the emulator
	}
	if len(body) == 1 && body[0] == '0' && bytes.IndexByte([]byte("@ABCDEFGILMPSTXZ`abde"), final) >= 0 {
		body = []byte{'1'} // xterm.js counts a 0 as 1; x/vt does not everywhere
		f.seq = append(f.seq[:2], '1', final)
	}
	switch {
	case final == 'b' && !slices.ContainsFunc(body, func(c byte) bool { return c < '0' || c > '9' }):
		f.repeat(body, join)
	case string(f.seq) == "\x1b[!p": // DECSTR
		f.insert, f.noWrap, f.hidden = false, false, false
		f.region[f.buffer()] = [2]int{}
		f.out = append(f.out, f.seq...)
	case final == 's' && !slices.ContainsFunc(body, func(c byte) bool { return (c < '0' || c > '9') && c != ';' }):
		// xterm.js has no left/right margins: CSI s saves the cursor
		// whatever its parameters (x/vt would set DECSLRM margins, and
		// crashes on a right margin past the screen)
		f.out = append(f.out, "\x1b7"...)
	case final == 'u' && len(body) == 0:
		f.out = append(f.out, "\x1b8"...)
	case final == 'J' && string(body) == "1":
		f.flush()
		pos, wrap := f.emu.CursorPosition(), pendingWrap(f.emu)
		f.out = append(f.out, "\x1b[1K"...)
		if pos.Y > 0 {
			// x/vt's ED 1 erases the cursor row too: apply it to the row above
			f.out = append(f.out, "\x1b["+strconv.Itoa(pos.Y)+"H\x1b[1J"...)
			f.moveTo(pos, wrap)
		}
	case final == 'J' && string(body) == "2":
		// x/vt's ED 2 ignores the pen's background; its ED 0 does not
		f.flush()
		pos, wrap := f.emu.CursorPosition(), pendingWrap(f.emu)
		f.out = append(f.out, "\x1b[H\x1b[J"...)
		f.moveTo(pos, wrap)
	case final == 'K' && (len(body) == 0 || string(body) == "0") && pendingWrap(f.emu):
		// xterm.js's cursor is past the last cell: nothing to erase
	case final == 'h' || final == 'l':
		f.modes(body, private, final == 'h')
	case final == 'g' && (len(body) == 0 || string(body) == "0" || string(body) == "3"):
		f.out = append(f.out, f.seq...)
		f.setTab(false, string(body) == "3")
	case final == 'T' && !slices.ContainsFunc(body, func(c byte) bool { return c < '0' || c > '9' }):
		f.scrollDown(body)
	case final == 'r' && !slices.ContainsFunc(body, func(c byte) bool { return (c < '0' || c > '9') && c != ';' && c != ':' }):
		f.margins(dropSubParams(body))
	default:
		f.out = append(f.out, f.seq...)
	}
}

// margins applies DECSTBM as xterm.js does: a missing, zero or too large
// bottom is the last row, and margins that leave no region are ignored.
// x/vt takes a bottom past the screen and then panics when it scrolls.
func (f *xtermFront) margins(body []byte) {
	params := bytes.Split(body, []byte{';'})
	num := func(i int) int {
		if i >= len(params) || len(params[i]) == 0 {
			return 0
		}
		n, err := strconv.Atoi(string(params[i]))
		if err != nil || n > 1<<16 {
			return 1 << 16
		}
		return n
	}
	rows := f.emu.Height()
	top, bottom := max(num(0), 1), num(1)
	if len(params) < 2 || bottom == 0 || bottom > rows {
		bottom = rows
	}
	if bottom > top {
		f.out = append(f.out, "\x1b["+strconv.Itoa(top)+";"+strconv.Itoa(bottom)+"r"...)
		f.region[f.buffer()] = [2]int{top - 1, bottom}
	}
}

// dropSubParams removes the sub-parameters (":n" parts) from a CSI
// parameter list: xterm.js's DECSTBM reads only the parameters, while x/vt
// would read "CSI :7 r" as a bottom margin of 7 (past a small screen, and
// it panics on that later).
func dropSubParams(body []byte) []byte {
	if bytes.IndexByte(body, ':') < 0 {
		return body
	}
	var out []byte
	for i, p := range bytes.Split(body, []byte{';'}) {
		if i > 0 {
			out = append(out, ';')
		}
		if j := bytes.IndexByte(p, ':'); j >= 0 {
			p = p[:j]
		}
		out = append(out, p...)
	}
	return out
}

// scrollDown applies SD: x/vt fills the new rows with the pen's
// background, xterm.js with default attributes (unlike its SU).
func (f *xtermFront) scrollDown(body []byte) {
	f.out = append(f.out, f.seq...)
	f.flush()
	n, err := strconv.Atoi(string(body))
	if err != nil || n < 1 {
		n = 1
	}
	cols, rows := f.emu.Width(), f.emu.Height()
	m := f.region[f.buffer()]
	top, bottom := m[0], m[1]
	if bottom == 0 || bottom > rows {
		top, bottom = 0, rows
	}
	for y := top; y < top+min(n, bottom-top); y++ {
		for x := range cols {
			f.emu.SetCell(x, y, &uv.EmptyCell)
		}
	}
}

// cup is the CUP sequence that moves the cursor to pos (no origin mode).
func cup(pos uv.Position) string {
	return "\x1b[" + strconv.Itoa(pos.Y+1) + ";" + strconv.Itoa(pos.X+1) + "H"
}
