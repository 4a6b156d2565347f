// Bounds on the counts xterm.js 6 loops over, set on each terminal the
// renderer helper makes (helper.mjs).
//
// Some of xterm.js's control functions do their work once per unit of
// their count, with no bound of their own: IL, DL, SU and SD (CSI n L, M,
// S, T) splice the buffer n times, CBT and CHT (CSI n Z, I) move the
// cursor tab stop by tab stop n times, and REP (CSI n b) allocates its
// whole text at once, 4 bytes per code point per repetition, outside the
// JavaScript heap that --max-old-space-size bounds. Measured on xterm.js
// 6.0.0: ESC[20000000L took 11 s, so a target printing ESC[2147483647L
// kept a helper busy for minutes, and ESC[2147483647b made one allocate
// 8 GB. Each bound here changes nothing on the screen, so the frames stay
// xterm.js's render of the recorded bytes:
//   - IL, DL, SU, SD: a count of at least the row count does what the row
//     count does (each step moves the lines of the scroll region, at most
//     every row; once those are all blank, a further step replaces blank
//     lines by blank lines of the same attributes);
//   - CBT, CHT: a count of at least the column count does what the column
//     count does (the cursor stops at the first or the last tab stop,
//     and there are fewer stops than columns);
//   - REP: the text is repeated in pieces of at most REP_PIECE
//     repetitions, each piece one REP of its own: after one, the cell
//     before the cursor holds the same character and the parser's joining
//     state is the same, so the next repeats the same text. Its time is
//     still its count's (about 30 ns per repetition), bounded by the
//     capture's answer timeout.
// xterm.js's parser calls these handlers by name on its input handler
// (`(p) => this.insertLines(p)`), so they are replaced on the input
// handler's prototype, once, before any terminal renders: own functions on
// each instance changed its shape and made all of the input handler's
// code slower (the rendering benchmark's write ratio 0.75 -> 1.15). The
// count is clamped in the parser's parameters in place.

// REP_PIECE is the most repetitions one REP call does.
const REP_PIECE = 4096;

// patched is set once the prototype carries the bounds (the one piece of
// module state: the prototype is xterm.js's, shared by every terminal).
let patched = false;

// bound makes sure the bounds are on term's input handler and returns
// term.
export function bound(term) {
  if (!patched) {
    patch(Object.getPrototypeOf(term._core._inputHandler));
    patched = true;
  }
  return term;
}

// patch replaces the unbounded handlers on proto, xterm.js's InputHandler
// prototype.
function patch(proto) {
  for (const [name, size] of [
    ['insertLines', 'rows'],
    ['deleteLines', 'rows'],
    ['scrollUp', 'rows'],
    ['scrollDown', 'rows'],
    ['cursorBackwardTab', 'cols'],
    ['cursorForwardTab', 'cols'],
  ]) {
    const f = proto[name];
    proto[name] = function (p) {
      const max = this._bufferService[size];
      if (p.params[0] > max) p.params[0] = max;
      return f.call(this, p);
    };
  }
  const rep = proto.repeatPrecedingCharacter;
  proto.repeatPrecedingCharacter = function (p) {
    let n = p.params[0] || 1;
    while (n > REP_PIECE) {
      p.params[0] = REP_PIECE;
      rep.call(this, p);
      n -= REP_PIECE;
    }
    p.params[0] = n;
    return rep.call(this, p);
  };
}
