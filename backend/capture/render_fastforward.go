package capture

import (
	"encoding/binary"
	"strings"
)

// The fast-forward over plain text that scrolls out of xterm.js's buffer,
// decided where the bytes are read: the bytes a cut replaces are never
// sent to the renderer helper.
//
// A command that prints megabytes of plain lines (a build log, `yes`, a
// test runner) would make xterm.js parse every byte although all but the
// last few thousand lines leave its buffer (the visible rows plus the
// scrollback) before the next frame is read. The fast-forward replaces
// those bytes with a few that leave xterm.js in exactly the state it
// would have reached by parsing them: the same buffer, scrollback
// included, cell for cell, the same cursor, pen, modes and parser state.
//
// A plain run is a sequence of bytes from the printable ASCII range
// (0x20–0x7e), LF and CR, written while xterm.js's own state says (ready,
// frontend/renderer/fastforward.mjs): the normal buffer is active, the
// parser is in its ground state with no partial UTF-8 character, the
// scroll region is the whole screen, autowrap is on, LF does not return
// the carriage, no character set maps ASCII to other characters, no
// hyperlink is open, and the cursor column is at most the column count.
// Inside such a run, xterm.js only prints one-column characters with the
// current pen, moves the cursor down (scrolling at the bottom row), and
// sets the column; nothing moves the cursor up. So, with C columns, R rows
// and S lines of scrollback:
//
//   - after R line feeds the cursor is on the bottom row, and every later
//     line feed scrolls, pushing a fresh blank line (blank in the pen's
//     erase colour, not wrapped) at the bottom;
//   - after a line feed that scrolled, S + R more line feeds push every
//     line that existed before it out of the buffer (S + R lines long
//     once S scrolls happened), so the buffer then holds only lines
//     created after it, which depend on nothing but the cursor column at
//     that line feed and the pen;
//   - the cursor column follows from the bytes alone (advance): a
//     printable character at column C first wraps to column 0, then
//     advances one column; LF moves a pending wrap (column C) back to
//     C - 1; CR goes to column 0.
//
// Hence the cut: once a run holds n ≥ S + 2R line feeds, every byte up to
// and including the (n − S − R)-th line feed (which has at least R before
// it) is replaced by CR, R line feeds (the last of which scrolls, leaving
// the cursor on a fresh bottom line) and a CHA to the column the real bytes
// left the cursor in (the helper's 'c'); the bytes after the cut are sent
// as they came. The S + R line feeds after the cut then push both the real
// and the replaced history out of the buffer. xterm.js's buffer ring then
// has its start moved to where the run's own moves down (line feeds and
// autowraps) would have left it (the helper's 'x', keepRing). A run ends
// at the first other byte, at a resize, a fresh terminal, a statistics
// request or the end of input; a run that cannot be cut is sent in full.
//
// Frames during a run (show): while the run cannot be cut, its bytes are
// sent as they came. Once it can, only the visible rows are made: the
// replacement of everything up to the line feed R line feeds before the
// last (it has at least R line feeds before it, since a cut needs S + 2R,
// so it scrolled) and the bytes after it, or, when fewer, the bytes after
// what the last show sent. The R line feeds after that line feed push
// everything before it out of the visible rows, so they and the cursor
// are exact; the scrollback and the ring are not, but a frame holds only
// the visible rows, and the run's end sends the real cut on top of
// whatever the shows sent (plain bytes and replacements, which leave
// xterm.js's state ready): its S + R line feeds push everything before it
// out of the buffer, and keepRing sets the ring's start from the run's own
// moves: the same state as without any show.
//
// Readiness is xterm.js's to know: the capture knows it for a fresh
// terminal (ready, column 0) and keeps knowing it while it sends plain
// bytes (it computes the column); after any other byte or a resize it
// learns it again from a frame (every frame says whether the state was
// ready and where the cursor was). So that nothing is sent between that
// frame's request and its answer, and the bytes after it can still be
// cut, what follows a frame request made while the state is unknown is held (by
// reference, bounded by maxLearn, never blocking the PTY reader: the
// capture goes on queueing) until its answer: plain text, and once that
// may be cut also other text, resizes and frame requests, in their order;
// the answer then sends it through the runs, or as it came up to the next
// frame request, which holds the rest (plain text can make the state
// ready: it may end a sequence split across writes). The helper checks what it can (a run begun
// in a state that does not allow one, or for another size or column, a
// cut past the last column, other output inside a run) and fails rather
// than render a wrong screen.
//
// The conformance tests (fastforward_test.go) compare every frame and the
// buffer after a later resize, which reflows the scrollback, with an
// independent xterm.js run over all the bytes.

// maxUncut bounds the bytes a run holds before a cut is possible (a very
// long line): past it the run is sent in full and a new one may begin.
const maxUncut = 4 << 20

// maxLearn bounds the bytes held behind a frame's request; past it they
// are sent as they came and nothing is learned from that frame.
const maxLearn = 8 << 20

