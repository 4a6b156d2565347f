// Fast-forward over plain text that scrolls out of xterm.js's buffer.
//
// A command that prints megabytes of plain lines (a build log, `yes`, a
// test runner) makes xterm.js parse every byte although all but the last
// few thousand lines leave its buffer (the visible rows plus the
// scrollback) before the next frame is read. The fast-forward skips those
// bytes and leaves xterm.js in exactly the state it would have reached by
// parsing them: the same buffer, scrollback included, cell for cell, the
// same cursor, pen, modes and parser state. Only then is the skip taken.
//
// A plain run is a sequence of bytes from the printable ASCII range
// (0x20–0x7e), LF and CR, written while xterm.js's own state says (ready):
// the normal buffer is active, the parser is in its ground state with no
// partial UTF-8 character, the scroll region is the whole screen, autowrap
// is on, LF does not return the carriage (convertEol), no character set
// maps ASCII to other characters, no hyperlink is open, and the cursor
// column is at most the column count. Inside such a run, xterm.js only
// prints one-column characters with the current pen, moves the cursor
// down (scrolling at the bottom row), and sets the column; nothing moves
// the cursor up. So, with C columns, R rows and S lines of scrollback:
//
//   - after R line feeds the cursor is on the bottom row, and every later
//     line feed scrolls, pushing a fresh blank line (blank in the pen's
//     erase colour, not wrapped) at the bottom;
//   - after a line feed that scrolled, S + R more line feeds push every
//     line that existed before it out of the buffer (S + R lines long
//     once S scrolls happened), so the buffer then holds only lines
//     created after it, which depend on nothing but the cursor column at
//     that line feed and the pen;
//   - the cursor column follows from the bytes alone (column): a printable
//     character at column C first wraps to column 0, then advances one
//     column; LF moves a pending wrap (column C) back to C - 1; CR goes
//     to column 0.
//
// Hence the cut: once a run holds n ≥ S + 2R line feeds, every byte up to
// and including the (n − S − R)-th line feed (which has at least R before
// it) is replaced by CR, R line feeds (the last of which scrolls, leaving
// the cursor on a fresh bottom line) and a CHA to the column the real bytes
// left the cursor in; the bytes after the cut are written as they came.
// The S + R line feeds after the cut then push both the real and the
// replaced history out of the buffer. A run ends at the first other byte,
// at a resize, a snapshot, a fresh terminal or the end of input, and is
// written then; a run that cannot be cut is written in full. The
// conformance tests (backend/capture/fastforward_test.go) compare every
// frame and the buffer after a later resize, which reflows the scrollback,
// with an independent xterm.js run over all the bytes.

// maxUncut bounds the bytes a run holds before a cut is possible (a very
// long line): past it the run is written in full and a new one may begin.
const maxUncut = 4 << 20;

// ready reports whether term's state lets a plain run start now (see
// above). It reads xterm.js's internals: the public API exposes neither
// the parser's state nor the scroll region.
export function ready(term) {
  const core = term._core;
  const ih = core?._inputHandler;
  const buf = core?.buffers?.active;
  // an internal that is missing (another xterm.js version) means no
  // fast-forward, never a failure
  return (
    buf !== undefined &&
    buf === core.buffers.normal &&
    ih?._parser?.currentState === 0 &&
    ih._parseStack?.paused === false &&
    ih._utf8Decoder?.interim?.[0] === 0 &&
    buf.scrollTop === 0 &&
    buf.scrollBottom === term.rows - 1 &&
    buf.x <= term.cols &&
    core.coreService?.decPrivateModes?.wraparound === true &&
    core.optionsService?.rawOptions?.convertEol === false &&
    ih._charsetService !== undefined &&
    ih._charsetService.charset === undefined &&
    ih._curAttrData?.extended?.urlId === 0 &&
    typeof core._writeBuffer?.writeSync === 'function'
  );
}

// rings is the ring buffers of the last run that ended, reused by the
// next of the same size: a capture starts a run with nearly every chunk
// of plain output, and allocating two typed arrays of scrollback + rows
// entries each time cost about as much as scanning the chunk. No entry
// of a reused ring is read before this run writes it: cut reads the entry
// of line feed lfs - need (at least rows, so a line feed of this run),
// written when that line feed was counted and overwritten only ring line
// feeds later.
let rings = null;

