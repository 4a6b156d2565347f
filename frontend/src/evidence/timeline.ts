// The replay timeline of a capture record: what to write into the
// terminal and when (raw frames and resizes, in capture order), where the
// screen keyframes are (rendered frames and their serialized_state), the
// markers shown on the scrubber, and the idle-time-capped playback clock.
//
// Seeking never replays from the start: seekPlan picks the last rendered
// frame at or before the target time and only the raw frames and resizes
// captured after it. Capture order comes from the record's event_journal;
// a record without one (the journal is optional) falls back to ordering
// by at_ms, with a raw chunk taken to precede the rendered frame of the
// same millisecond (the engine renders after parsing each chunk).

import type { CaptureRecord, RenderedFrame } from './record';
import { terminalOf } from './record';

/** Something replay writes into the terminal. */
export type Op =
  | { order: number; at: number; kind: 'write'; data: string; index: number }
  | { order: number; at: number; kind: 'resize'; columns: number; rows: number; index: number };

/** A rendered frame the screen can be restored from. */
export interface Keyframe {
  order: number;
  at: number;
  index: number;
  frame: RenderedFrame;
}

export type MarkerKind = 'input' | 'resize' | 'signal' | 'stdin_close' | 'checkpoint' | 'shim' | 'protocol' | 'exit' | 'settlement';

/** A point of interest on the scrubber; `collection`/`index` name the
 * record entry it stands for. */
export interface Marker {
  at: number;
  kind: MarkerKind;
  label: string;
  collection: string;
  index: number;
}

export interface Timeline {
  ops: Op[];
  keyframes: Keyframe[];
  markers: Marker[];
  /** Capture time of the last observation, in ms. */
  duration: number;
  initial: { columns: number; rows: number; scrollback: number };
  /** Whether capture order came from the event_journal. */
  journaled: boolean;
}

/** The order of the first op a seek to `t` applies after `keyframe`, and
 * the ops to apply (all with at ≤ t). */
export interface SeekPlan {
  keyframe: Keyframe | null;
  /** Index into Timeline.ops of the first op to apply. */
  from: number;
  /** Index into Timeline.ops one past the last op to apply. */
  to: number;
}

const RESIZE = /^(\d+)x(\d+)$/;

function atOf(rec: CaptureRecord, collection: string, index: number): number | null {
  const list = (rec as unknown as Record<string, unknown>)[collection];
  if (!Array.isArray(list)) return null;
  const item = list[index] as { at_ms?: number; dispatched_at_ms?: number } | undefined;
  if (!item) return null;
  if (typeof item.at_ms === 'number') return item.at_ms;
  if (typeof item.dispatched_at_ms === 'number') return item.dispatched_at_ms;
  return null;
}