// plainRun is one run's arithmetic and the bytes it still holds (by
// reference: substrings of the text the capture sent).
type plainRun struct {
	cols, rows, need int // need: line feeds kept after the cut (S + R)
	x                int // the cursor column after the run's bytes
	lfs, wraps       int64
	total            int64   // bytes in the run
	pos              []int64 // for the last need + 1 line feeds: the run offset after each
	col              []uint16
	segs             []string // bytes not dropped yet, in order
	segStart         int64    // run offset of segs[0]
	written          int64    // bytes sent as they came (show, before a cut was possible)
	shown            int64    // run offset up to which show made the visible rows, or -1
}

// fastForward is a screen's fast-forward state (one per screen, used by
// the screen's goroutine).
type fastForward struct {
	cols, rows, scrollback int // the helper's terminal (xterm.js's sizes)
	known                  bool
	x                      int // the cursor column when known
	run                    *plainRun
	rings                  *plainRun // the rings of the last run, reused by the next of the same size

	seq      int // frame requests sent
	answered int // frames answered

	// holding: after a frame request sent while the state was unknown
	// (request holdSeq), the plain text and frame requests that follow
	// are held (the text by reference) until its answer says how to send
	// them: as a run when xterm.js's state was ready, else as they came
	hold      bool
	holdSeq   int
	held      []heldItem
	heldN     int // bytes held
	heldLFs   int // line feeds in the plain text held before anything else
	heldMixed bool

	skipped int64
	cuts    int64
}

// helperSize is the size xterm.js gives a terminal asked for c × r.
func helperSize(c, r int) (int, int) { return max(c, minColumns), max(r, 1) }

// fresh notes a fresh terminal of t's size: ready, in column 0.
func (f *fastForward) fresh(t Terminal) {
	f.cols, f.rows = helperSize(t.Columns, t.Rows)
	f.scrollback = t.Scrollback
	f.known, f.x = true, 0
	f.forget()
}

// forget notes that the state is not the one a frame owed shows, so
// nothing more is held behind it (nothing may be held: release first).
func (f *fastForward) forget() {
	f.hold = false
}

// advance is the cursor column after plain text written from column x on
// a terminal of cols columns, and how many autowraps and line feeds it
// made (see the top of this file). Hand-written: it is the rule itself.
// The line feeds and carriage returns are found with strings.IndexByte;
// the column is computed per line, not per byte. each, when not nil, is
// called after every line feed with the offset after it and the column.
func advance(text string, x, cols int, each func(off int, x int)) (int, int64, int64) {
	var wraps, lfs int64
	i := 0
	for i <= len(text) {
		lf := strings.IndexByte(text[i:], '\n')
		end := len(text)
		if lf >= 0 {
			end = i + lf
		}
		line := text[i:end]
		// a CR returns the carriage whatever the line printed before it,
		// after the wraps that printing made
		for {
			cr := strings.IndexByte(line, '\r')
			if cr < 0 {
				break
			}
			if cr > 0 {
				wraps += int64((x + cr - 1) / cols)
			}
			x = 0
			line = line[cr+1:]
		}
		if printed := len(line); printed > 0 {
			// the characters printed at columns cols, 2 × cols, …
			// (counting from the line's start) wrap first
			wraps += int64((x + printed - 1) / cols)
			if x >= cols {
				x = 0 // the first character wraps
			}
			if x+printed <= cols {
				x += printed
			} else {
				x = (x+printed-1)%cols + 1
			}
		}
		if lf < 0 {
			break
		}
		if x >= cols {
			x = cols - 1
		}
		lfs++
		if each != nil {
			each(end+1, x)
		}
		i = end + 1
	}
	return x, wraps, lfs
}

// output sends terminal output through the fast-forward.
func (s *screen) output(text string) error {
	f := &s.ff
	if !f.known {
		p := plainPrefix(text)
		// plain text is held; other text too once what is held may be
		// cut (scrollback + 2 × rows line feeds): holding it keeps the
		// order, and waiting for the answer is worth the cut, where
		// holding every short stretch would make escape-heavy output
		// wait for a round trip per frame
		worth := f.heldLFs >= f.scrollback+2*f.rows
		if f.hold && (p == len(text) && !f.heldMixed || worth) && f.heldN+len(text) <= maxLearn {
			f.held = append(f.held, heldItem{kind: 'w', text: text})
			f.heldN += len(text)
			if p < len(text) {
				f.heldMixed = true
			} else if !f.heldMixed {
				f.heldLFs += strings.Count(text, "\n")
			}
			return s.err
		}
		if err := s.release(); err != nil {
			return err
		}
		return s.queueText(text)
	}
	p := plainPrefix(text)
	if p > 0 {
		if f.run == nil {
			s.beginRun()
		}
		f.run.feed(text[:p])
		if f.run.cut() < 0 && f.run.total > maxUncut {
			if err := s.endRun(); err != nil {
				return err
			}
		}
	}
	if p == len(text) {
		return s.err
	}
	if err := s.endRun(); err != nil {
		return err
	}
	f.known = false
	f.forget()
	return s.queueText(text[p:])
}

