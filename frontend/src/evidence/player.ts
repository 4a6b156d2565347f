// A reusable terminal replay player for one capture record: an xterm.js
// terminal that plays the record's raw frames with their real timing
// (idle gaps capped), and seeks instantly by restoring the nearest
// rendered frame's serialized_state and applying only the raw frames
// captured after it (see timeline.ts). It has no controls of its own; the
// Evidence view and the compare view build their controls on top of it.
//
//   const p = new Player();
//   p.mount(el);
//   p.load(record);
//   await p.seek(1200);      // capture time in ms
//   p.play(); p.setSpeed(2);
//   p.onTime((ms) => …);
//   p.highlightRows([3, 4]);

import { Terminal, type ITheme } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { dropSheets, StyleMirror, withInertStyles, type SheetSet } from './cspstyles';
import type { CaptureRecord } from './record';
import { buildTimeline, eventTimes, posterTime, restoreSequence, seekPlan, TimeMap, type Marker, type Timeline } from './timeline';

/** Playback speeds the UI offers (the player accepts any in [MIN, MAX]). */
export const SPEEDS = [0.5, 1, 1.5, 2, 4, 8] as const;
export const MIN_SPEED = 0.5;
export const MAX_SPEED = 8;
/** Default idle-time cap: a silence longer than this plays as this long. */
export const DEFAULT_IDLE_CAP_MS = 2000;
/** The most the terminal is enlarged to fill its box by default (the DOM
 * renderer re-rasterizes text, so it stays sharp). */
const MAX_SCALE = 1.3;

export interface PlayerOptions {
  /** Initial speed (default 1). */
  speed?: number;
  /** Idle-time cap in ms; null plays every gap in full (default 2000). */
  idleCapMs?: number | null;
  /** Terminal font size in px (default 13). */
  fontSize?: number;
  /** The most the terminal is enlarged to fill the width of its box
   * (default 1.3). A CSS max-height on that box bounds it too. */
  maxScale?: number;
}

/** Where load() opens a capture: at 0, or at its poster frame (the first
 * non-empty screen, posterTime). */
export type LoadAt = 'start' | 'poster';

export type PlayerState = 'empty' | 'paused' | 'playing' | 'ended';

const LIGHT: ITheme = {
  background: '#fbfbfc',
  foreground: '#1c2127',
  cursor: '#2d5bd0',
  cursorAccent: '#fbfbfc',
  selectionBackground: '#c9d7f8',
  // ANSI white and bright white are text colours: on this light
  // background they are mid greys (5.6:1 and 3.9:1 contrast), not white.
  black: '#1c2127', red: '#b42318', green: '#1a7f37', yellow: '#8a5a00', blue: '#2d5bd0', magenta: '#8e3ab8', cyan: '#0f7a8a', white: '#5f6773',
  brightBlack: '#667080', brightRed: '#d92d20', brightGreen: '#25a244', brightYellow: '#b07800', brightBlue: '#4a76e8', brightMagenta: '#a855d6', brightCyan: '#1597aa', brightWhite: '#7a828e',
};

const DARK: ITheme = {
  background: '#0c0f13',
  foreground: '#dfe4ea',
  cursor: '#6d96ff',
  cursorAccent: '#0c0f13',
  selectionBackground: '#2c3d6b',
  black: '#20262e', red: '#ff7b72', green: '#5cc97a', yellow: '#e3b341', blue: '#6d96ff', magenta: '#d2a8ff', cyan: '#56d4dd', white: '#c9d1d9',
  brightBlack: '#6e7781', brightRed: '#ffa198', brightGreen: '#7ee29a', brightYellow: '#f2cc60', brightBlue: '#a5c0ff', brightMagenta: '#e2c5ff', brightCyan: '#8de4ea', brightWhite: '#ffffff',
};

function currentTheme(): ITheme {
  return document.documentElement.dataset.theme === 'dark' ? DARK : LIGHT;
}

