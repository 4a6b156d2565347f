// The capture's terminal renderer: @xterm/headless (the engine of the
// viewer's @xterm/xterm, same version) and screen.mjs's frames, run by
// the pinned Node as a helper process the capture owns. It is bundled into
// one script (`make renderer`, rolldown) that backend/capture embeds.
//
// Usage: node helper.js COLUMNS ROWS SCROLLBACK (the last three arguments)
//
// Protocol (backend/capture/render_helper.go): messages in both
// directions are [type: 1 byte][length: u32 little endian][payload].
//   in  'w' raw terminal output: u32 plain (little endian), then the bytes
//           (xterm.js decodes UTF-8 itself, across messages); plain is
//           the length of the bytes' longest prefix of printable ASCII,
//           LF and CR (the capture's plainPrefix, render_plain.go). A
//           plain past the bytes, or short of the prefix (the byte at
//           plain is plain), is a protocol error, and so is output that
//           is not all plain inside a plain run.
//       'r' resize: u16 columns, u16 rows (little endian); ends a run
//       's' snapshot: answered with one 'f' once everything sent before
//           it has been parsed
//       'n' a fresh terminal: u16 columns, u16 rows, u32 scrollback, once
//           everything sent before has been parsed (the old one is
//           disposed); ends a run
//       'k' statistics: answered with one 'k' (JSON {"cuts"}: the runs
//           ended as cut)
//       'b' a plain run begins: u16 columns, u16 rows, u32 scrollback,
//           u16 cursor column, as the capture knows the terminal; refused
//           unless xterm.js's state allows a run and is that
//       'c' cut: u16 column; the replacement of skipped bytes after which
//           the cursor was in that column (CR, a line feed per row, CHA),
//           refused outside a run, when the state does not allow one or
//           past the last column
//       'x' a run ends: u8 1 when it was cut, then u64 moves down (its
//           line feeds and autowraps, for keepRing); refused outside a
//           run, and as cut without a cut before it
//           (backend/capture/render_fastforward.go decides all three;
//           fastforward.mjs checks and applies them)
//   out 'h' hello (payload: "@xterm/headless VERSION"), once, first
//       'f' frame: u16 columns, u16 rows, u16 cursor column, u16 cursor
//           row (the column is the column count while a wrap is pending,
//           as xterm.js reports it), u8 1 when the alternate buffer is
//           active else 0, u8 1 when xterm.js's state allows a plain run
//           (fastforward.mjs ready) else 0, then for each row its text
//           padded to the column count (translateToString) and last the
//           serialized state (screen.mjs), each as u32 length and UTF-8
//           bytes; all little endian (a binary frame: JSON cost more to
//           write here and far more to read in Go than the rest of the
//           transport)
//       'e' error (payload: message); the helper then exits 1
// Input is applied in order, each message as it is read: xterm.js parses
// a write synchronously (its write buffer's writeSync, so xterm.js's state
// is current when the next message is read), and the capture keeps its
// side of the pipe busy: it sends every chunk before it waits for the
// frame. Plain text that would scroll out of the buffer before the next
// frame never comes: the capture replaces it (a cut) so that xterm.js
// ends up as if it had parsed it.
import pkg from '@xterm/headless';
import headlessPkg from '@xterm/headless/package.json' with { type: 'json' };
import { frame } from './screen.mjs';
import { PlainRun, ready } from './fastforward.mjs';
import { bound } from './bounds.mjs';
import { startupSnapshot } from 'node:v8';

const { Terminal } = pkg;

// failed is set once the helper failed: nothing more is read.
let failed = false;

function fail(msg) {
  failed = true;
  flushOut(); // the answers before it
  const b = Buffer.from(String(msg).slice(0, 2000), 'utf8');
  const h = Buffer.alloc(5);
  h[0] = 0x65; // 'e'
  h.writeUInt32LE(b.length, 1);
  process.stdout.write(Buffer.concat([h, b]), () => process.exit(1));
}

