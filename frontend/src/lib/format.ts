// Pure formatting helpers (unit-tested in format.test.ts).

/** "sha256:3c791fc3…" → "3c791fc343b7" (12 hex digits, algorithm dropped). */
export function shortHash(rev: string | undefined | null, len = 12): string {
  if (!rev) return '';
  const i = rev.indexOf(':');
  const hex = i >= 0 ? rev.slice(i + 1) : rev;
  return hex.slice(0, len);
}

/** 1536 → "1.5 KiB"; exact bytes below 1 KiB. */
export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  const s = v >= 100 || Number.isInteger(v) ? v.toFixed(0) : v.toFixed(1).replace(/\.0$/, '');
  return `${s} ${units[u]}`;
}

/** Milliseconds → "850 ms", "1.2 s", "2 min 5 s". */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 0) ms = 0;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) {
    const s = ms / 1000;
    return `${s < 10 ? s.toFixed(1).replace(/\.0$/, '') : Math.round(s)} s`;
  }
  const totalS = Math.round(ms / 1000);
  const m = Math.floor(totalS / 60);
  const s = totalS % 60;
  if (m < 60) return s ? `${m} min ${s} s` : `${m} min`;
  const hr = Math.floor(m / 60);
  return `${hr} h ${m % 60} min`;
}

/** Remaining time as "mm:ss" (never negative; hours fold into minutes). */
export function countdown(msLeft: number): string {
  const total = Math.max(0, Math.ceil(msLeft / 1000));
  const m = Math.floor(total / 60);
  const s = total % 60;
  return `${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
}

/** Offset from a start, for timelines: "+0 ms", "+12 ms", "+1.3 s". */
export function relativeOffset(ms: number): string {
  return '+' + formatDuration(ms);
}

function parse(t: string | Date | null | undefined): Date | null {
  if (!t) return null;
  const d = t instanceof Date ? t : new Date(t);
  return Number.isNaN(d.getTime()) || d.getFullYear() <= 1 ? null : d;
}

/** Wall-clock time with seconds ("14:03:27"), locale-formatted. */
export function formatClock(t: string | Date | null | undefined): string {
  const d = parse(t);
  if (!d) return '—';
  return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** Date and time ("30 Nov 2026, 14:03:27"), locale-formatted. */
export function formatDateTime(t: string | Date | null | undefined): string {
  const d = parse(t);
  if (!d) return '—';
  return d.toLocaleString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

/** Compact time for tables: the clock today, else the date and clock. */
export function formatWhen(t: string | Date | null | undefined, now: Date = new Date()): string {
  const d = parse(t);
  if (!d) return '—';
  if (d.toDateString() === now.toDateString()) return formatClock(d);
  return d.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/** Date and clock for history tables ("30 Nov 2026, 14:03"), always with
 * the date so a row read later is unambiguous. */
export function formatStamp(t: string | Date | null | undefined): string {
  const d = parse(t);
  if (!d) return '—';
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/** Pretty-printed JSON for display; strings that hold JSON are re-indented. */
export function prettyJson(v: unknown): string {
  if (typeof v === 'string') {
    try {
      return JSON.stringify(JSON.parse(v), null, 2);
    } catch {
      return v;
    }
  }
  if (v === undefined) return '';
  return JSON.stringify(v, null, 2);
}

/** Joins the hard-wrapped lines of a server message into one paragraph
 * (paragraph breaks, i.e. blank lines, are kept). */
export function unwrap(text: string): string {
  return text
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s*\n\s*/g, ' ').trim())
    .join('\n\n');
}

/** "text_metrics-thing" is fine as is; snake_case codes become words. */
export function humanize(code: string): string {
  const s = code.replace(/[_-]+/g, ' ').trim();
  return s.charAt(0).toUpperCase() + s.slice(1);
}
