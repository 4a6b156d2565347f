// The frame of an @xterm/headless terminal as the capture records it:
// the visible rows, the cursor, the active buffer and a serialized state
// from which a freshly reset xterm.js terminal of the same size restores
// that screen. Used by the renderer helper (helper.mjs) and by the
// rendering benchmark's baseline (frontend/conformance/bench.mjs).
//
// The state is written here from xterm.js's own buffer API rather than by
// @xterm/addon-serialize: measured on the capture's conformance streams,
// addon-serialize 0.14 with xterm.js 6 restored only 1842 of 1994 random
// screens (it drops lone combining marks, misplaces the cursor after wide
// and combining characters, carries attributes into the alternate buffer
// and loses cells of soft-wrapped rows), and every screen must restore.

// sgr is the SGR sequence that sets a cell's colours and attributes.
function sgr(cell) {
  const p = ['0'];
  if (cell.isBold()) p.push('1');
  if (cell.isDim()) p.push('2');
  if (cell.isItalic()) p.push('3');
  if (cell.isUnderline()) p.push('4');
  if (cell.isBlink()) p.push('5');
  if (cell.isInverse()) p.push('7');
  if (cell.isInvisible()) p.push('8');
  if (cell.isStrikethrough()) p.push('9');
  if (cell.isOverline()) p.push('53');
  const color = (palette, rgb, v, base, bright, ext) => {
    if (palette) {
      if (v < 8) p.push(String(base + v));
      else if (v < 16) p.push(String(bright + v - 8));
      else p.push(`${ext};5;${v}`);
    } else if (rgb) p.push(`${ext};2;${(v >> 16) & 255};${(v >> 8) & 255};${v & 255}`);
  };
  color(cell.isFgPalette(), cell.isFgRGB(), cell.getFgColor(), 30, 90, 38);
  color(cell.isBgPalette(), cell.isBgRGB(), cell.getBgColor(), 40, 100, 48);
  return `\x1b[${p.join(';')}m`;
}

const DEFAULT = '\x1b[0m';

// trailing reports whether cell x of line is the second half of a wide
// character.
function trailing(line, x) {
  return x > 0 && line.getCell(x).getWidth() === 0 && line.getCell(x - 1)?.getWidth() === 2;
}

// lastCell is the column of line's last cell that is not a default
// blank (a reset terminal has those already), or -1. cell is a scratch
// IBufferCell.
function lastCell(line, cols, cell) {
  for (let x = cols - 1; x >= 0; x--) {
    line.getCell(x, cell);
    if (cell.getChars() !== '' || !cell.isAttributeDefault()) return x;
  }
  return -1;
}

// row writes the cells of line up to column last, each cell's attributes
// (an SGR only where they change: cells with the same fg and bg words of
// xterm.js's cell data have the same SGR) and characters, and returns the
// text and the column after it.
function row(line, last, cell) {
  let out = '';
  let pen = DEFAULT;
  let fg = 0;
  let bg = 0;
  let prevWidth = 1;
  let end = 0;
  for (let x = 0; x <= last; x++) {
    line.getCell(x, cell);
    const width = cell.getWidth();
    if (width === 0 && prevWidth === 2) {
      prevWidth = 0;
      continue; // the second half of a wide character
    }
    prevWidth = width;
    if (cell.fg !== fg || cell.bg !== bg) {
      const attrs = sgr(cell);
      if (attrs !== pen) out += attrs;
      pen = attrs;
      fg = cell.fg;
      bg = cell.bg;
    }
    out += cell.getChars() || ' ';
    end = x + Math.max(1, width);
  }
  return { text: pen === DEFAULT ? out : out + DEFAULT, end: Math.max(end, last + 1) };
}

// cursorHidden reads DECTCEM from xterm.js's core service: no public API
// exposes it.
function cursorHidden(term) {
  const core = term._core;
  return Boolean(core && core.coreService && core.coreService.isCursorHidden);
}

const MOUSE = { x10: '\x1b[?9h', vt200: '\x1b[?1000h', drag: '\x1b[?1002h', any: '\x1b[?1003h' };

// state is the serialized state of term's visible screen: the alternate
// buffer switched on when active, every row's cells, origin mode, the
// cursor (a pending wrap included: the cell before it is printed again),
// the modes xterm.js exposes and the cursor's visibility. Not restored:
// scrollback, the normal buffer beneath an active alternate one, scroll
// margins, tab stops, character sets, hyperlinks, the pen and the saved
// cursor.
export function state(term) {
  const buf = term.buffer.active;
  const cols = term.cols;
  const modes = term.modes;
  const cell = buf.getNullCell();
  let out = buf.type === 'alternate' ? '\x1b[?1049h\x1b[H' : '';
  // where the cursor is while the state is written: rows move it; cx is
  // the column count while a wrap is pending, as in xterm.js
  let cx = 0;
  let cy = 0;
  for (let y = 0; y < term.rows; y++) {
    const line = buf.getLine(buf.viewportY + y);
    const last = line ? lastCell(line, cols, cell) : -1;
    if (last < 0) continue;
    if (y === cy + 1) out += '\r\n';
    else if (y !== cy || cx !== 0) out += `\x1b[${y + 1}H`;
    const r = row(line, last, cell);
    out += r.text;
    cx = r.end;
    cy = y;
  }
  if (modes.originMode) {
    out += '\x1b[?6h'; // homes the cursor; no margins are restored, so CUP stays absolute
    cx = 0;
    cy = 0;
  }
  const { cursorX: x, cursorY: y } = buf;
  if (x >= cols && !(cx >= cols && cy === y)) {
    const line = buf.getLine(buf.viewportY + y);
    let at = cols - 1;
    if (line && trailing(line, at)) at--;
    const c = line?.getCell(at);
    out += `\x1b[${y + 1};${at + 1}H` + (c ? sgr(c) + (c.getChars() || ' ') + DEFAULT : ' ');
  } else if (x < cols && (x !== cx || y !== cy)) {
    out += x === 0 && y === cy ? '\r' : `\x1b[${y + 1};${x + 1}H`;
  }
  if (modes.insertMode) out += '\x1b[4h';
  if (!modes.wraparoundMode) out += '\x1b[?7l';
  if (modes.reverseWraparoundMode) out += '\x1b[?45h';
  if (modes.applicationCursorKeysMode) out += '\x1b[?1h';
  if (modes.applicationKeypadMode) out += '\x1b[?66h';
  if (modes.bracketedPasteMode) out += '\x1b[?2004h';
  if (modes.sendFocusMode) out += '\x1b[?1004h';
  if (MOUSE[modes.mouseTrackingMode]) out += MOUSE[modes.mouseTrackingMode];
  if (cursorHidden(term)) out += '\x1b[?25l';
  return out;
}

// frame is the capture's frame of term: {c, r, x, y, a, l, s} (see
// helper.mjs).
export function frame(term) {
  const buf = term.buffer.active;
  const lines = new Array(term.rows);
  for (let y = 0; y < term.rows; y++) {
    const line = buf.getLine(buf.viewportY + y);
    // a line can be longer than the terminal (xterm.js does not shorten
    // the alternate buffer's lines when it narrows): only the visible
    // columns count
    const pad = line ? Math.max(0, term.cols - line.length) : term.cols;
    lines[y] = (line ? line.translateToString(false, 0, term.cols) : '') + ' '.repeat(pad);
  }
  return {
    c: term.cols,
    r: term.rows,
    x: buf.cursorX,
    y: buf.cursorY,
    a: buf.type === 'alternate' ? 1 : 0,
    l: lines,
    s: state(term),
  };
}
