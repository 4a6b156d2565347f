// Pure helpers of the compare view (unit-tested): journal locations to
// record items and times, the rows two screens differ in, and labels for
// dimension verdicts. The verdicts themselves always come from the
// backend (CompareCaptures); nothing here re-decides them.

import type { DimensionName, DimensionStatus, FirstDivergence } from '../api/types';
import type { Tone } from '../lib/labels';
import type { CaptureRecord, RenderedFrame } from './record';
import { printable } from './timeline';

export const DIMENSIONS: readonly DimensionName[] = ['terminal', 'interaction', 'exit', 'filesystem', 'protocol', 'process', 'shim'];

export const DIMENSION_LABEL: Record<DimensionName, string> = {
  terminal: 'Terminal',
  interaction: 'Interaction',
  exit: 'Exit',
  filesystem: 'Filesystem',
  protocol: 'Protocol',
  process: 'Processes',
  shim: 'Shims',
};

/** How a verdict reads and which tone it gets. */
export const STATUS: Record<DimensionStatus, { label: string; tone: Tone; text: string }> = {
  unchanged: { label: 'Unchanged', tone: 'ok', text: 'Both captures observed canonically equal items.' },
  changed: { label: 'Changed', tone: 'danger', text: 'Both captures observed something, and it differs.' },
  added: { label: 'Added', tone: 'warn', text: 'Only the right capture observed something here.' },
  removed: { label: 'Removed', tone: 'warn', text: 'Only the left capture observed something here.' },
  truncated: { label: 'Truncated', tone: 'warn', text: 'At least one capture is truncated, so nothing can be called equal.' },
  unknown: { label: 'Unknown', tone: 'neutral', text: 'The captures were normalized differently, or a residual unknown covers this dimension.' },
};

export function statusOf(s: string): { label: string; tone: Tone; text: string } {
  return STATUS[s as DimensionStatus] ?? { label: s, tone: 'neutral', text: '' };
}

export const VERDICT: Record<string, { label: string; tone: Tone; text: string }> = {
  equivalent: { label: 'Equivalent', tone: 'ok', text: 'Both captures conform to the trace spec.' },
  different: { label: 'Different', tone: 'danger', text: 'Exactly one capture conforms, or they fail in different ways.' },
  nonconforming: { label: 'Nonconforming', tone: 'warn', text: 'Both captures fail the trace spec in the same way.' },
  unknown: { label: 'Unknown', tone: 'neutral', text: 'A capture could not be checked (truncated, no journal, or a residual unknown covers a source).' },
};

/** A JSON path into an Evidence record, split into the record member and
 * the index: "$.normalized_result.frames[2]" → {collection: "frames",
 * index: 2}; "$.normalized_result.exit" → {collection: "exit", index: null}. */
export function parseLocation(path: string | null | undefined): { collection: string; index: number | null } | null {
  if (!path) return null;
  const m = /^\$\.normalized_result\.([a-z_]+)(?:\[(\d+)\])?/.exec(path);
  if (!m) return null;
  return { collection: m[1]!, index: m[2] !== undefined ? Number(m[2]) : null };
}

/** The capture time of the record item a location names, or null (exit,
 * settlement and final states carry no time). */
export function timeOfLocation(rec: CaptureRecord | null, path: string | null | undefined): number | null {
  const loc = parseLocation(path);
  if (!rec || !loc || loc.index === null) return null;
  const list = (rec as unknown as Record<string, unknown>)[loc.collection];
  if (!Array.isArray(list)) return null;
  const item = list[loc.index] as { at_ms?: unknown; dispatched_at_ms?: unknown } | undefined;
  if (!item) return null;
  if (typeof item.at_ms === 'number') return item.at_ms;
  if (typeof item.dispatched_at_ms === 'number') return item.dispatched_at_ms;
  return null;
}

/** The last time anything of the record happened before the untimed
 * lifecycle (used for exit/settlement locations). */
export function lastTime(rec: CaptureRecord | null): number {
  if (!rec) return 0;
  let t = 0;
  for (const f of rec.frames ?? []) t = Math.max(t, f.at_ms);
  for (const f of rec.rendered_frames ?? []) t = Math.max(t, f.at_ms);
  return t;
}

/** Where a side should seek for a location: its item's time, or the end
 * of the terminal output for untimed items. */
export function seekTimeOf(rec: CaptureRecord | null, path: string | null | undefined, fallback: number | null): number {
  const t = timeOfLocation(rec, path);
  if (t !== null) return t;
  if (fallback !== null) return fallback;
  return lastTime(rec);
}

/** The seek times of both sides for a divergence or diff item: each
 * side's own time, else the other side's (one-sided items). */
export function seekTimes(d: { left_at_ms: number | null; right_at_ms: number | null }, left: CaptureRecord | null, right: CaptureRecord | null): { left: number; right: number } {
  const l = d.left_at_ms ?? d.right_at_ms;
  const r = d.right_at_ms ?? d.left_at_ms;
  return { left: l ?? lastTime(left), right: r ?? lastTime(right) };
}

/** Rows (0-based) whose text differs between two screens; a row present
 * on one side only counts as differing. Trailing spaces are ignored. */
export function differingRows(a: readonly string[], b: readonly string[]): number[] {
  const out: number[] = [];
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined || y === undefined) {
      if ((x ?? '').trimEnd() !== '' || (y ?? '').trimEnd() !== '') out.push(i);
      continue;
    }
    if (x.trimEnd() !== y.trimEnd()) out.push(i);
  }
  return out;
}

function isRendered(v: unknown): v is RenderedFrame {
  return typeof v === 'object' && v !== null && Array.isArray((v as RenderedFrame).lines);
}

/** A one-line description of one side of a diff item, for the lists:
 * raw frames as their escaped text, rendered frames as the differing
 * rows, everything else as compact JSON. */
export function describeItem(v: unknown, other: unknown, max = 160): string {
  if (v === null || v === undefined) return '(nothing on this side)';
  if (isRendered(v)) {
    const rows = isRendered(other) ? differingRows(v.lines, other.lines) : v.lines.map((_, i) => i);
    const shown = rows.slice(0, 2).map((r) => `row ${r + 1}: ${printable((v.lines[r] ?? '').trimEnd(), 60)}`);
    return `screen ${v.columns}×${v.rows}${shown.length ? ' — ' + shown.join('; ') : ''}${rows.length > 2 ? ` (+${rows.length - 2} rows)` : ''}`;
  }
  const o = v as Record<string, unknown>;
  if (typeof o === 'object' && typeof o.data === 'string' && 'sequence' in o && !('direction' in o)) return printable(o.data, max);
  let s: string;
  try {
    s = JSON.stringify(v);
  } catch {
    s = String(v);
  }
  return s.length > max ? s.slice(0, max) + '…' : s;
}

/** "frames[2]" from "$.normalized_result.frames[2]". */
export function shortLocation(path: string | null | undefined): string {
  if (!path) return '—';
  return path.replace(/^\$\.normalized_result\./, '');
}

/** The first divergence in one sentence. */
export function divergenceText(fd: FirstDivergence, fmt: (ms: number) => string): string {
  if (fd.status === 'none') return 'No divergence: every dimension observed the same items.';
  if (fd.status === 'unknown') return fd.reason;
  const at = fd.left_at_ms ?? fd.right_at_ms;
  const where = at === null ? 'after the last timed observation' : `at ${fmt(at)}`;
  return `${DIMENSION_LABEL[fd.dimension]} diverges first, item ${fd.index} ${where} (left ${shortLocation(fd.left_location)}, right ${shortLocation(fd.right_location)}).`;
}