// term is the terminal being rendered (main makes it).
let term = null;

// newTerminal is the one way the helper makes a terminal: xterm.js's
// headless Terminal with its proposed API on (headless guards
// Terminal.buffer, which screen.mjs reads, behind it), and the bounds of
// bounds.mjs on its input handler.
function newTerminal(cols, rows, scrollback) {
  return bound(new Terminal({ cols, rows, scrollback, allowProposedApi: true }));
}

// parse writes b to term synchronously (xterm.js's own write buffer, as
// Terminal.write would, without waiting for the event loop).
function parse(b) {
  term._core._writeBuffer.writeSync(b);
}

// isPlainByte reports whether b may be in a plain run.
const isPlainByte = (b) => (b >= 0x20 && b < 0x7f) || b === 0x0a || b === 0x0d;

// run is the plain run the capture announced ('b'), or null
// (fastforward.mjs); cuts counts the runs ended as cut ('x').
let run = null;
let cuts = 0;

// output writes terminal output p, whose first plain bytes are plain.
// Inside a run only plain output may come (the capture sends a run's
// kept bytes there, the bytes it skipped never).
function output(p, plain) {
  if (run !== null && plain !== p.length) return fail('plain run: output that is not plain');
  parse(p);
}

// out holds the answers not yet written: encodeFrame and send write
// them into it and flushOut writes them, in one pipe write, once the
// input read so far is handled (the stdin handler's end) or FLUSH_AT
// bytes are held. One write per input read rather than one per frame:
// a pipe write per frame, each with its own copy, cost the helper more
// than a tenth of its time on output with frames after every chunk
// (writeBuffer and the garbage collector, `node --cpu-prof`). An answer
// waits at most for the rest of one input read (at most 64 KiB).
let out = Buffer.allocUnsafe(256 << 10);
let outLen = 0;
const FLUSH_AT = 64 << 10;

// reserve makes room for n more bytes in out.
function reserve(n) {
  if (out.length - outLen >= n) return;
  const b = Buffer.allocUnsafe(Math.max(2 * out.length, outLen + n));
  out.copy(b, 0, 0, outLen);
  out = b;
}

// flushOut writes the answers held; the bytes are copied out of out,
// since a pipe write may keep its buffer until it is written.
function flushOut() {
  if (outLen === 0) return;
  const b = Buffer.from(out.subarray(0, outLen));
  outLen = 0;
  process.stdout.write(b);
}

// encodeFrame writes the 'f' message of frame f (screen.mjs), its header
// included, into out after the answers held and returns its length; the
// caller holds it (answerFrame) or drops it (the warm-up). Each text is
// encoded once, straight into out (room made for the most UTF-8 bytes a
// text can take: 3 per UTF-16 unit), its length written before it
// afterwards. Measuring every text first (Buffer.byteLength) and then
// encoding it cost about four times as much.
function encodeFrame(f) {
  let bound = 19 + 4 * f.l.length + 3 * f.s.length;
  for (let i = 0; i < f.l.length; i++) bound += 3 * f.l[i].length;
  reserve(bound);
  const b = out;
  const at = outLen;
  b[at] = 0x66; // 'f'
  b.writeUInt16LE(f.c, at + 5);
  b.writeUInt16LE(f.r, at + 7);
  b.writeUInt16LE(f.x, at + 9);
  b.writeUInt16LE(f.y, at + 11);
  b[at + 13] = f.a;
  b[at + 14] = ready(term) ? 1 : 0;
  let o = at + 15;
  for (let i = 0; i <= f.l.length; i++) {
    const n = b.write(i < f.l.length ? f.l[i] : f.s, o + 4, 'utf8');
    b.writeUInt32LE(n, o);
    o += 4 + n;
  }
  b.writeUInt32LE(o - at - 5, at + 1);
  return o - at;
}

// answerFrame holds the frame of the terminal as an answer.
function answerFrame() {
  outLen += encodeFrame(frame(term));
  if (outLen >= FLUSH_AT) flushOut();
}

