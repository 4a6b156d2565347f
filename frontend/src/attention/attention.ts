// Getting the person's attention when an agent's request waits (docs/api.md
// GetAttention; the desktop window does its own part in Go: urgency hint and
// freedesktop notifications). Here:
// - the tab title reads "(N) Approval needed · …" while N requests wait;
// - in browser mode, once the person allowed it, a browser notification
//   says which agent asks to run what when a request arrives while the page
//   is not focused; clicking it focuses the page and that request;
// - short notices (a request decided in another window);
// - the header's bell turns notifications on and off (a stored setting).

import { api, onEvent, shellKind } from '../api/client';
import type { GrantView, PlanView, ProposalView } from '../api/types';
import { h, icon } from '../lib/dom';
import './attention.css';

export type RequestKind = 'proposal' | 'plan' | 'grant';
type Req = ProposalView | PlanView | GrantView;

let baseTitle = typeof document !== 'undefined' ? document.title : '';
let waiting = 0;
let enabled = true;
let focusHandler: ((id: string) => void) | null = null;
const shown = new Map<string, Notification>();
let bell: HTMLButtonElement | null = null;
let noticeHost: HTMLElement | null = null;

/** The title the current view wants; the count is put in front of it. */
export function setBaseTitle(t: string): void {
  baseTitle = t;
  applyTitle();
}

/** Follows the number of requests waiting for a decision. */
export function setWaiting(n: number): void {
  waiting = n;
  applyTitle();
}

function applyTitle(): void {
  document.title = titleFor(waiting, baseTitle);
}

/** The tab title with n requests waiting. */
export function titleFor(n: number, base: string): string {
  return n > 0 ? `(${n}) Approval needed · ${base}` : base;
}

/** Starts following the setting and the desktop window's notification
 * clicks; onFocus shows one request (by id) in the consent dialog. */
export function initAttention(onFocus: (id: string) => void): HTMLButtonElement {
  focusHandler = onFocus;
  bell = h('button', { type: 'button', class: 'icon-btn attention-bell', 'data-testid': 'notifications-toggle', onclick: () => void toggle() });
  renderBell();
  void refresh().finally(() => knownNow());
  onEvent('settings', (e) => {
    if (e && e.what === 'attention') void refresh();
  });
  onEvent('attention', (e) => {
    if (e && typeof e.focus === 'string') onFocus(e.focus);
  });
  return bell;
}

// The setting is learnt from three sources that can overlap: the load at
// start, the `settings` event (another window or this one saved it) and
// this window's own save. Each read or save takes a number and an answer
// older than the newest one applied is dropped, so a slow read started
// before a save can never switch notifications back on after the person
// turned them off. A read answered while this window's save is on its way
// cannot tell whether it saw the save: it is dropped too, and the setting
// is read once more when the save is done.
let knownNow: () => void = () => {};
/** Settled once the first read of the setting answered (or failed). */
const settingKnown = new Promise<void>((resolve) => (knownNow = resolve));
let generation = 0;
let applied = 0;
let saving = 0;
let readDuringSave = false;

function apply(gen: number, value: boolean): void {
  if (gen < applied) return;
  applied = gen;
  enabled = value;
  renderBell();
}

async function refresh(): Promise<void> {
  const gen = ++generation;
  let value: boolean;
  try {
    value = (await api.GetAttention({})).notifications;
  } catch {
    return; // keep the last known value
  }
  if (saving > 0) readDuringSave = true;
  else apply(gen, value);
}

function browserPermission(): NotificationPermission | 'unsupported' {
  return shellKind() === 'browser' && typeof Notification !== 'undefined' ? Notification.permission : 'unsupported';
}

function renderBell(): void {
  if (!bell) return;
  const perm = browserPermission();
  const on = enabled && (shellKind() === 'desktop' || perm === 'granted');
  bell.replaceChildren(icon(on ? 'bell' : 'bellOff'));
  bell.classList.toggle('on', on);
  bell.setAttribute('aria-pressed', String(on));
  const label = !enabled
    ? 'Notifications are off: turn them on to hear about requests while Gatehouse is in the background'
    : perm === 'denied'
      ? 'This browser blocks notifications for Gatehouse; allow them in the site settings'
      : perm === 'default'
        ? 'Allow notifications about waiting requests'
        : 'Notifications are on: turn them off';
  bell.setAttribute('aria-label', label);
  bell.title = label;
}

