package capture

import "encoding/binary"

// Learning xterm.js's state from frames, and holding what follows a
// frame request until its answer: the fast-forward's readiness
// (render_fastforward.go states the rule and why it is exact).

// heldItem is held text ('w'), a resize ('r') or a frame request ('s').
type heldItem struct {
	kind          byte
	text          string
	columns, rows int
}

// frameRequest asks for a frame once everything before is parsed: held
// behind a frame whose answer is awaited, or sent (after show, when a
// run goes on). Its answer is owed either way.
func (s *screen) frameRequest() error {
	f := &s.ff
	if f.hold {
		f.held = append(f.held, heldItem{kind: 's'})
		s.waiting++
		return s.err
	}
	return s.sendFrameRequest(true)
}

// sendFrameRequest sends a frame request; hold says that what follows
// may be held behind it when the state is not known.
func (s *screen) sendFrameRequest(hold bool) error {
	f := &s.ff
	if f.run != nil {
		if err := s.show(); err != nil {
			return err
		}
	}
	if err := s.request('s'); err != nil {
		return err
	}
	f.seq++
	if !f.known && hold {
		f.hold, f.holdSeq = true, f.seq
	}
	return nil
}

// release sends what is held as it came (the frame requests among it
// included, after which nothing more is held).
func (s *screen) release() error {
	f := &s.ff
	items := f.held
	f.held, f.heldN, f.heldLFs, f.heldMixed, f.hold = nil, 0, 0, false, false
	for _, it := range items {
		var err error
		if it.kind == 'r' {
			err = s.resize(it.columns, it.rows)
		} else if it.kind == 's' {
			err = s.sendFrameRequest(false)
			s.waiting-- // owed since it was held
		} else {
			err = s.queueText(it.text)
		}
		if err != nil {
			return err
		}
	}
	return s.err
}

// frameAnswered takes the frame answering the oldest request sent:
// payload is the 'f' message (helper.mjs), read only as far as its size,
// cursor column and ready flag (decodeFrame checks the rest). The answer
// to the request things are held behind (nothing was sent after it, so
// it shows the state now) teaches the state: when it was ready, it is
// known now, in the frame's cursor column, and what is held is sent
// through the runs.
func (s *screen) frameAnswered(payload []byte) {
	f := &s.ff
	f.answered++
	if !f.hold || f.answered != f.holdSeq {
		return
	}
	if len(payload) >= 10 && payload[9] == 1 {
		c, r := int(binary.LittleEndian.Uint16(payload[0:])), int(binary.LittleEndian.Uint16(payload[2:]))
		x := int(binary.LittleEndian.Uint16(payload[4:]))
		if c == f.cols && r == f.rows && x <= c { // else not the terminal the capture sized: learn nothing
			f.known, f.x = true, x
		}
	}
	// what is held goes through the runs when the state is known now,
	// else as it came up to its first frame request, which holds the
	// rest, since plain text may make xterm.js's state ready (it ends a
	// sequence or a UTF-8 character split across writes)
	items := f.held
	f.held, f.heldN, f.heldLFs, f.heldMixed, f.hold = nil, 0, 0, false, false
	for _, it := range items {
		var err error
		switch it.kind {
		case 'w':
			err = s.output(it.text)
		case 'r':
			err = s.resize(it.columns, it.rows)
		default:
			s.waiting-- // owed since it was held
			err = s.frameRequest()
		}
		if err != nil {
			return
		}
	}
}

// holdResize holds a resize behind what is held when that may be cut
// (see output), and reports whether it did.
func (f *fastForward) holdResize(columns, rows int) bool {
	if !f.hold || f.heldLFs < f.scrollback+2*f.rows {
		return false
	}
	f.held = append(f.held, heldItem{kind: 'r', columns: columns, rows: rows})
	f.heldMixed = true
	return true
}