// send holds the message of type and payload as an answer.
function send(type, payload) {
  reserve(5 + payload.length);
  out[outLen] = type;
  out.writeUInt32LE(payload.length, outLen + 1);
  payload.copy(out, outLen + 5);
  outLen += 5 + payload.length;
}

// handle applies one message other than output. A frame does not end a
// plain run: the capture cuts a run across frames (it shows xterm.js the
// rows a frame must hold, render_fastforward.go).
function handle(type, payload) {
  try {
    apply(type, payload);
  } catch (err) {
    // a run message that does not fit xterm.js's state (fastforward.mjs)
    fail(err && err.message ? err.message : String(err));
  }
}

function apply(type, payload) {
  switch (type) {
    case 0x72: {
      // 'r'
      if (payload.length !== 4) return fail('resize: payload must be 4 bytes');
      const c = payload.readUInt16LE(0);
      const r = payload.readUInt16LE(2);
      if (c < 1 || r < 1) return fail(`resize: ${c}x${r}`);
      run = null;
      term.resize(c, r);
      break;
    }
    case 0x73: // 's'
      answerFrame();
      break;
    case 0x6b: // 'k'
      send(0x6b, Buffer.from(JSON.stringify({ cuts }), 'utf8'));
      break;
    case 0x6e: {
      // 'n'
      if (payload.length !== 8) return fail('new terminal: payload must be 8 bytes');
      const c = payload.readUInt16LE(0);
      const r = payload.readUInt16LE(2);
      const sb = payload.readUInt32LE(4);
      if (c < 1 || r < 1) return fail(`new terminal: ${c}x${r}`);
      run = null;
      term.dispose();
      term = newTerminal(c, r, sb);
      break;
    }
    case 0x62: // 'b'
      if (payload.length !== 10) return fail('plain run: payload must be 10 bytes');
      run = new PlainRun(term, payload.readUInt16LE(0), payload.readUInt16LE(2), payload.readUInt32LE(4), payload.readUInt16LE(8));
      break;
    case 0x63: // 'c'
      if (payload.length !== 2) return fail('cut: payload must be 2 bytes');
      if (run === null) return fail('cut: no plain run');
      parse(run.replacement(payload.readUInt16LE(0)));
      break;
    case 0x78: // 'x'
      if (payload.length !== 9) return fail('end of a plain run: payload must be 9 bytes');
      if (run === null) return fail('end of a plain run: no plain run');
      if (payload[0] > 1) return fail(`end of a plain run: cut flag ${payload[0]}`);
      if (payload[0] === 1) {
        run.keepRing(Number(payload.readBigUInt64LE(1)));
        cuts++;
      }
      run = null;
      break;
    default:
      fail(`unknown message type ${type}`);
  }
}

// The input is read as it comes, without joining the pieces of a message
// (Buffer.concat of the rest of every pipe read cost about 5 % of the
// helper's CPU on 10 MB of output): an output message is written to
// xterm.js piece by piece as its bytes arrive (xterm.js decodes UTF-8
// across writes, and a plain run collects pieces), each piece with its
// share of the message's plain prefix; only the headers and the few
// bytes of other messages are copied. No output byte is copied: parse
// reads a piece before the next one is read, and a plain run keeps
// pieces of chunks nobody writes to again.

// MAX_MESSAGE bounds one incoming message (the capture sends PTY chunks).
const MAX_MESSAGE = 16 << 20;
const header = Buffer.alloc(9); // type, u32 length, and for output u32 plain
let headerFill = 0;
let body = null; // the payload of a message other than output being read
let bodyFill = 0;
let outLeft = 0; // bytes of the output message being read still to come
let outAt = 0; // bytes of it read
let outPlain = 0; // its plain prefix's length