async function toggle(): Promise<void> {
  const perm = browserPermission();
  // In a browser, "on" also needs the browser's permission, asked for
  // only now, on the person's click.
  const want = !enabled || (perm === 'default' && enabled);
  if (want && perm === 'default') {
    try {
      await Notification.requestPermission();
    } catch {
      /* old browsers: the callback form; treat as not granted */
    }
  }
  // The person's click counts at once: no notification is shown for a
  // request that arrives while the save is on its way. A failed save puts
  // back what the server holds.
  const gen = ++generation;
  apply(gen, want);
  saving++;
  let failed = false;
  try {
    apply(gen, (await api.SetAttention({ notifications: want })).notifications);
  } catch (e) {
    failed = true;
    console.warn('gatehouse: could not save the notification setting', e);
  } finally {
    saving--;
  }
  if (saving === 0 && (failed || readDuringSave)) {
    readDuringSave = false;
    void refresh();
  }
}

// Requests this window has already considered notifying about, and those
// no longer waiting; both only grow, by one id per request the page saw.
const considered = new Set<string>();
const settledIds = new Set<string>();

/** This window learnt of a request waiting for a decision: raised while
 * it was open, or already waiting when it opened or reconnected (nobody
 * may have noticed it yet: a tab opened in the background must not let
 * it expire unseen). In browser mode it notifies once per request, when
 * the page is not focused and only once the setting is known, so a page
 * that opens with notifications turned off never shows one. The desktop
 * window notifies from Go instead. */
export function requestArrived(kind: RequestKind, r: Req): void {
  if (considered.has(r.id)) return;
  considered.add(r.id);
  void settingKnown.then(() => {
    if (!settledIds.has(r.id)) notify(kind, r);
  });
}

function notify(kind: RequestKind, r: Req): void {
  if (!enabled || browserPermission() !== 'granted' || document.hasFocus()) return;
  const { title, body } = describe(kind, r);
  try {
    const n = new Notification(title, { body, tag: `gatehouse-${r.id}`, requireInteraction: true });
    n.onclick = () => {
      window.focus();
      focusHandler?.(r.id);
      n.close();
    };
    shown.set(r.id, n);
  } catch (e) {
    console.warn('gatehouse: notification failed', e);
  }
}

/** The request no longer waits: its notification goes away. */
export function requestSettled(id: string): void {
  settledIds.add(id);
  shown.get(id)?.close();
  shown.delete(id);
}

/** What a notification says about a request; every untrusted part is
 * made visible-only (plainText). */
export function describe(kind: RequestKind, r: Req): { title: string; body: string } {
  const who = `Agent “${plainText(r.agent.name || r.agent.id, 60)}”`;
  if (kind === 'plan') {
    const p = r as PlanView;
    const names = p.steps.slice(0, 4).map((s) => `“${plainText(s.skill, 40)}”`);
    if (p.steps.length > 4) names.push(`and ${p.steps.length - 4} more`);
    return { title: `Approval needed: a plan of ${p.steps.length} step${p.steps.length === 1 ? '' : 's'}`, body: `${who} proposes a workflow plan running ${names.join(', ')}.` };
  }
  if (kind === 'grant') {
    const g = r as GrantView;
    return { title: 'Approval needed: record a command', body: `${who} asks to run and record “${plainText(g.command.join(' '), 120)}” in a terminal.` };
  }
  const p = r as ProposalView;
  return { title: `Approval needed: ${plainText(p.skill, 60)}`, body: `${who} asks to run the skill “${plainText(p.skill, 80)}” (${plainText(p.entrypoint, 80)}).` };
}

/** Shows control characters, bidirectional controls and line separators
 * as visible \uXXXX escapes, and cuts the text to max characters. */
export function plainText(s: string, max: number): string {
  let out = '';
  let n = 0;
  for (const ch of s) {
    if (n >= max) return out + '…';
    n++;
    const c = ch.codePointAt(0)!;
    const live = c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x061c || c === 0x200e || c === 0x200f || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c === 0x2028 || c === 0x2029;
    out += live ? `\\u${c.toString(16).padStart(4, '0')}` : ch;
  }
  return out;
}

/** A short, self-dismissing line (e.g. "decided in another window"). */
export function notice(text: string): void {
  if (!noticeHost) {
    noticeHost = h('div', { class: 'attention-notices', role: 'status', 'aria-live': 'polite', 'data-testid': 'notices' });
    document.body.append(noticeHost);
  }
  const item = h(
    'div',
    { class: 'attention-notice', 'data-testid': 'notice' },
    h('span', null, text),
    h('button', { type: 'button', class: 'btn ghost small', 'aria-label': 'Dismiss', onclick: () => item.remove() }, '×'),
  );
  noticeHost.append(item);
  setTimeout(() => item.remove(), 8000);
}