/** Replays one capture record in an xterm.js terminal. */
export class Player {
  private term: Terminal | null = null;
  private host: HTMLElement | null = null;
  private screen: HTMLElement | null = null;
  private overlay: HTMLElement | null = null;
  private tl: Timeline | null = null;
  private clock: TimeMap | null = null;
  private capMs: number | null;
  private rate: number;
  private readonly fontSize: number;
  private readonly maxScale: number;

  private t = 0; // capture time shown, ms
  private next = 0; // index of the next op to apply while playing
  private state: PlayerState = 'empty';
  private raf = 0;
  private lastTick = 0;
  private playAt = 0; // play-clock position, ms
  private gen = 0; // seek generation; a newer seek abandons an older one
  private seeking: Promise<void> | null = null;
  private rows: number[] = [];
  private marks = new Map<number, [number, number][]>();
  private markLayer: HTMLElement | null = null;

  private readonly timeListeners = new Set<(ms: number) => void>();
  private readonly stateListeners = new Set<(s: PlayerState) => void>();
  private themeObserver: MutationObserver | null = null;
  private styles: StyleMirror | null = null;
  private readonly sheets: SheetSet = new Set();
  private resizeObserver: ResizeObserver | null = null;

  constructor(opts: PlayerOptions = {}) {
    this.rate = clampSpeed(opts.speed ?? 1);
    this.capMs = opts.idleCapMs === undefined ? DEFAULT_IDLE_CAP_MS : opts.idleCapMs;
    this.fontSize = opts.fontSize ?? 13;
    this.maxScale = opts.maxScale ?? MAX_SCALE;
  }

  /** Creates the terminal inside el (once). */
  mount(el: HTMLElement): void {
    if (this.term) throw new Error('Player: already mounted');
    const host = document.createElement('div');
    host.className = 'player-term';
    const screen = document.createElement('div');
    screen.className = 'player-screen';
    const inner = document.createElement('div');
    inner.className = 'player-scaled';
    const overlay = document.createElement('div');
    overlay.className = 'player-highlights';
    overlay.setAttribute('aria-hidden', 'true');
    // Character marks are painted beneath the text (never over a glyph);
    // row highlights above it.
    const markLayer = document.createElement('div');
    markLayer.className = 'player-marks';
    markLayer.setAttribute('aria-hidden', 'true');
    inner.append(markLayer, host, overlay);
    this.markLayer = markLayer;
    screen.append(inner);
    el.append(screen);
    this.styles = new StyleMirror(host);
    this.host = host;
    this.screen = screen;
    this.overlay = overlay;
    const tl = this.tl;
    this.term = new Terminal({
      cols: tl?.initial.columns ?? 80,
      rows: tl?.initial.rows ?? 24,
      scrollback: tl?.initial.scrollback ?? 1000,
      disableStdin: true,
      cursorBlink: false,
      cursorStyle: 'block',
      fontSize: this.fontSize,
      fontFamily: "ui-monospace, 'SFMono-Regular', 'JetBrains Mono', Menlo, Consolas, 'DejaVu Sans Mono', 'Liberation Mono', monospace",
      theme: currentTheme(),
      allowProposedApi: false,
      screenReaderMode: false,
    });
    const term = this.term;
    withInertStyles(document, this.sheets, () => term.open(host));
    this.themeObserver = new MutationObserver(() => {
      if (this.term) this.term.options.theme = currentTheme();
    });
    this.themeObserver.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    if (typeof ResizeObserver !== 'undefined') {
      this.resizeObserver = new ResizeObserver(() => this.fit());
      this.resizeObserver.observe(el);
    }
    if (tl) void this.seek(this.t);
  }

  /** Loads a verified capture record and shows its screen at time 0, or
   * at its poster frame (the first screen that is not blank). */
  load(record: CaptureRecord, at: LoadAt = 'start'): Promise<void> {
    this.pause();
    this.tl = buildTimeline(record);
    this.clock = new TimeMap(eventTimes(this.tl), this.tl.duration, this.capMs);
    this.t = 0;
    this.playAt = 0;
    this.setState('paused');
    if (this.term) this.term.options.scrollback = this.tl.initial.scrollback;
    return this.seek(at === 'poster' ? posterTime(this.tl) : 0);
  }

