// Small formatting helpers of the Evidence views.

import type { Tone } from '../lib/labels';
import { h } from '../lib/dom';
import { printable } from './timeline';

/** "exit 0", "exit 3", "signal SIGTERM", "timeout", "idle timeout". */
export function exitText(e: { code: number | null; signal: string | null; reason: string } | undefined): string {
  if (!e) return '—';
  if (e.reason === 'exited') return e.signal ? `signal ${e.signal}` : `exit ${e.code ?? '?'}`;
  return e.reason.replace(/_/g, ' ') + (e.signal ? ` (${e.signal})` : '');
}

export function settlementTone(state: string): Tone {
  return state === 'quiesced' ? 'ok' : state === 'alive_at_deadline' ? 'warn' : 'danger';
}

/** Capture time as m:ss.mmm (h:mm:ss.mmm past an hour). */
export function formatMs(ms: number): string {
  const t = Math.max(0, Math.round(ms));
  const milli = t % 1000;
  const s = Math.floor(t / 1000) % 60;
  const m = Math.floor(t / 60000) % 60;
  const hr = Math.floor(t / 3600000);
  const mm = hr ? String(m).padStart(2, '0') : String(m);
  return `${hr ? hr + ':' : ''}${mm}:${String(s).padStart(2, '0')}.${String(milli).padStart(3, '0')}`;
}

/** Redaction placeholders the capture writes instead of sensitive data. */
const PLACEHOLDER = /(<redacted-input:\d+-bytes>|<redacted-request-body>|<redacted>|<secret:[A-Za-z_][A-Za-z0-9_]*>)/;

/** Recorded text with control characters escaped and redaction
 * placeholders shown as placeholders (never anything else). */
export function recordedText(s: string, max = 200): HTMLElement {
  const el = h('code', { class: 'mono ev-data' });
  const parts = s.split(PLACEHOLDER);
  let left = max;
  for (const [i, p] of parts.entries()) {
    if (left <= 0) break;
    if (i % 2 === 1) {
      el.append(h('span', { class: 'ev-redacted', title: 'Sensitive data: only its placeholder is recorded' }, p));
      left -= p.length;
    } else if (p) {
      const t = printable(p, left);
      el.append(t);
      left -= t.length;
    }
  }
  if (!s) el.append(h('span', { class: 'muted' }, '(empty)'));
  return el;
}