// outputPiece writes the next piece of the output message being read.
function outputPiece(piece) {
  const at = outAt;
  outAt += piece.length;
  let plain = 0; // where the plain prefix ends in this piece
  if (outPlain >= outAt) plain = piece.length;
  else if (outPlain >= at) {
    plain = outPlain - at;
    if (isPlainByte(piece[plain])) return fail(`output: the plain prefix is longer than ${outPlain} bytes`);
  } // else it ended in an earlier piece, whose run ended there: the rest is parsed as it came
  output(piece, plain);
}

// main runs the helper: the terminal of the last three arguments, the
// messages of stdin, the hello first.
function main() {
  process.on('uncaughtException', (err) => fail(`xterm.js failed: ${err && err.stack ? err.stack.split('\n').slice(0, 3).join(' | ') : err}`));

  // the last three arguments (the loader runs this script with node -e)
  const [cols, rows, scrollback] = process.argv.slice(-3).map((a) => Number.parseInt(a, 10));
  if (!(cols >= 1 && rows >= 1 && scrollback >= 0)) return fail('usage: helper.js COLUMNS ROWS SCROLLBACK');
  term = newTerminal(cols, rows, scrollback);

  process.stdin.on('data', (chunk) => {
    inputSeen = true;
    let off = 0;
    while (off < chunk.length && !failed) {
      if (outLeft > 0) {
        const n = Math.min(outLeft, chunk.length - off);
        const piece = chunk.subarray(off, off + n);
        off += n;
        outLeft -= n;
        outputPiece(piece);
        continue;
      }
      if (body !== null) {
        const n = Math.min(body.length - bodyFill, chunk.length - off);
        chunk.copy(body, bodyFill, off, off + n);
        off += n;
        bodyFill += n;
        if (bodyFill === body.length) {
          const b = body;
          body = null;
          handle(header[0], b);
        }
        continue;
      }
      header[headerFill++] = chunk[off++];
      if (headerFill < (header[0] === 0x77 ? 9 : 5)) continue;
      headerFill = 0;
      const len = header.readUInt32LE(1);
      if (len > MAX_MESSAGE) return fail(`message of ${len} bytes`);
      if (header[0] === 0x77) {
        // 'w'
        if (len < 4) return fail('output: payload must start with its plain length');
        outPlain = header.readUInt32LE(5);
        outLeft = len - 4;
        outAt = 0;
        if (outPlain > outLeft) return fail(`output: a plain prefix of ${outPlain} bytes in ${outLeft}`);
      } else if (len <= chunk.length - off) {
        off += len;
        handle(header[0], chunk.subarray(off - len, off));
      } else {
        body = Buffer.allocUnsafe(len);
        bodyFill = 0;
      }
    }
    flushOut();
  });
  // the capture closes stdin to end the helper: finish what was queued
  process.stdin.on('end', () => {
    process.exit(0);
  });

  send(0x68, Buffer.from(`@xterm/headless ${headlessPkg.version}`, 'utf8'));
  flushOut();
  setTimeout(() => inputSeen || warmWhileIdle(), IDLE_WARM_MS).unref();
}

// WARM_STEP is the sample output one warm-up step renders: small enough
// that input arriving during a step waits only a few milliseconds.
const WARM_STEP = 16 << 10;