  /** The poster time of the loaded capture (0 when nothing is loaded). */
  get poster(): number {
    return this.tl ? posterTime(this.tl) : 0;
  }

  /** The loaded timeline (ops, keyframes, markers), or null. */
  get timeline(): Timeline | null {
    return this.tl;
  }

  /** Markers of the loaded capture, sorted by time. */
  get markers(): readonly Marker[] {
    return this.tl?.markers ?? [];
  }

  /** Capture duration in ms (0 when nothing is loaded). */
  get duration(): number {
    return this.tl?.duration ?? 0;
  }

  /** Current capture time in ms. */
  get time(): number {
    return this.t;
  }

  get speed(): number {
    return this.rate;
  }

  get idleCap(): number | null {
    return this.capMs;
  }

  get playing(): boolean {
    return this.state === 'playing';
  }

  get playerState(): PlayerState {
    return this.state;
  }

  /**
   * Shows the screen at capture time ms (clamped to [0, duration]):
   * restores the last rendered frame at or before ms from its
   * serialized_state into a reset terminal, then writes only the raw
   * frames (and resizes) captured after it up to ms. Resolves once the
   * terminal has parsed everything. A later seek supersedes this one.
   */
  async seek(ms: number): Promise<void> {
    const tl = this.tl;
    if (!tl) return;
    const t = Math.max(0, Math.min(tl.duration, Number.isFinite(ms) ? ms : 0));
    const gen = ++this.gen;
    this.t = t;
    this.playAt = this.clock ? this.clock.toPlay(t) : t;
    if (this.state === 'ended' && t < tl.duration) this.setState('paused');
    this.emitTime();
    const term = this.term;
    if (!term) return;
    const run = (async () => {
      await this.flush(term);
      if (gen !== this.gen) return;
      const plan = seekPlan(tl, t);
      const kf = plan.keyframe?.frame;
      term.reset();
      const cols = kf ? kf.columns : tl.initial.columns;
      const rows = kf ? kf.rows : tl.initial.rows;
      if (term.cols !== cols || term.rows !== rows) term.resize(cols, rows);
      let buf = kf ? restoreSequence(kf) : '';
      for (let i = plan.from; i < plan.to; i++) {
        const op = tl.ops[i]!;
        if (op.kind === 'write') {
          buf += op.data;
          continue;
        }
        await this.write(term, buf);
        buf = '';
        if (gen !== this.gen) return;
        term.resize(op.columns, op.rows);
      }
      await this.write(term, buf);
      if (gen !== this.gen) return;
      this.next = plan.to;
      this.fit();
      this.paintHighlights();
    })();
    this.seeking = run;
    try {
      await run;
    } finally {
      if (this.seeking === run) this.seeking = null;
    }
  }

  /** Starts playback from the current time (from 0 when at the end). */
  play(): void {
    if (!this.tl || this.state === 'playing') return;
    if (this.t >= this.tl.duration) void this.seek(0);
    this.setState('playing');
    this.lastTick = performance.now();
    this.raf = requestAnimationFrame(this.tick);
  }

  /** Stops playback where it is. */
  pause(): void {
    if (this.raf) cancelAnimationFrame(this.raf);
    this.raf = 0;
    if (this.state === 'playing') this.setState('paused');
  }

  /** Toggles play/pause. */
  toggle(): void {
    if (this.state === 'playing') this.pause();
    else this.play();
  }

  /** Sets the playback speed, clamped to [0.5, 8]. */
  setSpeed(x: number): void {
    this.rate = clampSpeed(x);
  }

  /** Sets the idle-time cap (null: real timing for every gap). */
  setIdleCap(ms: number | null): void {
    this.capMs = ms !== null && ms > 0 ? ms : null;
    if (this.tl) {
      this.clock = new TimeMap(eventTimes(this.tl), this.tl.duration, this.capMs);
      this.playAt = this.clock.toPlay(this.t);
    }
  }

  /** Follows the current capture time; returns the unsubscribe function. */
  onTime(cb: (ms: number) => void): () => void {
    this.timeListeners.add(cb);
    return () => this.timeListeners.delete(cb);
  }

