// Pure helpers of the consent dialog (unit-tested): the file order, the
// approval badge's words, the summary line of a large invocation, a line
// diff of two revisions of a file, and the first lines of a run's output.
// What changed, and whether a revision was approved, is the backend's
// verdict (ProposalView.approval); these only present it.

import type { ApprovalView } from '../api/types';
import type { StateInfo } from './labels';

/** The files with the entrypoint first, the rest in the backend's order. */
export function orderFiles<T extends { path: string }>(files: T[], entrypoint: string): T[] {
  const entry = files.filter((f) => f.path === entrypoint);
  return entry.concat(files.filter((f) => f.path !== entrypoint));
}

/** The badge for how this revision relates to the approved ones. */
export function approvalBadge(a: ApprovalView | undefined, formatDate: (iso: string) => string): StateInfo {
  if (!a) return { label: 'Approval history unknown', tone: 'warn', text: 'Gatehouse did not say whether this revision was approved before.' };
  switch (a.status) {
    case 'new':
      return { label: 'New skill', tone: 'info', text: 'You have not approved any revision of this skill before.' };
    case 'same':
      return {
        label: `Same revision you approved on ${a.approvedAt ? formatDate(a.approvedAt) : 'an earlier date'}`,
        tone: 'ok',
        text: 'These are byte for byte the files of a revision you approved before.',
      };
    case 'changed': {
      const names = a.changes.map((c) => (c.kind === 'modified' ? c.path : `${c.path} (${c.kind})`));
      return {
        label: `Changed since the revision you approved${a.approvedAt ? ` on ${formatDate(a.approvedAt)}` : ''}: ${names.join(', ')}`,
        tone: 'warn',
        text: 'Some files differ from the last revision of this skill you approved; open them to see the difference.',
      };
    }
    default:
      return { label: 'Approval history unknown', tone: 'warn', text: a.error ? `Gatehouse could not read the approval history: ${a.error}` : 'Gatehouse could not read the approval history.' };
  }
}

/** An invocation counts as large past this many lines or bytes. */
export const LARGE_LINES = 16;
export const LARGE_BYTES = 2048;

const enc = new TextEncoder();

function bytesOf(v: unknown): number {
  return enc.encode(JSON.stringify(v) ?? '').length;
}

function sizeText(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return `array of ${v.length}`;
  if (v === null) return 'null';
  if (typeof v === 'object') return `object, ${Object.keys(v as object).length} keys`;
  if (typeof v === 'string') return `string of ${[...v].length} characters`;
  return typeof v;
}

/** The summary line of a large invocation: its top-level keys with their
 * kind and encoded size, biggest first; null for a small one (it is read
 * whole) or text that is not JSON. */
export function invocationSummary(text: string, maxKeys = 8): string | null {
  if (text.split('\n').length <= LARGE_LINES && enc.encode(text).length <= LARGE_BYTES) return null;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  const total = sizeText(bytesOf(v));
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return `${describe(v)}, ${total} in all`;
  const entries = Object.entries(v as Record<string, unknown>).map(([k, x]) => ({ k, x, n: bytesOf(x) }));
  entries.sort((a, b) => b.n - a.n || (a.k < b.k ? -1 : 1));
  const shown = entries.slice(0, maxKeys).map((e) => `${e.k} (${describe(e.x)}, ${sizeText(e.n)})`);
  const more = entries.length > maxKeys ? ` and ${entries.length - maxKeys} more` : '';
  return `${entries.length} top-level key${entries.length === 1 ? '' : 's'}, ${total} in all: ${shown.join(' · ')}${more}`;
}

export interface DiffLine {
  kind: 'same' | 'add' | 'del';
  text: string;
  /** Line numbers in the old and the new file (1-based). */
  oldNo?: number;
  newNo?: number;
}

/** Above this many LCS cells the diff is the plain replacement of the
 * differing middle (exact, only less minimal). */
export const MAX_DIFF_CELLS = 4_000_000;

/** A line diff of two texts: the common prefix and suffix, and one
 * longest common subsequence of the lines between them (hand-written: the
 * bundled libraries have none, and it is a few lines). */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = splitLines(before);
  const b = splitLines(after);
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  let s = 0;
  while (s < a.length - p && s < b.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  const out: DiffLine[] = [];
  for (let i = 0; i < p; i++) out.push({ kind: 'same', text: a[i]!, oldNo: i + 1, newNo: i + 1 });
  const ma = a.slice(p, a.length - s);
  const mb = b.slice(p, b.length - s);
  const n = ma.length;
  const m = mb.length;
  if (n * m > MAX_DIFF_CELLS || n === 0 || m === 0) {
    ma.forEach((t, i) => out.push({ kind: 'del', text: t, oldNo: p + i + 1 }));
    mb.forEach((t, j) => out.push({ kind: 'add', text: t, newNo: p + j + 1 }));
  } else {
    const w = m + 1;
    const t = new Int32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        t[i * w + j] = ma[i] === mb[j] ? t[(i + 1) * w + j + 1]! + 1 : Math.max(t[(i + 1) * w + j]!, t[i * w + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && ma[i] === mb[j]) {
        out.push({ kind: 'same', text: ma[i]!, oldNo: p + i + 1, newNo: p + j + 1 });
        i++;
        j++;
      } else if (i < n && (j === m || t[(i + 1) * w + j]! >= t[i * w + j + 1]!)) {
        out.push({ kind: 'del', text: ma[i]!, oldNo: p + i + 1 }); // deletions first, like diff -u
        i++;
      } else {
        out.push({ kind: 'add', text: mb[j]!, newNo: p + j + 1 });
        j++;
      }
    }
  }
  for (let k = 0; k < s; k++) {
    const ai = a.length - s + k;
    const bi = b.length - s + k;
    out.push({ kind: 'same', text: a[ai]!, oldNo: ai + 1, newNo: bi + 1 });
  }
  return out;
}

/** The lines of a text; a final newline does not start another line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The first lines of a run's validated output, pretty-printed. */
export function outputPreview(output: unknown, maxLines = 12): { text: string; more: number } | null {
  if (output === undefined) return null;
  const lines = (JSON.stringify(output, null, 2) ?? String(output)).split('\n');
  return { text: lines.slice(0, maxLines).join('\n'), more: Math.max(0, lines.length - maxLines) };
}
