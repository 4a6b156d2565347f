// The capture's terminal renderer: @xterm/headless (the engine of the
// viewer's @xterm/xterm, same version) and screen.mjs's frames, run by
// the pinned Node as a helper process the capture owns. It is bundled into
// one script (`make renderer`, rolldown) that backend/capture embeds.
//
// Usage: node helper.js COLUMNS ROWS SCROLLBACK (the last three arguments)
//
// Protocol (backend/capture/render_helper.go): messages in both
// directions are [type: 1 byte][length: u32 little endian][payload].
//   in  'w' raw terminal output (bytes; xterm.js decodes UTF-8 itself,
//           across messages)
//       'r' resize: u16 columns, u16 rows (little endian)
//       's' snapshot: answered with one 'f' once everything sent before
//           it has been parsed
//       'n' a fresh terminal: u16 columns, u16 rows, u32 scrollback, once
//           everything sent before has been parsed (the old one is
//           disposed)
//   out 'h' hello (payload: "@xterm/headless VERSION"), once, first
//       'f' frame: JSON {c, r, x, y, a, l, s}: columns, rows, cursor
//           column and row (the column is the column count while a wrap
//           is pending, as xterm.js reports it), a: 1 when the alternate
//           buffer is active, l: the visible rows as text padded to the
//           column count (translateToString), s: the serialized state
//           (screen.mjs)
//       'e' error (payload: message); the helper then exits 1
// Input is applied in order: a resize or a snapshot waits for the writes
// before it, and the reader never waits for the parser (xterm.js queues
// the writes), so the capture can send chunk n+1 before frame n is back.
import pkg from '@xterm/headless';
import headlessPkg from '@xterm/headless/package.json' with { type: 'json' };
import { frame } from './screen.mjs';

const { Terminal } = pkg;

function fail(msg) {
  const b = Buffer.from(String(msg).slice(0, 2000), 'utf8');
  const h = Buffer.alloc(5);
  h[0] = 0x65; // 'e'
  h.writeUInt32LE(b.length, 1);
  process.stdout.write(Buffer.concat([h, b]), () => process.exit(1));
}

process.on('uncaughtException', (err) => fail(`xterm.js failed: ${err && err.stack ? err.stack.split('\n').slice(0, 3).join(' | ') : err}`));

// the last three arguments (the loader runs this script with node -e)
const [cols, rows, scrollback] = process.argv.slice(-3).map((a) => Number.parseInt(a, 10));
if (!(cols >= 1 && rows >= 1 && scrollback >= 0)) fail('usage: helper.js COLUMNS ROWS SCROLLBACK');

let term = new Terminal({ cols, rows, scrollback, allowProposedApi: true });
// held: messages that arrived after an 'n' while the old terminal was
// still parsing; they are applied to the new one
let held = null;

function send(type, payload) {
  const h = Buffer.alloc(5);
  h[0] = type;
  h.writeUInt32LE(payload.length, 1);
  process.stdout.write(Buffer.concat([h, payload]));
}

function handle(type, payload) {
  if (held) {
    held.push([type, payload]);
    return;
  }
  switch (type) {
    case 0x77: // 'w'
      term.write(payload);
      break;
    case 0x72: {
      // 'r'
      if (payload.length !== 4) return fail('resize: payload must be 4 bytes');
      const c = payload.readUInt16LE(0);
      const r = payload.readUInt16LE(2);
      if (c < 1 || r < 1) return fail(`resize: ${c}x${r}`);
      term.write(new Uint8Array(0), () => term.resize(c, r));
      break;
    }
    case 0x73: // 's'
      term.write(new Uint8Array(0), () => send(0x66, Buffer.from(JSON.stringify(frame(term)), 'utf8')));
      break;
    case 0x6e: {
      // 'n'
      if (payload.length !== 8) return fail('new terminal: payload must be 8 bytes');
      const c = payload.readUInt16LE(0);
      const r = payload.readUInt16LE(2);
      const sb = payload.readUInt32LE(4);
      if (c < 1 || r < 1) return fail(`new terminal: ${c}x${r}`);
      held = [];
      term.write(new Uint8Array(0), () => {
        term.dispose();
        term = new Terminal({ cols: c, rows: r, scrollback: sb, allowProposedApi: true });
        const queued = held;
        held = null;
        for (const [t, p] of queued) handle(t, p);
      });
      break;
    }
    default:
      fail(`unknown message type ${type}`);
  }
}

// MAX_MESSAGE bounds one incoming message (the capture sends PTY chunks).
const MAX_MESSAGE = 16 << 20;
let pending = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
  pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
  let off = 0;
  while (pending.length - off >= 5) {
    const len = pending.readUInt32LE(off + 1);
    if (len > MAX_MESSAGE) return fail(`message of ${len} bytes`);
    if (pending.length - off < 5 + len) break;
    const type = pending[off];
    // copy: xterm.js keeps the array until it has parsed it
    const payload = Buffer.from(pending.subarray(off + 5, off + 5 + len));
    off += 5 + len;
    handle(type, payload);
  }
  pending = off === pending.length ? Buffer.alloc(0) : pending.subarray(off);
});
// the capture closes stdin to end the helper: finish what was queued
process.stdin.on('end', () => term.write(new Uint8Array(0), () => process.exit(0)));

send(0x68, Buffer.from(`@xterm/headless ${headlessPkg.version}`, 'utf8'));