  /** Follows play/pause/end; returns the unsubscribe function. */
  onState(cb: (s: PlayerState) => void): () => void {
    this.stateListeners.add(cb);
    return () => this.stateListeners.delete(cb);
  }

  /** Highlights viewport rows (0-based) until the next call; [] clears. */
  highlightRows(rows: number[]): void {
    this.rows = [...new Set(rows.filter((r) => Number.isInteger(r) && r >= 0))].sort((a, b) => a - b);
    this.paintHighlights();
  }

  /** Marks characters of viewport rows until the next call: per row, the
   * code-point ranges [start, end) of its text (as screenLines gives it)
   * to mark; an empty map clears. */
  markCharacters(marks: Map<number, [number, number][]>): void {
    this.marks = new Map(marks);
    this.paintHighlights();
  }

  /** The visible rows of the active buffer as text, padded to the column
   * count (the shape of a rendered frame's `lines`). */
  screenLines(): string[] {
    const term = this.term;
    if (!term) return [];
    const buf = term.buffer.active;
    const out: string[] = [];
    for (let y = 0; y < term.rows; y++) {
      const line = buf.getLine(buf.viewportY + y);
      out.push((line ? line.translateToString(false) : '').padEnd(term.cols, ' ').slice(0, term.cols));
    }
    return out;
  }

  /** The cursor and size of the terminal as shown. */
  screenInfo(): { columns: number; rows: number; cursor_x: number; cursor_y: number; active_buffer: 'normal' | 'alternate' } | null {
    const term = this.term;
    if (!term) return null;
    const b = term.buffer.active;
    return { columns: term.cols, rows: term.rows, cursor_x: b.cursorX, cursor_y: b.cursorY, active_buffer: b.type };
  }

  /** Waits for a seek in progress and for pending writes. */
  async settled(): Promise<void> {
    while (this.seeking) await this.seeking;
    if (this.term) await this.flush(this.term);
  }

  /** Stops playback and releases the terminal. */
  dispose(): void {
    this.pause();
    this.gen++;
    this.themeObserver?.disconnect();
    this.resizeObserver?.disconnect();
    this.term?.dispose();
    this.term = null;
    this.styles?.dispose();
    this.styles = null;
    dropSheets(document, this.sheets);
    this.screen?.remove();
    this.timeListeners.clear();
    this.stateListeners.clear();
  }

  // ---- internals --------------------------------------------------------

  private readonly tick = (now: number): void => {
    this.raf = 0;
    const tl = this.tl;
    const term = this.term;
    if (!tl || !this.clock || this.state !== 'playing') return;
    const dt = Math.max(0, Math.min(250, now - this.lastTick)); // a hidden tab does not jump ahead
    this.lastTick = now;
    if (!this.seeking) {
      this.playAt = Math.min(this.clock.playDuration, this.playAt + dt * this.rate);
      const t = this.clock.toCapture(this.playAt);
      if (term) {
        let buf = '';
        while (this.next < tl.ops.length && tl.ops[this.next]!.at <= t) {
          const op = tl.ops[this.next++]!;
          if (op.kind === 'write') buf += op.data;
          else {
            if (buf) term.write(buf);
            buf = '';
            term.resize(op.columns, op.rows);
            this.fit();
          }
        }
        if (buf) term.write(buf);
      }
      this.t = t;
      this.emitTime();
      if (this.playAt >= this.clock.playDuration) {
        this.t = tl.duration;
        this.setState('ended');
        this.emitTime();
        return;
      }
    }
    this.raf = requestAnimationFrame(this.tick);
  };

  private write(term: Terminal, data: string): Promise<void> {
    return new Promise((resolve) => {
      if (data === '') resolve();
      else term.write(data, resolve);
    });
  }

  /** Resolves once everything written so far has been parsed. */
  private flush(term: Terminal): Promise<void> {
    return new Promise((resolve) => term.write('', resolve));
  }

  private setState(s: PlayerState): void {
    if (s === this.state) return;
    this.state = s;
    this.stateListeners.forEach((cb) => cb(s));
  }

