// Pure helpers that show what differs (unit-tested): character ranges of
// two texts, text split into marked and unmarked pieces, JSON field-level
// differences, and the first divergence in words. Which items differ is
// always the backend's verdict; these only say where inside two items
// the difference is, for highlighting.

import type { FirstDivergence } from '../api/types';
import { DIMENSION_LABEL } from './compare_model';
import { printable } from './timeline';

/** A range [start, end) of code points. */
export type Range = [number, number];

const MAX_LCS_CELLS = 1 << 18;
const MIN_EQUAL_RUN = 3;

/** The code-point ranges in which a and b differ: the characters outside
 * one longest common subsequence, equal runs shorter than 3 between two
 * differences folded into them (so marks read as words). The same rule
 * as the backend's row ranges (backend/compare/textdiff.go), so a row the
 * backend reports is marked the same way. Long texts fall back to their
 * common prefix and suffix. */
export function charRanges(a: string, b: string, budget: { cells: number } = { cells: MAX_LCS_CELLS }): { left: Range[]; right: Range[] } {
  if (a > b) {
    const r = charRanges(b, a, budget);
    return { left: r.right, right: r.left };
  }
  const ra = Array.from(a);
  const rb = Array.from(b);
  let p = 0;
  while (p < ra.length && p < rb.length && ra[p] === rb[p]) p++;
  let s = 0;
  while (s < ra.length - p && s < rb.length - p && ra[ra.length - 1 - s] === rb[rb.length - 1 - s]) s++;
  const ma = ra.slice(p, ra.length - s);
  const mb = rb.slice(p, rb.length - s);
  const keepA = new Array<boolean>(ma.length).fill(false);
  const keepB = new Array<boolean>(mb.length).fill(false);
  const cells = ma.length * mb.length;
  if (cells <= MAX_LCS_CELLS && cells <= budget.cells) {
    budget.cells -= cells;
    lcs(ma, mb, keepA, keepB);
  }
  return { left: toRanges(keepA, p), right: toRanges(keepB, p) };
}

function lcs(a: string[], b: string[], keepA: boolean[], keepB: boolean[]): void {
  const n = a.length;
  const m = b.length;
  if (!n || !m) return;
  const w = m + 1;
  const t = new Int32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      t[i * w + j] = a[i] === b[j] ? t[(i + 1) * w + j + 1]! + 1 : Math.max(t[(i + 1) * w + j]!, t[i * w + j + 1]!);
    }
  }
  for (let i = 0, j = 0; i < n && j < m; ) {
    if (a[i] === b[j]) {
      keepA[i] = keepB[j] = true;
      i++;
      j++;
    } else if (t[(i + 1) * w + j]! >= t[i * w + j + 1]!) i++;
    else j++;
  }
}

function toRanges(keep: boolean[], base: number): Range[] {
  const out: Range[] = [];
  for (let i = 0; i < keep.length; ) {
    if (keep[i]) {
      i++;
      continue;
    }
    let j = i;
    while (j < keep.length && !keep[j]) j++;
    const last = out[out.length - 1];
    if (last && base + i - last[1] < MIN_EQUAL_RUN) last[1] = base + j;
    else out.push([base + i, base + j]);
    i = j;
  }
  return out;
}

/** text split at ranges (code points) into pieces, each marked or not;
 * ranges outside the text are clipped. */
export function segments(text: string, ranges: readonly Range[]): { text: string; marked: boolean }[] {
  const cps = Array.from(text);
  const out: { text: string; marked: boolean }[] = [];
  let at = 0;
  const sorted = [...ranges].map(([s, e]) => [Math.max(0, Math.min(s, cps.length)), Math.max(0, Math.min(e, cps.length))] as Range).filter(([s, e]) => e > s).sort((x, y) => x[0] - y[0]);
  for (const [s, e] of sorted) {
    if (s < at) continue;
    if (s > at) out.push({ text: cps.slice(at, s).join(''), marked: false });
    out.push({ text: cps.slice(s, e).join(''), marked: true });
    at = e;
  }
  if (at < cps.length || out.length === 0) out.push({ text: cps.slice(at).join(''), marked: false });
  return out;
}

/** One top-level field of two JSON objects: both values and whether they
 * differ (canonical JSON, member order irrelevant). */
export interface FieldDiff {
  key: string;
  left: unknown;
  right: unknown;
  inLeft: boolean;
  inRight: boolean;
  differs: boolean;
}

/** Canonical JSON text: object members sorted. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** The fields of two items side by side, differing ones marked; null
 * when either side is not a JSON object. `differing`, when the backend
 * named them, decides which fields differ (under the comparison's mode,
 * e.g. times ignored in behaviour mode); else canonical equality does. */
export function fieldDiffs(left: unknown, right: unknown, differing?: readonly string[] | null): FieldDiff[] | null {
  const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
  if (!isObj(left) && !isObj(right)) return null;
  const l = isObj(left) ? left : {};
  const r = isObj(right) ? right : {};
  const keys = [...new Set([...Object.keys(l), ...Object.keys(r)])].sort();
  return keys.map((key) => {
    const inLeft = key in l;
    const inRight = key in r;
    const differs = differing ? differing.includes(key) : inLeft !== inRight || canonical(l[key]) !== canonical(r[key]);
    return { key, left: l[key], right: r[key], inLeft, inRight, differs };
  });
}