/** Builds the timeline of a verified capture record. */
export function buildTimeline(rec: CaptureRecord): Timeline {
  const frames = rec.frames ?? [];
  const rendered = rec.rendered_frames ?? [];
  const interactions = rec.interaction_events ?? [];
  const journal = rec.event_journal ?? [];
  const journaled = journal.length > 0;

  // Capture order of every observation that replay or markers need.
  const order = new Map<string, number>();
  let exitAt: number | null = null;
  let settleAt: number | null = null;
  if (journaled) {
    let latest = 0;
    for (const j of journal) {
      order.set(`${j.collection}#${j.index}`, j.capture_order);
      const at = atOf(rec, j.collection, j.index);
      if (at !== null) latest = Math.max(latest, at);
      // exit and settlement carry no time: they happen after the latest
      // observation captured before them.
      if (j.collection === 'exit') exitAt = latest;
      if (j.collection === 'settlement') settleAt = latest;
    }
  } else {
    // Fallback order: by time; a raw chunk or resize before the rendered
    // frame of the same millisecond.
    const all: { key: string; at: number; rank: number; seq: number }[] = [];
    frames.forEach((f, i) => all.push({ key: `frames#${i}`, at: f.at_ms, rank: 0, seq: i }));
    interactions.forEach((e, i) => all.push({ key: `interaction_events#${i}`, at: e.dispatched_at_ms, rank: 0, seq: frames.length + i }));
    rendered.forEach((f, i) => all.push({ key: `rendered_frames#${i}`, at: f.at_ms, rank: 1, seq: i }));
    all.sort((a, b) => a.at - b.at || a.rank - b.rank || a.seq - b.seq);
    all.forEach((x, i) => order.set(x.key, i));
  }

  const ops: Op[] = [];
  frames.forEach((f, i) => {
    const o = order.get(`frames#${i}`);
    if (o !== undefined) ops.push({ order: o, at: f.at_ms, kind: 'write', data: f.data, index: i });
  });
  interactions.forEach((e, i) => {
    if (e.type !== 'resize' || e.outcome !== 'dispatched') return;
    const m = RESIZE.exec(e.data);
    const o = order.get(`interaction_events#${i}`);
    if (m && o !== undefined) ops.push({ order: o, at: e.dispatched_at_ms, kind: 'resize', columns: Number(m[1]), rows: Number(m[2]), index: i });
  });
  ops.sort((a, b) => a.order - b.order);

  const keyframes: Keyframe[] = [];
  rendered.forEach((f, i) => {
    const o = order.get(`rendered_frames#${i}`);
    if (o !== undefined) keyframes.push({ order: o, at: f.at_ms, index: i, frame: f });
  });
  keyframes.sort((a, b) => a.order - b.order);

  const markers: Marker[] = [];
  interactions.forEach((e, i) => {
    const label = e.type === 'input' ? `input ${printable(e.data, 40)}` : e.type === 'resize' ? `resize ${e.data}` : e.type === 'signal' ? `signal ${e.data}` : 'stdin closed';
    markers.push({ at: e.dispatched_at_ms, kind: e.type, label: e.outcome === 'dispatched' ? label : `${label} (${e.outcome.replace('_', ' ')})`, collection: 'interaction_events', index: i });
  });
  (rec.filesystem_checkpoints ?? []).forEach((c, i) =>
    markers.push({ at: c.at_ms, kind: 'checkpoint', label: `checkpoint ${c.name}`, collection: 'filesystem_checkpoints', index: i }),
  );
  (rec.shim_events ?? []).forEach((s, i) =>
    markers.push({ at: s.at_ms, kind: 'shim', label: `shim ${s.command} ${s.arguments.join(' ')} (${s.outcome})`, collection: 'shim_events', index: i }),
  );
  (rec.protocol_events ?? []).forEach((p, i) =>
    markers.push({ at: p.at_ms, kind: 'protocol', label: `${p.protocol} ${p.direction}${p.method ? ' ' + p.method : ''}${p.path ? ' ' + p.path : ''}`, collection: 'protocol_events', index: i }),
  );

  let duration = 0;
  for (const f of frames) duration = Math.max(duration, f.at_ms);
  for (const f of rendered) duration = Math.max(duration, f.at_ms);
  for (const m of markers) duration = Math.max(duration, m.at);
  for (const s of rec.process_samples ?? []) duration = Math.max(duration, s.at_ms);
  if (exitAt === null) exitAt = Math.max(0, ...frames.map((f) => f.at_ms), ...interactions.map((e) => e.dispatched_at_ms));
  if (settleAt === null) settleAt = exitAt;
  settleAt = Math.max(settleAt, exitAt + (rec.settlement?.elapsed_ms ?? 0));
  const exitLabel = rec.exit ? `exit ${rec.exit.reason}${rec.exit.code !== null ? ` code ${rec.exit.code}` : ''}${rec.exit.signal ? ` ${rec.exit.signal}` : ''}` : 'exit';
  markers.push({ at: exitAt, kind: 'exit', label: exitLabel, collection: 'exit', index: 0 });
  markers.push({ at: settleAt, kind: 'settlement', label: `settlement ${rec.settlement?.state ?? ''}`.trim(), collection: 'settlement', index: 0 });
  duration = Math.max(duration, exitAt, settleAt);
  markers.sort((a, b) => a.at - b.at);

  return { ops, keyframes, markers, duration, initial: terminalOf(rec), journaled };
}

/** Index of the last element of `xs` whose key is ≤ t, or -1. `xs` must
 * be sorted by key (non-decreasing). */