  private emitTime(): void {
    this.timeListeners.forEach((cb) => cb(this.t));
  }

  /** Scales the terminal to the width it is given (up to maxScale) and,
   * when its box has a CSS max-height (or is shown full screen), to that
   * height too. */
  private fit(): void {
    const screen = this.screen;
    const host = this.host;
    const parent = screen?.parentElement;
    if (!screen || !host || !parent) return;
    const xs = host.querySelector<HTMLElement>('.xterm-screen');
    if (!xs) return;
    const natural = xs.offsetWidth;
    const naturalH = xs.offsetHeight;
    const cs = getComputedStyle(parent);
    const padX = parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight) || 0;
    const padY = parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom) || 0;
    const avail = parent.clientWidth - padX;
    let availH = parseFloat(cs.maxHeight); // "none" is NaN
    availH = Number.isFinite(availH) ? availH - padY : Infinity;
    if (document.fullscreenElement?.contains(parent)) availH = Math.min(availH, parent.clientHeight - padY);
    let scale = natural > 0 && avail > 0 ? Math.min(this.maxScale, avail / natural) : 1;
    if (naturalH > 0 && availH > 0 && Number.isFinite(availH)) scale = Math.min(scale, availH / naturalH);
    screen.style.setProperty('--player-scale', String(scale));
    screen.style.width = `${Math.ceil(natural * scale)}px`;
    screen.style.height = `${Math.ceil(naturalH * scale)}px`;
    host.style.width = `${natural}px`;
    this.paintHighlights();
  }

  private paintHighlights(): void {
    const overlay = this.overlay;
    const term = this.term;
    const xs = this.host?.querySelector<HTMLElement>('.xterm-screen');
    if (!overlay || !term || !xs) return;
    const rowH = xs.offsetHeight / term.rows;
    overlay.replaceChildren(
      ...this.rows
        .filter((r) => r < term.rows)
        .map((r) => {
          const d = document.createElement('div');
          d.className = 'player-highlight';
          d.dataset.row = String(r);
          d.style.top = `${r * rowH}px`;
          d.style.height = `${rowH}px`;
          return d;
        }),
    );
    overlay.style.width = `${xs.offsetWidth}px`;
    overlay.style.height = `${xs.offsetHeight}px`;
    this.paintMarks(rowH, xs.offsetWidth / term.cols);
  }

  /** Paints the character marks: each code-point range becomes the cells
   * that hold it (wide characters take two). */
  private paintMarks(rowH: number, colW: number): void {
    const layer = this.markLayer;
    const term = this.term;
    if (!layer || !term) return;
    const buf = term.buffer.active;
    const out: HTMLElement[] = [];
    for (const [row, ranges] of this.marks) {
      if (row < 0 || row >= term.rows) continue;
      const line = buf.getLine(buf.viewportY + row);
      if (!line) continue;
      // Column span of each code point of the row's text.
      const spans: [number, number][] = [];
      for (let x = 0; x < term.cols; x++) {
        const cell = line.getCell(x);
        if (!cell) break;
        const w = cell.getWidth();
        if (w === 0) continue;
        const chars = Array.from(cell.getChars() || ' ');
        for (const _ of chars) spans.push([x, x + w]);
      }
      for (const [s, e] of ranges) {
        const a = spans[s];
        const b = spans[Math.min(e, spans.length) - 1];
        if (!a || !b || e <= s) continue;
        const d = document.createElement('div');
        d.className = 'player-mark';
        d.dataset.row = String(row);
        d.dataset.col = String(a[0]);
        d.dataset.cols = String(b[1] - a[0]);
        d.style.top = `${row * rowH}px`;
        d.style.height = `${rowH}px`;
        d.style.left = `${a[0] * colW}px`;
        d.style.width = `${(b[1] - a[0]) * colW}px`;
        out.push(d);
      }
    }
    layer.replaceChildren(...out);
  }
}

function clampSpeed(x: number): number {
  if (!Number.isFinite(x)) return 1;
  return Math.max(MIN_SPEED, Math.min(MAX_SPEED, x));
}
