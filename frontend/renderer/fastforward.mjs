// The helper's half of the fast-forward over plain text that scrolls out
// of xterm.js's buffer. The rule — when bytes may be skipped, what
// replaces them, and why xterm.js then holds exactly the state parsing
// them would have left — is the capture's, stated and proved once in
// backend/capture/render_fastforward.go, which decides every cut where the
// bytes are read: the bytes a cut replaces never reach this process.
//
// What only xterm.js can know is checked here: whether its state allows a
// plain run (ready, reported in every frame so the capture learns it), and
// at the start of a run that the capture's idea of the terminal (size,
// scrollback, cursor column) is xterm.js's. A run is then told to this
// module as messages (helper.mjs): begin, cut (the replacement: CR, a line
// feed per row, a CHA to the column the skipped bytes left the cursor in)
// any number of times, and end (keepRing's parameter). A message that does
// not fit the terminal's state is refused (an Error, which the helper
// reports as its 'e' answer): never a silently wrong screen.

// ready reports whether term's state lets a plain run start now: the
// normal buffer is active, the parser is in its ground state with no
// partial UTF-8 character, the scroll region is the whole screen, autowrap
// is on, LF does not return the carriage (convertEol), no character set
// maps ASCII to other characters, no hyperlink is open, and the cursor
// column is at most the column count. It reads xterm.js's internals: the
// public API exposes neither the parser's state nor the scroll region.
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

// A PlainRun is the helper's record of one run the capture announced:
// the buffer ring's state where it began (keepRing needs it) and whether
// it was cut. Between begin and end only plain output and cuts may come
// (helper.mjs refuses anything else).
export class PlainRun {
  // begin starts a run the capture computed for a terminal of cols ×
  // rows with scrollback lines of scrollback and the cursor in column x;
  // it throws when xterm.js's state does not allow a run or is not that.
  constructor(term, cols, rows, scrollback, x) {
    if (!ready(term)) throw new Error('plain run: the terminal is not in a state that allows one');
    const buf = term._core.buffers.active;
    if (cols !== term.cols || rows !== term.rows || scrollback !== term.options.scrollback)
      throw new Error(`plain run: for ${cols}x${rows} with ${scrollback} lines of scrollback, the terminal is ${term.cols}x${term.rows} with ${term.options.scrollback}`);
    if (x !== buf.x) throw new Error(`plain run: from column ${x}, the cursor is in column ${buf.x}`);
    this.term = term;
    this.lines = buf.lines;
    this.start0 = buf.lines._startIndex;
    this.length0 = buf.lines.length;
    this.free0 = term.rows - 1 - buf.y; // rows the cursor moves down before a move scrolls
    this.cuts = 0;
  }

  // replacement is the bytes that replace a run's bytes up to a line feed
  // after which the cursor was in column x (render_fastforward.go).
  replacement(x) {
    const term = this.term;
    if (!ready(term)) throw new Error('plain run: cut while the terminal is not in a state that allows one');
    if (!(x >= 0 && x < term.cols)) throw new Error(`plain run: cut to column ${x} of ${term.cols}`);
    this.cuts++;
    return Buffer.from('\r' + '\n'.repeat(term.rows) + (x > 0 ? `\x1b[${x + 1}G` : ''), 'latin1');
  }

  // keepRing makes xterm.js's buffer ring start where parsing every byte
  // would have left it, given the run's moves down (its line feeds and
  // autowraps). xterm.js keeps the buffer's lines in a circular list, and
  // its reflow on a resize depends on where that list starts, not only on
  // the lines (measured: the same lines, cell for cell, reflowed from 29
  // to 2 columns, gave other rows from start index 1 than from 0). Every
  // move down from the bottom row pushes one line, and a push into a full
  // list moves its start by one; the cut writes fewer lines than it
  // skips, so the start is moved to where the run's own moves would have
  // left it. The list is full then (a cut needs scrollback + 2 × rows line
  // feeds), so moving its start is rotating its array, the lines kept in
  // their order.
  keepRing(moves) {
    if (this.cuts === 0) throw new Error('plain run: ended as cut without a cut');
    const l = this.lines;
    const max = l.maxLength;
    if (l !== this.term._core.buffers.active.lines) throw new Error('plain run: the buffer changed');
    if (l.length !== max || l._array?.length !== max || typeof l._startIndex !== 'number') return;
    const pushes = Math.max(0, moves - this.free0);
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
}