// A PlainRun collects one plain run's bytes and writes them, cut when it
// can be, with write (a synchronous xterm.js write).
export class PlainRun {
  constructor(term, write) {
    this.write = write;
    this.cols = term.cols;
    this.rows = term.rows;
    this.need = term.options.scrollback + term.rows; // line feeds kept after the cut
    const buf = term._core.buffers.active;
    this.x = buf.x;
    this.lfs = 0; // line feeds in the run
    this.wraps = 0; // autowraps in the run
    // xterm.js's buffer ring (see keepRing): where it starts, how full it
    // is, and the rows the cursor can move down before a move scrolls
    this.lines = buf.lines;
    this.start0 = buf.lines._startIndex;
    this.length0 = buf.lines.length;
    this.free0 = term.rows - 1 - buf.y;
    this.total = 0; // bytes in the run
    // the last need + 1 line feeds: offset after each and the column then
    this.ring = this.need + 1;
    if (rings !== null && rings.pos.length === this.ring) {
      this.pos = rings.pos;
      this.col = rings.col;
      rings = null;
    } else {
      this.pos = new Float64Array(this.ring);
      this.col = new Uint16Array(this.ring);
    }
    this.segs = []; // bytes not dropped yet, in order
    this.segStart = 0; // run offset of segs[0]
    this.written = 0; // bytes written as they came (show, before a cut was possible)
    this.shown = -1; // run offset up to which show made the visible rows, or -1
    this.done = false; // written in full (drop, end)
  }

  // feed adds the first end bytes of p to the run, which must be p's
  // plain prefix (the capture computes it: plainPrefix in
  // backend/capture/render_plain.go), and returns end; the byte there
  // (when end < p.length) ends the run.
  feed(p, end) {
    // The line feeds and carriage returns are found by String indexOf
    // over a one-byte string of the prefix (measured on 10 MB of plain
    // lines in a fresh Node: about 10 ms, where Buffer.indexOf on the
    // bytes took about 16 ms, its per-call cost, and finding the prefix
    // with a regular expression here another 14 ms); the column is then
    // computed per line, not per byte.
    const s = p.latin1Slice(0, end);
    const cols = this.cols;
    const ring = this.ring;
    const base = this.total;
    let x = this.x;
    let n = this.lfs;
    let wraps = this.wraps;
    let i = 0;
    let cr = s.indexOf('\r');
    if (cr < 0 || cr > end) cr = end;
    for (;;) {
      let lf = s.indexOf('\n', i);
      if (lf < 0 || lf > end) lf = end;
      let from = i;
      while (cr < lf) {
        // a CR returns the carriage whatever the line printed before it,
        // after the wraps that printing made
        if (cr > from) wraps += Math.floor((x + cr - from - 1) / cols);
        x = 0;
        from = cr + 1;
        cr = s.indexOf('\r', from);
        if (cr < 0 || cr > end) cr = end;
      }
      const printed = lf - from;
      if (printed > 0) {
        // the characters printed at columns cols, 2 × cols, … (counting
        // from the line's start) wrap first
        wraps += Math.floor((x + printed - 1) / cols);
        if (x >= cols) x = 0; // the first character wraps
        x = x + printed <= cols ? x + printed : ((x + printed - 1) % cols) + 1;
      }
      if (lf === end) break;
      if (x >= cols) x = cols - 1;
      n++;
      const k = n % ring;
      this.pos[k] = base + lf + 1;
      this.col[k] = x;
      i = lf + 1;
    }
    this.x = x;
    this.lfs = n;
    this.wraps = wraps;
    if (end > 0) {
      this.segs.push(end === p.length ? p : p.subarray(0, end));
      this.total += end;
    }
    this.drop();
    return end;
  }

  // cut is the run offset after the line feed the run can be cut at, or
  // -1.
  cut() {
    const k = this.lfs - this.need;
    if (k < this.rows) return -1;
    return this.pos[k % this.ring];
  }

  // drop forgets the segments wholly before the cut; a run that holds
  // more than maxUncut bytes and cannot be cut is written in full, which
  // ends it (done: the caller writes what follows and may start a new
  // run).
  drop() {
    const c = this.cut();
    if (c < 0) {
      if (this.total > maxUncut) this.flushAll();
      return;
    }
    while (this.segs.length && this.segStart + this.segs[0].length <= c) this.segStart += this.segs.shift().length;
  }