// warmSteps are the steps of a warm-up: sample output rendered on a
// terminal of its own, a plain run cut twice (as the capture cuts one
// across a frame), frames and a resize included, through the paths a
// capture takes (output, the run messages, frame, encodeFrame). Each step
// runs with term, run and cuts set to the warm-up's own and restores the
// helper's afterwards, so steps can run between the helper's messages
// without changing what they render.
function warmSteps() {
  let own = null;
  let ownRun = null;
  let ownCuts = 0;
  const step = (f) => () => {
    const [realTerm, realRun, realCuts] = [term, run, cuts];
    [term, run, cuts] = [own, ownRun, ownCuts];
    try {
      f();
    } finally {
      [own, ownRun, ownCuts] = [term, run, cuts];
      [term, run, cuts] = [realTerm, realRun, realCuts];
    }
  };
  const steps = [step(() => (term = newTerminal(80, 24, 1000)))];
  const write = (b) => {
    for (let i = 0; i < b.length; i += WARM_STEP) {
      steps.push(
        step(() => {
          const p = b.subarray(i, i + WARM_STEP);
          let plain = 0;
          while (plain < p.length && isPlainByte(p[plain])) plain++;
          output(p, plain);
        }),
      );
    }
  };
  const line = Buffer.from('The quick brown fox jumps over the lazy dog 0123456789\n');
  const plainText = Buffer.alloc(line.length * 1100);
  for (let i = 0; i < 1100; i++) line.copy(plainText, i * line.length);
  const u16 = (...v) => {
    const b = Buffer.alloc(2 * v.length);
    v.forEach((x, i) => b.writeUInt16LE(x, 2 * i));
    return b;
  };
  const begin = Buffer.alloc(10);
  begin.writeUInt16LE(80, 0);
  begin.writeUInt16LE(24, 2);
  begin.writeUInt32LE(1000, 4);
  steps.push(step(() => handle(0x62, begin)));
  write(plainText);
  steps.push(step(() => handle(0x63, u16(0))));
  write(plainText.subarray(0, line.length * 24));
  steps.push(step(() => encodeFrame(frame(term))));
  steps.push(step(() => handle(0x63, u16(0))));
  write(plainText);
  const moves = Buffer.alloc(9);
  moves[0] = 1;
  moves.writeBigUInt64LE(3300n, 1);
  steps.push(step(() => (handle(0x78, moves), encodeFrame(frame(term)))));
  let text = '';
  for (let i = 0; i < 3000; i++) text += `line ${i} \x1b[1;3${i % 8}mcolour\x1b[0m \u00e9\u4e2d\r\n`;
  write(Buffer.from(`\x1b[?1049h\x1b[2J\x1b[Hfull screen\x1b[?1049l${text}\x1b[5;10r\x1b[3b\x1b]0;t\x07`, 'utf8'));
  steps.push(
    step(() => {
      encodeFrame(frame(term));
      term.resize(100, 30);
      encodeFrame(frame(term));
    }),
  );
  const dispose = step(() => {
    if (term) term.dispose();
    term = null;
    run = null;
    cuts = 0;
  });
  return { steps, dispose };
}

// warm runs a warm-up at once, so a startup snapshot holds xterm.js, the
// runs and the frames initialized and their functions compiled.
function warm() {
  const { steps, dispose } = warmSteps();
  for (const s of steps) s();
  dispose();
}

// IDLE_WARM_MS is how long a helper waits for its first input before it
// warms up while idle (warmWhileIdle).
const IDLE_WARM_MS = 100;

// inputSeen is set by the first input read.
let inputSeen = false;

// warmWhileIdle runs a warm-up, one step per turn of the event loop,
// while no input has come, and stops for good at the first input. A
// startup snapshot keeps the bytecode of warm() but none of the
// optimized code V8 made from it, so a helper's first ~200 KB of output
// run cold (interpreted, while the optimizing compiler works again): a
// helper started ahead of its capture (capture.Renderers) waits idle
// anyway, and warming up then takes about a third off the CPU its
// capture costs it (docs/benchmarks.md). A helper whose capture starts
// at once gets its input before the timer and never warms up; one whose
// input comes during the warm-up waits at most one step (WARM_STEP of
// sample output).
function warmWhileIdle() {
  const { steps, dispose } = warmSteps();
  let i = 0;
  const next = () => {
    if (inputSeen || failed || i === steps.length) return dispose();
    steps[i++]();
    setImmediate(next);
  };
  next();
}

// Run by `node --build-snapshot` (backend/capture/snapshot.go), the
// bundle warms up and leaves main to run when the snapshot is started;
// run by the loader (node -e), it runs main now.
if (startupSnapshot.isBuildingSnapshot()) {
  warm();
  startupSnapshot.setDeserializeMainFunction(main);
} else main();