export function lastAtOrBefore<T>(xs: readonly T[], t: number, key: (x: T) => number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(xs[mid]!) <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** What a seek to capture time t restores: the last keyframe at or
 * before t (null: start from a blank terminal of the initial size) and
 * the ops captured after that keyframe up to t. */
export function seekPlan(tl: Timeline, t: number): SeekPlan {
  const k = lastAtOrBefore(tl.keyframes, t, (x) => x.at);
  const keyframe = k >= 0 ? tl.keyframes[k]! : null;
  const from = keyframe ? lastAtOrBefore(tl.ops, keyframe.order, (x) => x.order) + 1 : 0;
  let to = from;
  while (to < tl.ops.length && tl.ops[to]!.at <= t) to++;
  return { keyframe, from, to };
}

/** The bytes that restore a keyframe into a freshly reset terminal of the
 * frame's size: its serialized_state, the alternate screen first when the
 * state does not switch to it itself, then the cursor position.
 *
 * A state without any escape sequence is the plain form (the visible rows
 * padded to the column count, joined by CRLF). Written as is, its padding
 * would make every row count as content (xterm.js then scrolls rows away
 * when the terminal shrinks) and the last CRLF-joined row would leave the
 * cursor at the bottom; so each row is placed at its own position with its
 * padding dropped. A full escape-sequence serialization is written as is. */
export function restoreSequence(f: RenderedFrame): string {
  let s = '';
  const state = f.serialized_state;
  if (f.active_buffer === 'alternate' && !state.includes('\x1b[?1049h') && !state.includes('\x1b[?47h')) s += '\x1b[?1049h\x1b[H';
  if (state.includes('\x1b')) s += state;
  else
    state.split('\r\n').forEach((row, i) => {
      const text = row.replace(/ +$/, '');
      if (text) s += `\x1b[${i + 1};1H${text}`;
    });
  s += `\x1b[${f.cursor_y + 1};${f.cursor_x + 1}H`;
  return s;
}

/** The index of the next (dir 1) or previous (dir -1) marker strictly
 * after / before t; -1 when there is none. Markers within 1 ms of t count
 * as "at t" and are skipped. */
export function adjacentMarker(markers: readonly Marker[], t: number, dir: 1 | -1): number {
  if (dir > 0) {
    for (let i = 0; i < markers.length; i++) if (markers[i]!.at > t + 0.5) return i;
    return -1;
  }
  for (let i = markers.length - 1; i >= 0; i--) if (markers[i]!.at < t - 0.5) return i;
  return -1;
}

/** A string with control characters shown as escapes (never interpreted),
 * cut to max characters. */
export function printable(s: string, max = 200): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '\r') out += '\\r';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (c === 0x1b) out += '\\e';
    else if (c < 0x20 || c === 0x7f || (c >= 0x80 && c < 0xa0)) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
    if (out.length >= max) return out.slice(0, max) + '…';
  }
  return out;
}

/**
 * The playback clock with an idle-time cap: a gap between consecutive
 * observations longer than `cap` ms plays as `cap` ms (real timing
 * otherwise). Capture time t ↔ play time p is piecewise linear.
 */
export class TimeMap {
  private readonly times: number[];
  private readonly play: number[];
  readonly cap: number | null;

  constructor(eventTimes: readonly number[], duration: number, cap: number | null) {
    const ts = [...new Set([0, ...eventTimes.filter((x) => x >= 0 && x <= duration), duration])].sort((a, b) => a - b);
    this.times = ts;
    this.cap = cap !== null && cap > 0 ? cap : null;
    this.play = [0];
    for (let i = 1; i < ts.length; i++) {
      const gap = ts[i]! - ts[i - 1]!;
      this.play.push(this.play[i - 1]! + (this.cap === null ? gap : Math.min(gap, this.cap)));
    }
  }

  /** Play-time length of the whole capture. */
  get playDuration(): number {
    return this.play[this.play.length - 1]!;
  }

  /** Play time of capture time t. */
  toPlay(t: number): number {
    const i = lastAtOrBefore(this.times, t, (x) => x);
    if (i < 0) return 0;
    if (i >= this.times.length - 1) return this.playDuration;
    const into = t - this.times[i]!;
    const seg = this.play[i + 1]! - this.play[i]!;
    return this.play[i]! + Math.min(into, seg);
  }

  /** Capture time of play time p: within a capped gap, the first `cap`
   * ms run at real speed and the rest is skipped. */
  toCapture(p: number): number {
    if (p <= 0) return 0;
    const i = lastAtOrBefore(this.play, p, (x) => x);
    if (i >= this.play.length - 1) return this.times[this.times.length - 1]!;
    const into = p - this.play[i]!;
    const seg = this.play[i + 1]! - this.play[i]!;
    return into >= seg ? this.times[i + 1]! : this.times[i]! + into;
  }
}

/** All times the clock must not compress across. */
export function eventTimes(tl: Timeline): number[] {
  return [...tl.ops.map((o) => o.at), ...tl.keyframes.map((k) => k.at), ...tl.markers.map((m) => m.at)];
}

/** Whether a rendered frame shows anything: a non-blank row, or the
 * alternate screen (a full-screen program that may paint only colours). */
function shows(f: RenderedFrame): boolean {
  return f.active_buffer === 'alternate' || f.lines.some((l) => l.trim() !== '');
}

/** The poster time of a capture: the first capture time whose screen (the
 * last keyframe at that time, which a seek there restores) is not blank;
 * 0 when the screen never shows anything. */
export function posterTime(tl: Timeline): number {
  const ks = tl.keyframes;
  for (let i = 0; i < ks.length; i++) {
    if (i + 1 < ks.length && ks[i + 1]!.at === ks[i]!.at) continue; // a later frame at the same time is what a seek shows
    if (shows(ks[i]!.frame)) return ks[i]!.at;
  }
  return 0;
}