  // keepRing makes xterm.js's buffer ring start where parsing every byte
  // would have left it. xterm.js keeps the buffer's lines in a circular
  // list, and its reflow on a resize depends on where that list starts,
  // not only on the lines (measured: the same lines, cell for cell,
  // reflowed from 29 to 2 columns, gave other rows from start index 1
  // than from 0). Every move down from the bottom row (a line feed or an
  // autowrap) pushes one line, and a push into a full list moves its
  // start by one; the cut writes fewer lines than it skips, so the start
  // is moved to where the run's own moves would have left it. The list is
  // full then (a cut needs scrollback + 2 × rows line feeds), so moving
  // its start is rotating its array, the lines kept in their order.
  keepRing() {
    const l = this.lines;
    const max = l.maxLength;
    if (l.length !== max || l._array?.length !== max || typeof l._startIndex !== 'number') return;
    const pushes = Math.max(0, this.lfs + this.wraps - this.free0);
    const trims = Math.max(0, pushes - (max - this.length0));
    const want = trims > 0 ? (this.start0 + trims) % max : this.start0;
    const have = l._startIndex;
    if (want === have) return;
    const a = l._array;
    const rotated = new Array(max);
    for (let i = 0; i < max; i++) rotated[(want + i) % max] = a[(have + i) % max];
    l._array = rotated;
    l._startIndex = want;
  }

  // writeFrom writes the run's bytes from run offset from on (all in
  // segs: nothing at or after the cut is dropped).
  writeFrom(from) {
    let at = this.segStart;
    for (const s of this.segs) {
      if (at + s.length > from) this.write(at >= from ? s : s.subarray(from - at));
      at += s.length;
    }
  }

  // replace writes the replacement of the run up to a line feed after
  // which the cursor was in column x (see the top of this file).
  replace(x) {
    this.write(Buffer.from('\r' + '\n'.repeat(this.rows) + (x > 0 ? `\x1b[${x + 1}G` : ''), 'latin1'));
  }

  flushAll() {
    this.writeFrom(this.written);
    this.segs = [];
    this.release();
  }

  // show makes xterm.js's visible rows and cursor those the run's bytes so
  // far give, for a frame, and the run goes on. While the run cannot be
  // cut, its bytes are written as they came (written: not written again).
  // Once it can, only the visible rows are made: the replacement of
  // everything up to the line feed rows line feeds before the last (it
  // has at least rows line feeds before it, since a cut needs scrollback
  // + 2 × rows, so it scrolled) and the bytes after it, or, when fewer,
  // the bytes after what the last show wrote. The rows line feeds after
  // that line feed push everything before it out of the visible rows, so
  // they and the cursor are exact; the scrollback and the buffer ring are
  // not, but a frame holds only the visible rows, and end writes the real
  // cut on top of whatever show wrote (plain bytes and replacements, which
  // leave xterm.js's state ready): its scrollback + rows line feeds push
  // everything before it out of the buffer, and keepRing sets the ring's
  // start from the run's own bytes: the same state as without any show.
  show() {
    if (this.done) return;
    if (this.cut() < 0) {
      this.writeFrom(this.written);
      this.written = this.total;
      return;
    }
    const k = (this.lfs - this.rows) % this.ring;
    const pos = this.pos[k];
    if (this.shown >= pos) this.writeFrom(this.shown);
    else {
      this.replace(this.col[k]);
      this.writeFrom(pos);
    }
    this.shown = this.total;
  }

  // release ends the run and hands its rings to the next run.
  release() {
    this.done = true;
    rings = { pos: this.pos, col: this.col };
  }

  // end writes the run: the replacement of everything up to the cut and
  // the bytes after it, or every byte when it cannot be cut. It returns
  // the number of bytes skipped.
  end() {
    if (this.done) return 0;
    const c = this.cut();
    if (c < 0) {
      this.flushAll();
      return 0;
    }
    this.replace(this.col[(this.lfs - this.need) % this.ring]);
    this.writeFrom(c);
    this.keepRing();
    this.segs = [];
    this.release();
    return c;
  }
}