// beginRun starts a run where the state is known, and tells the helper.
func (s *screen) beginRun() {
	f := &s.ff
	ring := f.scrollback + f.rows + 1 // need + 1
	r := f.rings
	f.rings = nil
	if r == nil || len(r.pos) != ring {
		r = &plainRun{pos: make([]int64, ring), col: make([]uint16, ring)}
	}
	*r = plainRun{cols: f.cols, rows: f.rows, need: f.scrollback + f.rows, x: f.x, shown: -1, pos: r.pos, col: r.col, segs: r.segs[:0]}
	f.run = r
	var p [10]byte
	binary.LittleEndian.PutUint16(p[0:], uint16(f.cols))
	binary.LittleEndian.PutUint16(p[2:], uint16(f.rows))
	binary.LittleEndian.PutUint32(p[4:], uint32(f.scrollback))
	binary.LittleEndian.PutUint16(p[8:], uint16(f.x))
	s.queue('b', string(p[:]))
}

// feed adds plain text to the run.
func (r *plainRun) feed(text string) {
	ring := int64(len(r.pos))
	base := r.total
	n := r.lfs
	x, wraps, lfs := advance(text, r.x, r.cols, func(off, x int) {
		n++
		k := n % ring
		r.pos[k] = base + int64(off)
		r.col[k] = uint16(x)
	})
	r.x, r.wraps, r.lfs = x, r.wraps+wraps, r.lfs+lfs
	r.segs = append(r.segs, text)
	r.total += int64(len(text))
	// forget the segments wholly before the cut
	if c := r.cut(); c >= 0 {
		drop := 0
		for drop < len(r.segs) && r.segStart+int64(len(r.segs[drop])) <= c {
			r.segStart += int64(len(r.segs[drop]))
			drop++
		}
		if drop > 0 {
			r.segs = append(r.segs[:0], r.segs[drop:]...)
		}
	}
}

// cut is the run offset after the line feed the run can be cut at, or
// -1 (the pos entry of line feed lfs − need, at least rows, so a line
// feed of this run written at most need line feeds ago: no entry of a
// reused ring is read before this run wrote it).
func (r *plainRun) cut() int64 {
	k := r.lfs - int64(r.need)
	if k < int64(r.rows) {
		return -1
	}
	return r.pos[k%int64(len(r.pos))]
}

// sendFrom sends the run's bytes from run offset from on (all still held:
// nothing at or after a cut or a show's line feed is dropped).
func (s *screen) sendFrom(r *plainRun, from int64) error {
	at := r.segStart
	for _, seg := range r.segs {
		if end := at + int64(len(seg)); end > from {
			if err := s.queueText(seg[max(0, from-at):]); err != nil {
				return err
			}
		}
		at += int64(len(seg))
	}
	return s.err
}

// sendCut sends the replacement of the bytes up to a line feed after
// which the cursor was in column x.
func (s *screen) sendCut(x uint16) error {
	var p [2]byte
	binary.LittleEndian.PutUint16(p[:], x)
	return s.queue('c', string(p[:]))
}

// show makes the helper's visible rows and cursor those the run's bytes
// so far give, for a frame; the run goes on (see the top of this file).
func (s *screen) show() error {
	r := s.ff.run
	if r.cut() < 0 {
		err := s.sendFrom(r, r.written)
		r.written = r.total
		return err
	}
	k := (r.lfs - int64(r.rows)) % int64(len(r.pos))
	pos := r.pos[k]
	if r.shown >= pos {
		if err := s.sendFrom(r, r.shown); err != nil {
			return err
		}
	} else {
		if err := s.sendCut(r.col[k]); err != nil {
			return err
		}
		if err := s.sendFrom(r, pos); err != nil {
			return err
		}
	}
	r.shown = r.total
	return nil
}

// endRun sends the run being collected, if any: the replacement of
// everything up to the cut, the bytes after it and the run's moves, or
// every byte not sent yet when it cannot be cut. The state stays known.
func (s *screen) endRun() error {
	f := &s.ff
	r := f.run
	if r == nil {
		return s.err
	}
	f.run, f.rings, f.x = nil, r, r.x
	var p [9]byte // the helper's 'x': cut or not, and the moves
	c := r.cut()
	if c < 0 {
		err := s.sendFrom(r, r.written)
		r.segs = r.segs[:0]
		if err != nil {
			return err
		}
		return s.queue('x', string(p[:]))
	}
	if err := s.sendCut(r.col[(r.lfs-int64(r.need))%int64(len(r.pos))]); err != nil {
		return err
	}
	if err := s.sendFrom(r, c); err != nil {
		return err
	}
	p[0] = 1
	binary.LittleEndian.PutUint64(p[1:], uint64(r.lfs+r.wraps))
	r.segs = r.segs[:0]
	f.skipped += c
	f.cuts++
	return s.queue('x', string(p[:]))
}