/** A value shown on one line: strings quoted with control characters
 * made visible, everything else as JSON, shortened to max. */
export function valueText(v: unknown, max = 120): string {
  if (v === undefined) return '—';
  if (typeof v === 'string') return `'${printable(v, max)}'`;
  let s = '';
  try {
    s = JSON.stringify(v);
  } catch {
    s = String(v);
  }
  return s.length > max ? s.slice(0, max) + '…' : s;
}

/** One screen row of a terminal item: its index, text and the
 * differing character ranges. */
export interface RowValue {
  row: number;
  text: string;
  ranges?: Range[];
}

/** Whether v is a screen row (a number row and a string text). */
export function isRow(v: unknown): v is RowValue {
  return !!v && typeof v === 'object' && typeof (v as RowValue).row === 'number' && typeof (v as RowValue).text === 'string';
}

/** The screen rows of v.rows; anything else in it is left out. */
export function rowsOf(v: unknown): RowValue[] {
  const rows = (v as { rows?: unknown } | null)?.rows;
  return Array.isArray(rows) ? rows.filter(isRow) : [];
}

/** The first divergence in words: what differs, e.g. "row 4: '✔ build
 * succeeded' → '✘ build failed'", or the differing fields of the two
 * items. */
export function divergenceWords(fd: FirstDivergence, differing?: readonly string[] | null): string {
  if (fd.status === 'none') return 'Nothing differs: every dimension is unchanged.';
  if (fd.status === 'unknown') return fd.reason;
  const dim = DIMENSION_LABEL[fd.dimension];
  if (fd.dimension === 'terminal') {
    const lrow = rowsOf(fd.left);
    const rrow = rowsOf(fd.right);
    const rowText = (v: unknown) => (isRow(v) ? v : null);
    const single = rowText(fd.left) ?? rowText(fd.right);
    if (single && !lrow.length && !rrow.length) {
      const l = rowText(fd.left);
      const r = rowText(fd.right);
      return `Final screen row ${single.row + 1}: ${l ? valueText(l.text.trimEnd()) : '(no row)'} → ${r ? valueText(r.text.trimEnd()) : '(no row)'}`;
    }
    const rows = [...new Set([...lrow, ...rrow].map((r) => r.row))].sort((a, b) => a - b);
    if (rows.length) {
      const r0 = rows[0]!;
      const l = lrow.find((r) => r.row === r0);
      const r = rrow.find((x) => x.row === r0);
      const more = rows.length > 1 ? ` (and ${rows.length - 1} more row${rows.length > 2 ? 's' : ''})` : '';
      return `Terminal row ${r0 + 1}: ${l ? valueText(l.text.trimEnd()) : '(blank)'} → ${r ? valueText(r.text.trimEnd()) : '(blank)'}${more}`;
    }
    const off = (fd.left as { offset?: number } | null)?.offset ?? (fd.right as { offset?: number } | null)?.offset;
    const data = (v: unknown) => ((v as { data?: unknown } | null)?.data as string | undefined) ?? '';
    return `Terminal output differs at byte ${off ?? '?'} (the screens look alike there): ${valueText(data(fd.left), 60)} → ${valueText(data(fd.right), 60)}`;
  }
  if (fd.left === null || fd.left === undefined) return `${dim}: only the right run has ${valueText(fd.right, 160)}`;
  if (fd.right === null || fd.right === undefined) return `${dim}: only the left run has ${valueText(fd.left, 160)}`;
  const fields = fieldDiffs(fd.left, fd.right, differing);
  if (fields) {
    const diff = fields.filter((f) => f.differs);
    const shown = diff.slice(0, 2).map((f) => `${f.key} ${valueText(f.left, 60)} → ${valueText(f.right, 60)}`);
    return `${dim} item ${fd.index + 1}: ${shown.join('; ')}${diff.length > 2 ? ` (+${diff.length - 2} fields)` : ''}`;
  }
  return `${dim} item ${fd.index + 1}: ${valueText(fd.left, 80)} → ${valueText(fd.right, 80)}`;
}

/** The character ranges to mark on each screen's rows: for every row
 * whose text differs (trailing padding ignored), its ranges. */
export function screenMarks(a: readonly string[], b: readonly string[]): { left: Map<number, Range[]>; right: Map<number, Range[]> } {
  const left = new Map<number, Range[]>();
  const right = new Map<number, Range[]>();
  const n = Math.max(a.length, b.length);
  const budget = { cells: 1 << 21 }; // per pair of screens: a few ms at most
  for (let i = 0; i < n; i++) {
    const x = (a[i] ?? '').trimEnd();
    const y = (b[i] ?? '').trimEnd();
    if (x === y) continue;
    const r = charRanges(x, y, budget);
    if (r.left.length) left.set(i, r.left);
    if (r.right.length) right.set(i, r.right);
  }
  return { left, right };
}
