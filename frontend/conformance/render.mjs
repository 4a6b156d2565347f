// Renders byte streams with @xterm/headless (the engine behind the viewer's
// xterm.js) and prints what the screen shows, so Go's renderer can be
// compared with it (backend/capture/conformance_test.go): the capture's
// renderer helper and this independent run must agree.
//
// Input (stdin): a JSON array of {id, columns, rows, data_base64} with,
// optionally, parts_base64 (the data as the writes to make, in order:
// xterm.js's screen can depend on where writes split a UTF-8 character),
// resize: {columns, rows} and then_base64: the terminal is
// resized after the data and then_base64 is written after that, and
// scrollback (default 1000). With views_after (indices of parts_base64),
// the answer is {id, views}: the view after each of those parts, in order.
// resizes_before, optionally, is [{part, columns, rows}]: the terminal is
// resized after the parts before parts_base64[part] have been parsed (a
// capture's resizes between its chunks; an empty part then stands for
// the view after the resize).
// Output (stdout): a JSON array, in the same order, of
//   {id, lines, trimmed, attrs, cursor_x, cursor_y, active_buffer, cursor_hidden}
// where lines[i] is row i of the visible screen as translateToString(false)
// (padded to the column count), trimmed[i] is translateToString(true), the
// cursor is relative to the visible screen, and active_buffer is "normal"
// or "alternate". attrs[i] describes row i's cell attributes as runs
// "SIGNATURE*COUNT" joined by "|" (cellSignature). cursor_hidden reads xterm.js's core service (no public
// API exposes it); it is null when that internal is missing. An item on
// which xterm.js throws is answered with {id, error}.
//
// Each stream is written to a fresh Terminal of its size with default
// options (Unicode 6 widths, as in the viewer), as bytes (UTF-8 decoded by
// xterm.js itself).
import pkg from '@xterm/headless';

const { Terminal } = pkg;

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

// cellSignature is a cell's colours and flags: "fg/bg/flags" where a
// colour is "" (default), "p<n>" (palette) or "r<rrggbb>" (truecolor) and
// the flags are b(old) d(im) i(talic) u(nderline) k (blink) r(everse)
// h(idden) s(trikethrough) o(verline).
function color(isDefault, isPalette, value) {
  if (isDefault) return '';
  if (isPalette) return `p${value}`;
  return `r${value.toString(16).padStart(6, '0')}`;
}

function cellSignature(cell) {
  const fg = color(cell.isFgDefault(), cell.isFgPalette(), cell.getFgColor());
  const bg = color(cell.isBgDefault(), cell.isBgPalette(), cell.getBgColor());
  let flags = '';
  if (cell.isBold()) flags += 'b';
  if (cell.isDim()) flags += 'd';
  if (cell.isItalic()) flags += 'i';
  if (cell.isUnderline()) flags += 'u';
  if (cell.isBlink()) flags += 'k';
  if (cell.isInverse()) flags += 'r';
  if (cell.isInvisible()) flags += 'h';
  if (cell.isStrikethrough()) flags += 's';
  if (cell.isOverline()) flags += 'o';
  return `${fg}/${bg}/${flags}`;
}

function rowAttrs(line, cols) {
  const runs = [];
  let prev = null;
  let count = 0;
  for (let x = 0; x < cols; x++) {
    const cell = line ? line.getCell(x) : undefined;
    const sig = cell ? cellSignature(cell) : '//';
    if (sig === prev) {
      count++;
      continue;
    }
    if (prev !== null) runs.push(`${prev}*${count}`);
    prev = sig;
    count = 1;
  }
  if (prev !== null) runs.push(`${prev}*${count}`);
  return runs.join('|');
}

// xterm.js parses in a timer, so its exceptions are uncaught: they fail the
// write in progress.
let failWrite = null;
process.on('uncaughtException', (err) => {
  if (!failWrite) throw err;
  failWrite(err);
});

function write(term, data) {
  return new Promise((resolve, reject) => {
    failWrite = reject;
    term.write(data, () => {
      failWrite = null;
      resolve();
    });
  });
}

// view is what term's screen shows now (see the output above).
function view(term) {
  const buf = term.buffer.active;
  const lines = [];
  const trimmed = [];
  const attrs = [];
  for (let y = 0; y < term.rows; y++) {
    const line = buf.getLine(buf.viewportY + y);
    // A line can be longer than the terminal (xterm.js does not shorten
    // the alternate buffer's lines when it narrows): only the visible
    // columns count.
    const pad = line ? Math.max(0, term.cols - line.length) : term.cols;
    lines.push((line ? line.translateToString(false, 0, term.cols) : '') + ' '.repeat(pad));
    trimmed.push(line ? line.translateToString(true, 0, term.cols) : '');
    attrs.push(rowAttrs(line, term.cols));
  }
  const core = term._core;
  const hidden = core && core.coreService ? Boolean(core.coreService.isCursorHidden) : null;
  return {
    lines,
    trimmed,
    attrs,
    cursor_x: buf.cursorX,
    cursor_y: buf.cursorY,
    active_buffer: buf.type,
    cursor_hidden: hidden,
  };
}

async function render(item) {
  const term = new Terminal({
    cols: item.columns,
    rows: item.rows,
    scrollback: item.scrollback ?? 1000,
    allowProposedApi: true,
  });
  const views = [];
  try {
    if (item.parts_base64) {
      const after = new Set(item.views_after || []);
      const resizes = new Map((item.resizes_before || []).map((r) => [r.part, r]));
      for (const [i, p] of item.parts_base64.entries()) {
        const r = resizes.get(i);
        if (r) term.resize(r.columns, r.rows);
        if (p.length) await write(term, new Uint8Array(Buffer.from(p, 'base64')));
        if (after.has(i)) views.push(view(term));
      }
    } else {
      await write(term, new Uint8Array(Buffer.from(item.data_base64, 'base64')));
    }
    if (item.resize) {
      term.resize(item.resize.columns, item.resize.rows);
      await write(term, new Uint8Array(Buffer.from(item.then_base64 || '', 'base64')));
    }
    if (item.views_after) return { id: item.id, views };
    return { id: item.id, ...view(term) };
  } finally {
    term.dispose();
  }
}

const items = JSON.parse(await readStdin());
if (!Array.isArray(items)) {
  process.stderr.write('render.mjs: stdin must be a JSON array\n');
  process.exit(2);
}
// xterm.js itself can throw on some streams (a bug of xterm.js, not of the
// stream): such an item is answered with {id, error} instead of a view.
const out = [];
for (const item of items) {
  try {
    out.push(await render(item));
  } catch (err) {
    out.push({ id: item.id, error: String(err && err.message ? err.message : err) });
  }
}
process.stdout.write(JSON.stringify(out));
