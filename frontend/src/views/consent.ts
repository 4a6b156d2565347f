// The consent dialog: a modal over every view, raised by `proposal`, `plan`
// and `grant` events (and by the Pending* calls at start and after a
// reconnect). Single runs, workflow plans and capture grants share one
// queue ("1 of 3"); consent_requests.ts builds the plan and grant parts.
// Safety choices:
// - focus starts on the dialog itself, never on Approve, and Enter does
//   nothing by itself; Esc denies the shown pending request, except that
//   with a snapshot file open Esc closes the file first;
// - Approve stays disarmed for a moment whenever the shown request changes,
//   so a click meant for the previous card cannot approve a new one;
// - the rest of the app is `inert` while the dialog is open.

import { api, ApiError, onEvent, onReconnect } from '../api/client';
import type { GrantScope, GrantView, PlanView, ProposalView, RunEvent } from '../api/types';
import { h, icon, replace } from '../lib/dom';
import { countdown, formatBytes, formatDateTime, formatDuration, formatWhen, unwrap } from '../lib/format';
import { PROPOSAL_STATE, proposalState, runEventLabel, runStatus } from '../lib/labels';
import { badge, codeBlock, errorBox, hashChip, pathText, progressBar } from '../lib/ui';
import { grantDetails, grantState, grantTitle, planDetails, planState, planTitle } from './consent_requests';
import { notice, requestArrived, requestSettled } from '../attention/attention';
import { approvalBadge, invocationSummary, orderFiles, outputPreview } from '../lib/consent_model';
import { fileViewer, loadFile, type FileViewer } from './consent_files';
import { requestTrust } from '../lib/trust_request';

const ARM_DELAY_MS = 700;

type Kind = 'proposal' | 'plan' | 'grant';
type Req = ProposalView | PlanView | GrantView;

interface Card {
  kind: Kind;
  p: Req;
  deciding?: 'approve' | 'deny' | GrantScope;
  error?: unknown;
  /** The proposal left the pending list without an event reaching us. */
  gone?: boolean;
  /** The person has seen this card in its final, read-only form. */
  seenFinal?: boolean;
  /** This window sent the decision (else it came from another window). */
  decidedHere?: boolean;
  attemptId?: string;
  lastStep?: RunEvent;
  progress?: { completed: number; total?: number; message?: string };
  result?: string;
  /** The snapshot file open in the dialog's viewer. */
  viewer?: FileViewer;
  /** The finished run's validated output (first lines) or first error. */
  output?: { text: string; more: number } | null;
  outputError?: string;
}

/** States a person's decision leads to (expiry and the like are not). */
const DECIDED = new Set(['approved', 'denied', 'consumed']);

const TERMINAL_BEFORE_RUN = new Set(['denied', 'expired', 'stale', 'binding_changed', 'policy_refused', 'cancelled']);

let host: HTMLElement;
let appRoot: HTMLElement;
let cards: Card[] = [];
let current = 0;
let shownId = '';
let armedAt = 0;
let restoreFocus: HTMLElement | null = null;
let pendingListeners: ((n: number) => void)[] = [];
let tick: ReturnType<typeof setInterval> | undefined;

/** Starts the consent machinery: host receives the modal, app is made
 * inert while it is open. */
export function initConsent(modalHost: HTMLElement, app: HTMLElement): void {
  host = modalHost;
  appRoot = app;
  onEvent('proposal', (e) => {
    if (!e || !e.proposal) return;
    // The proposal's own state wins; the event type is the fallback.
    const state = (e.proposal.state in PROPOSAL_STATE ? e.proposal.state : e.type) as ProposalView['state'];
    upsert('proposal', { ...e.proposal, state: e.type === 'raised' ? e.proposal.state : state } as ProposalView, e.type);
  });
  onEvent('plan', (e) => {
    if (e && e.plan) upsert('plan', e.plan, e.type);
  });
  onEvent('grant', (e) => {
    if (e && e.grant) upsert('grant', e.grant, e.type);
  });
  onEvent('run', (e) => onRunEvent(e));
  onReconnect(() => void loadPending());
  document.addEventListener('keydown', onKey, true);
  void loadPending();
}

/** Follows the number of requests waiting for a decision. */
export function onPendingCount(cb: (n: number) => void): void {
  pendingListeners.push(cb);
  cb(pendingCount());
}

/** Shows the dialog again (e.g. from the header's pending badge). */
export function showConsent(): void {
  const i = cards.findIndex((c) => isPending(c));
  if (i >= 0) current = i;
  render();
}

/** Shows one request (e.g. the person clicked its notification). */
export function focusRequest(id: string): void {
  const i = cards.findIndex((c) => c.p.id === id);
  if (i < 0) {
    void loadPending().then(() => {
      const j = cards.findIndex((c) => c.p.id === id);
      if (j >= 0) go(cards[j]);
    });
    return;
  }
  go(cards[i]);
}

/** Applies an event about one request: updates its card, or adds a card
 * for a request raised (or still pending) that this window never showed.
 * A request decided in another window leaves this one's queue with a
 * short notice instead of staying modal here. */
function upsert(kind: Kind, p: Req, type: string): void {
  const existing = cards.find((c) => c.p.id === p.id);
  if (existing) {
    existing.gone = false;
    changeState(existing, p);
  } else if (type === 'raised' || p.state === 'pending') {
    add(kind, p);
    if (p.state === 'pending') requestArrived(kind, p);
  } else {
    return;
  }
  render();
}

/** Applies what one source (a request event, the run journal's `decided`
 * step, the deciding call's answer) says about a card's request. The
 * sources arrive in no fixed order, so the card leaving "pending" is
 * handled here once, whichever reports it first: its notification goes
 * away and, when a person decided it in another window, the card leaves
 * this window's queue with a short notice. */
function changeState(c: Card, next: Partial<Req>): void {
  const wasPending = c.p.state === 'pending';
  c.p = { ...c.p, ...next } as Req;
  if (!wasPending || c.p.state === 'pending') return;
  requestSettled(c.p.id);
  if (!c.decidedHere && !c.deciding && DECIDED.has(c.p.state)) {
    removeCard(c);
    notice(decidedElsewhere(c.kind, c.p));
  }
}

/** Takes a card out of the queue, keeping the shown card shown. */
function removeCard(c: Card): void {
  const shown = cards[current];
  cards = cards.filter((x) => x !== c);
  const i = shown ? cards.indexOf(shown) : -1;
  current = i >= 0 ? i : Math.min(current, Math.max(0, cards.length - 1));
}

/** The notice for a request another window decided. */
function decidedElsewhere(kind: Kind, p: Req): string {
  const what =
    kind === 'plan'
      ? `The workflow plan of ${p.agent.name || p.agent.id}`
      : kind === 'grant'
        ? `The capture request of ${p.agent.name || p.agent.id}`
        : `The request to run “${(p as ProposalView).skill}”`;
  const how = p.state === 'denied' ? 'denied' : 'approved';
  return `${what} was ${how} in another window.`;
}

async function loadPending(): Promise<void> {
  try {
    const [{ proposals }, { plans }, { grants }] = await Promise.all([api.PendingProposals({}), api.PendingPlans({}), api.PendingGrants({})]);
    const all: [Kind, Req][] = [
      ...proposals.map((p): [Kind, Req] => ['proposal', p]),
      ...plans.map((p): [Kind, Req] => ['plan', p]),
      ...grants.map((g): [Kind, Req] => ['grant', g]),
    ];
    const ids = new Set(all.map(([, p]) => p.id));
    for (const [kind, p] of all) {
      const c = cards.find((x) => x.p.id === p.id);
      if (c) c.p = p;
      else add(kind, p);
      requestArrived(kind, p); // once per request: also one waiting before this window opened
    }
    for (const c of cards) {
      if (isPending(c) && !ids.has(c.p.id)) c.gone = true;
    }
    render();
  } catch (e) {
    console.warn('gatehouse: could not load pending proposals', e);
  }
}

function add(kind: Kind, p: Req): void {
  cards.push({ kind, p });
  cards.sort((a, b) => Date.parse(a.p.createdAt) - Date.parse(b.p.createdAt));
  const shown = cards.findIndex((c) => c.p.id === shownId);
  if (shown >= 0) current = shown;
}

function isPending(c: Card): boolean {
  return c.p.state === 'pending' && !c.gone;
}

function locallyExpired(c: Card): boolean {
  return isPending(c) && Date.parse(c.p.expiresAt) <= Date.now();
}

function pendingCount(): number {
  return cards.filter(isPending).length;
}

function onRunEvent(e: RunEvent): void {
  if (!e) return;
  let changed = false;
  // The journal also reports decisions (including expiry, replacement and
  // cancellation). Use it too, so a card never stays "pending" when the
  // matching `proposal` event was lost on the way.
  if (e.type === 'decided' && e.detail && typeof e.detail === 'object') {
    const d = e.detail as { proposalId?: string; state?: string };
    const c = cards.find((x) => x.kind === 'proposal' && x.p.id === d.proposalId);
    if (c && c.p.state === 'pending' && d.state && d.state !== 'pending' && d.state in PROPOSAL_STATE) {
      c.gone = false;
      changeState(c, { state: d.state as ProposalView['state'] });
      changed = true;
    }
  }
  if (e.type === 'completed' && cards.some((c) => c.p.runId === e.runId && isPending(c))) void loadPending();
  for (const c of cards) {
    if (c.kind !== 'proposal' || c.p.runId !== e.runId || (c.p.state !== 'approved' && c.p.state !== 'consumed')) continue;
    if (e.type === 'proposed' || e.type === 'decided') continue;
    if (!c.attemptId) {
      if (e.skill && e.skill !== (c.p as ProposalView).skill) continue;
      c.attemptId = e.attemptId;
    } else if (e.attemptId !== c.attemptId) continue;
    c.lastStep = e;
    if (e.type === 'progress' && e.detail && typeof e.detail === 'object') c.progress = e.detail as Card['progress'];
    if (e.type === 'completed') {
      const d = e.detail as { status?: string } | undefined;
      c.result = d?.status ?? 'unknown';
      void loadOutput(c);
    }
    changed = true;
  }
  if (changed) render();
}

/** Fetches the finished attempt's record for its output (the completed
 * event carries only the status). */
async function loadOutput(c: Card): Promise<void> {
  try {
    const r = await api.ListRuns({ limit: 50, skill: (c.p as ProposalView).skill });
    const rec = r.runs.find((x) => x.attempt_id === c.attemptId);
    if (!rec) return;
    c.output = outputPreview(rec.envelope.output);
    const first = rec.envelope.errors?.[0];
    c.outputError = first ? `${first.code}: ${first.message}` : undefined;
  } catch (err) {
    c.outputError = `The output could not be loaded: ${err instanceof Error ? err.message : String(err)}`;
  }
  render();
}

/** Opens one snapshot file in the card's viewer. */
function openFile(c: Card, path: string, mode: 'file' | 'diff'): void {
  const v: FileViewer = { path, mode };
  c.viewer = v;
  render();
  focusViewer();
  void loadFile(c.p.id, v, () => {
    if (c.viewer === v) {
      render();
      focusViewer();
    }
  });
}

function focusViewer(): void {
  host.querySelector<HTMLElement>('[data-testid="consent-file-body"]')?.focus();
}

function closeFile(c: Card): void {
  const path = c.viewer?.path;
  c.viewer = undefined;
  render();
  if (path) host.querySelector<HTMLElement>(`[data-focus-key="file:${CSS.escape(path)}"]`)?.focus();
}

function onKey(e: KeyboardEvent): void {
  if (!host || host.hidden) return;
  const c = cards[current];
  if (!c) return;
  if (e.key === 'Escape' && c.viewer) {
    // An open file is the innermost layer: Esc closes it, wherever the
    // focus is in the dialog, and only an Esc with no file open denies.
    // (Denying on an Esc meant to close the file, because a click or a
    // re-render had moved the focus out of it, is the one mistake here
    // that cannot be taken back.)
    e.preventDefault();
    e.stopPropagation();
    closeFile(c);
    return;
  }
  if (e.key === 'Escape') {
    e.preventDefault();
    e.stopPropagation();
    if (isPending(c) && !c.deciding) void decide(c, false);
    else if (!isPending(c)) dismiss(c);
  } else if (e.key === 'Enter') {
    // Enter never approves: only an explicit click or Space/Enter on a
    // focused button acts, and focus never starts on Approve.
    const t = e.target as HTMLElement | null;
    if (!t || !(t instanceof HTMLButtonElement || t instanceof HTMLAnchorElement)) e.preventDefault();
  }
}

/** Sends the person's decision for the card's kind of request. A grant is
 * approved for a scope (once or session); everything else just approved. */
async function decide(c: Card, approve: boolean, scope?: GrantScope): Promise<void> {
  if (c.deciding) return;
  if (approve && (Date.now() - armedAt < ARM_DELAY_MS || locallyExpired(c))) return;
  c.deciding = approve ? (scope ?? 'approve') : 'deny';
  c.decidedHere = true;
  c.error = undefined;
  render();
  try {
    const v: Req =
      c.kind === 'plan'
        ? await api.DecidePlan({ planId: c.p.id, approve })
        : c.kind === 'grant'
          ? await api.DecideGrant({ grantId: c.p.id, approve, scope: approve ? scope : undefined })
          : await api.Decide({ proposalId: c.p.id, approve });
    changeState(c, v && v.id ? v : { state: approve ? 'approved' : 'denied' });
  } catch (err) {
    c.error = err;
    // The proposal may have expired or been replaced meanwhile: re-sync.
    if (err instanceof ApiError && err.details && typeof err.details === 'object' && 'state' in (err.details as object)) {
      changeState(c, { state: (err.details as { state: string }).state } as Partial<Req>);
    }
    void loadPending();
  } finally {
    c.deciding = undefined;
    render();
  }
}

/** A read-only card needs no more attention once seen, unless it is
 * still following a run that has not finished. */
function settled(c: Card): boolean {
  if (isPending(c)) return false;
  const following = c.kind === 'proposal' && (c.p.state === 'approved' || c.p.state === 'consumed') && !c.result;
  return !!c.seenFinal && !following;
}

/** Moves to another card, dropping settled cards left behind. */
function go(target: Card | undefined): void {
  cards = cards.filter((x) => x === target || !settled(x));
  current = target ? Math.max(0, cards.indexOf(target)) : 0;
  render();
}

function dismiss(c: Card): void {
  cards = cards.filter((x) => x !== c);
  const next = cards.find(isPending) ?? cards.find((x) => !settled(x)) ?? undefined;
  cards = cards.filter((x) => x === next || !settled(x));
  current = next ? cards.indexOf(next) : 0;
  render();
}

function render(): void {
  if (!host) return;
  pendingListeners.forEach((cb) => cb(pendingCount()));
  if (cards.length === 0) {
    close();
    return;
  }
  current = Math.max(0, Math.min(current, cards.length - 1));
  const c = cards[current];
  if (!isPending(c)) c.seenFinal = true;
  if (c.p.id !== shownId) {
    shownId = c.p.id;
    armedAt = Date.now();
    setTimeout(render, ARM_DELAY_MS + 20);
  }
  const wasOpen = !host.hidden;
  const prevScroll = host.querySelector('.consent-body')?.scrollTop ?? 0;
  const prevInvScroll = host.querySelector('[data-testid="consent-invocation"]')?.scrollTop ?? 0;
  const prevFile = host.querySelector<HTMLElement>('[data-testid="consent-file-body"]');
  const prevFileScroll = prevFile ? { path: prevFile.closest<HTMLElement>('[data-testid="consent-file"]')?.dataset.path, top: prevFile.scrollTop, left: prevFile.scrollLeft } : null;
  const prevCardId = host.querySelector<HTMLElement>('[data-testid="consent-dialog"]')?.dataset.proposalId;
  const hadFocusInside = host.contains(document.activeElement) ? document.activeElement : null;
  const focusKey = hadFocusInside instanceof HTMLElement ? hadFocusInside.dataset.focusKey : undefined;

  replace(host, dialog(c));
  if (!wasOpen) {
    restoreFocus = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    host.hidden = false;
    appRoot.inert = true;
    document.body.classList.add('modal-open');
  }
  if (prevCardId === c.p.id) {
    const body = host.querySelector('.consent-body');
    if (body) body.scrollTop = prevScroll;
    const inv = host.querySelector('[data-testid="consent-invocation"]');
    if (inv) inv.scrollTop = prevInvScroll;
    const fb = host.querySelector<HTMLElement>('[data-testid="consent-file-body"]');
    if (fb && prevFileScroll && fb.closest<HTMLElement>('[data-testid="consent-file"]')?.dataset.path === prevFileScroll.path) {
      fb.scrollTop = prevFileScroll.top;
      fb.scrollLeft = prevFileScroll.left;
    }
  }
  const dlg = host.querySelector<HTMLElement>('[data-testid="consent-dialog"]');
  const again = focusKey && prevCardId === c.p.id ? host.querySelector<HTMLElement>(`[data-focus-key="${focusKey}"]`) : null;
  if (again && !(again as HTMLButtonElement).disabled) again.focus();
  else if (!wasOpen || prevCardId !== c.p.id || !host.contains(document.activeElement)) dlg?.focus();
  ensureTick();
}

function close(): void {
  if (host.hidden) return;
  host.hidden = true;
  replace(host);
  appRoot.inert = false;
  document.body.classList.remove('modal-open');
  shownId = '';
  clearInterval(tick);
  tick = undefined;
  if (restoreFocus && document.contains(restoreFocus)) restoreFocus.focus();
  restoreFocus = null;
}

function ensureTick(): void {
  if (tick) return;
  tick = setInterval(() => {
    const c = cards[current];
    if (!c) return;
    const el = host.querySelector('[data-testid="consent-countdown"]');
    if (el && isPending(c)) {
      const left = Date.parse(c.p.expiresAt) - Date.now();
      el.textContent = countdown(left);
      el.classList.toggle('urgent', left < 60_000);
      if (left <= 0) render();
    }
  }, 1000);
}

function dialog(c: Card): HTMLElement {
  const pending = isPending(c);
  const approved = c.p.state === 'approved' || c.p.state === 'consumed';
  const st = approved && c.result
    ? { label: 'Approved', tone: 'ok' as const, text: 'You approved this run; Gatehouse ran it once and it has finished.' }
    : approved && c.lastStep
      ? { label: 'Approved', tone: 'ok' as const, text: 'You approved this run; it is running now. Cancel it from Runs if you need to.' }
      : c.gone
        ? { label: 'No longer waiting', tone: 'neutral' as const, text: 'This request is no longer waiting for a decision (it was decided, withdrawn or expired while this window was not connected).' }
        : c.kind === 'plan' ? planState(c.p.state) : c.kind === 'grant' ? grantState(c.p.state) : proposalState(c.p.state);
  const expiredHere = locallyExpired(c);
  const pendingTotal = pendingCount();
  const left = Date.parse(c.p.expiresAt) - Date.now();
  const p = c.p as ProposalView;
  const title =
    c.kind === 'plan'
      ? planTitle(c.p as PlanView, pending)
      : c.kind === 'grant'
        ? grantTitle(c.p as GrantView, pending)
        : pending ? `Run “${p.skill}”?` : `Request to run “${p.skill}”`;
  const subtitle =
    c.kind === 'plan'
      ? `${c.p.agent.name || c.p.agent.id} proposes a plan of exact skill runs. Approve allows each step once, as shown; anything else stays refused.`
      : c.kind === 'grant'
        ? `${c.p.agent.name || c.p.agent.id} asks to run a command in a recorded terminal (Process Capture).`
        : `${p.agent.name || p.agent.id} asks to run a script from this skill.`;

  const queueNav =
    cards.length > 1
      ? h(
          'div',
          { class: 'queue-nav', role: 'group', 'aria-label': 'Requests' },
          h('button', { type: 'button', class: 'btn ghost small', disabled: current === 0, onclick: () => go(cards[current - 1]), 'aria-label': 'Previous request' }, '‹'),
          h('span', { class: 'queue-pos', 'data-testid': 'consent-queue' }, `${current + 1} of ${cards.length}`),
          h('button', { type: 'button', class: 'btn ghost small', disabled: current === cards.length - 1, onclick: () => go(cards[current + 1]), 'aria-label': 'Next request' }, '›'),
        )
      : null;

  const head = h(
    'header',
    { class: 'consent-head' },
    h(
      'div',
      { class: 'consent-title' },
      h('h2', { id: 'consent-title' }, title),
      h('p', { class: 'muted small' }, subtitle, pendingTotal > 1 ? ` ${pendingTotal} requests are waiting.` : ''),
    ),
    queueNav,
    pending
      ? h(
          'div',
          { class: 'countdown-wrap', title: `Expires at ${formatDateTime(p.expiresAt)}` },
          h('span', { class: 'muted small' }, 'Expires in'),
          h('span', { class: ['countdown', 'mono', left < 60_000 ? 'urgent' : ''], 'data-testid': 'consent-countdown', role: 'timer', 'aria-live': 'off' }, countdown(left)),
        )
      : null,
  );

  const stateBox = h(
    'div',
    { class: ['consent-state', `tone-${expiredHere ? 'warn' : st.tone}`], 'data-testid': 'consent-state', dataset: { state: c.gone ? 'gone' : p.state }, role: 'status' },
    badge(expiredHere ? 'Expired' : st.label, expiredHere ? 'warn' : st.tone),
    h('span', null, expiredHere ? 'The 5-minute window has passed; this request can no longer be approved.' : st.text),
  );

  const details =
    c.kind === 'plan' ? planDetails(c.p as PlanView) : c.kind === 'grant' ? grantDetails(c.p as GrantView) : proposalDetails(c, p);
  const warning = h(
    'div',
    { class: 'consent-warning', role: 'note' },
    icon('warn'),
    h('p', null, unwrap(c.p.warning || 'This script runs with your full permissions.')),
  );

  return h(
    'div',
    {
      class: ['dialog', 'consent', `consent-${c.kind}`],
      role: 'dialog',
      'aria-modal': 'true',
      'aria-labelledby': 'consent-title',
      'aria-describedby': 'consent-warning-text',
      tabindex: '-1',
      'data-testid': 'consent-dialog',
      dataset: { proposalId: c.p.id, state: c.p.state, kind: c.kind },
    },
    head,
    h('div', { class: 'consent-body' }, pending ? h('div', { id: 'consent-warning-text' }, warning) : null, stateBox, !pending ? h('div', { id: 'consent-warning-text', class: 'sr-only' }, st.text) : null, details),
    footer(c, pending, expiredHere),
  );
}

function proposalDetails(c: Card, p: ProposalView): HTMLElement {
  const totalSize = p.files.reduce((n, f) => n + (f.size || 0), 0);
  const ap = approvalBadge(p.approval, formatDateTime);
  const changes = new Map((p.approval?.changes ?? []).map((ch) => [ch.path, ch.kind]));
  const removed = (p.approval?.changes ?? []).filter((ch) => ch.kind === 'removed');
  const summary = invocationSummary(p.invocation);
  const fileButton = (path: string, size: number | null, kind: string | undefined) =>
    h(
      'li',
      { class: [kind ? `changed-${kind}` : '', c.viewer?.path === path ? 'open' : ''] },
      h(
        'button',
        {
          type: 'button',
          class: 'file-open',
          'data-testid': 'consent-file-open',
          dataset: { path, focusKey: `file:${path}` },
          'aria-label': `Open ${path}${kind ? ` (${kind} since the approved revision)` : ''}`,
          'aria-pressed': String(c.viewer?.path === path),
          onclick: () => openFile(c, path, kind === 'modified' || kind === 'removed' ? 'diff' : 'file'),
        },
        h('code', { class: ['mono', path === p.entrypoint ? 'entry' : ''], title: path }, path),
        path === p.entrypoint ? h('span', { class: 'muted small' }, 'entrypoint') : null,
        kind ? badge(kind, 'warn') : null,
      ),
      h('span', { class: 'muted num' }, size === null ? '—' : formatBytes(size)),
    );
  const grid = h(
    'div',
    { class: 'consent-grid' },
    h(
      'dl',
      { class: 'kv consent-kv' },
      h('dt', null, 'Agent'),
      h('dd', null, h('strong', { 'data-testid': 'consent-agent' }, p.agent.name || p.agent.id), p.agent.name && p.agent.name !== p.agent.id ? h('span', { class: 'muted small' }, ' ', h('code', { class: 'mono' }, p.agent.id)) : null),
      h('dt', null, 'Skill'),
      h(
        'dd',
        null,
        h('strong', null, p.skill),
        p.description ? h('p', { class: 'skill-desc small', 'data-testid': 'consent-description' }, p.description) : null,
        h('div', null, pathText(p.skillRoot, 'small')),
      ),
      h('dt', null, 'Revision'),
      h(
        'dd',
        null,
        hashChip(p.revision, { testid: 'consent-revision' }),
        h('div', { class: 'approval-badge', 'data-testid': 'consent-approval', dataset: { status: p.approval?.status ?? 'unknown' }, title: ap.text }, badge(ap.label, ap.tone)),
      ),
      h('dt', null, 'Entrypoint'),
      h('dd', null, h('code', { class: 'mono' }, p.entrypoint)),
      h('dt', null, 'Runtime'),
      h('dd', null, pathText(p.runtime.path), ' ', h('span', { class: 'muted' }, p.runtime.version)),
      h('dt', null, 'Workspace'),
      h('dd', null, pathText(p.workspace)),
      h('dt', null, 'Limits'),
      h('dd', null, `${formatDuration(p.timeoutMs)} time · ${formatBytes(p.maxOutputBytes)} output`),
      h('dt', null, 'Asked'),
      h(
        'dd',
        null,
        h('span', { title: formatDateTime(p.createdAt) }, formatWhen(p.createdAt)),
        h('span', { class: 'muted' }, ' · expires '),
        h('span', { title: formatDateTime(p.expiresAt) }, formatWhen(p.expiresAt)),
      ),
      h('dt', null, 'Run'),
      h('dd', null, h('code', { class: 'mono small' }, p.runId)),
    ),
    h(
      'div',
      { class: 'consent-side' },
      h('h3', { class: 'label' }, 'Invocation (exact JSON the script receives)'),
      summary ? h('p', { class: 'invocation-summary small', 'data-testid': 'consent-invocation-summary' }, summary) : null,
      codeBlock(p.invocation, { testid: 'consent-invocation', label: 'Invocation JSON', cls: 'invocation' }),
      h('h3', { class: 'label' }, `Files (${p.files.length}, ${formatBytes(totalSize)}) — open one to read the bytes that will run`),
      p.files.length
        ? h(
            'ul',
            { class: 'file-list', 'data-testid': 'consent-files' },
            orderFiles(p.files, p.entrypoint).map((f) => fileButton(f.path, f.size, changes.get(f.path))),
            removed.map((ch) => fileButton(ch.path, null, 'removed')),
          )
        : h('p', { class: 'muted small' }, 'No files listed.'),
    ),
  );
  if (!c.viewer) return grid;
  const v = c.viewer;
  return h(
    'div',
    null,
    grid,
    fileViewer(
      v,
      (m) => {
        v.mode = m;
        render();
      },
      () => closeFile(c),
    ),
  );
}

function footer(c: Card, pending: boolean, expiredHere: boolean): HTMLElement {
  const f = h('footer', { class: 'consent-foot' });
  if (c.error) f.append(errorBox(c.error, 'The decision was not recorded:'));
  if (pending) {
    const armed = Date.now() - armedAt >= ARM_DELAY_MS;
    if (c.kind === 'grant') {
      f.append(...grantActions(c, armed, expiredHere));
      return f;
    }
    f.append(
      h(
        'p',
        { class: 'muted small hint' },
        c.kind === 'plan'
          ? 'Esc denies. Approve allows each step once, exactly as shown, in this agent connection.'
          : c.viewer
            ? 'Esc closes the open file; with no file open, Esc denies. Approve allows this one invocation, once.'
            : 'Esc denies. Approve allows this one invocation, once.',
      ),
      h(
        'div',
        { class: 'actions' },
        h(
          'button',
          { type: 'button', class: 'btn', 'data-testid': 'consent-deny', dataset: { focusKey: 'deny' }, disabled: !!c.deciding, onclick: () => void decide(c, false) },
          c.deciding === 'deny' ? 'Denying…' : 'Deny',
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'btn primary',
            'data-testid': 'consent-approve',
            dataset: { focusKey: 'approve' },
            disabled: !!c.deciding || expiredHere || !armed,
            onclick: () => void decide(c, true),
          },
          c.deciding === 'approve' ? 'Approving…' : c.kind === 'plan' ? 'Approve plan' : 'Approve',
        ),
      ),
    );
    return f;
  }
  const info = h('div', { class: 'run-follow' });
  if (c.kind === 'proposal' && (c.p.state === 'approved' || c.p.state === 'consumed')) {
    if (c.result) {
      const rs = runStatus(c.result);
      info.append(h('div', { class: 'run-result' }, badge(rs.label, rs.tone), h('span', null, rs.text)));
      if (c.output)
        info.append(
          h('div', { class: 'run-output', 'data-testid': 'consent-output' }, h('span', { class: 'label' }, 'Validated output'), codeBlock(c.output.text, { label: 'Run output', cls: 'output-preview' }), c.output.more ? h('p', { class: 'muted small' }, `${c.output.more} more line${c.output.more === 1 ? '' : 's'} in Runs.`) : null),
        );
      if (c.outputError) info.append(h('p', { class: 'small run-output-error', 'data-testid': 'consent-output-error' }, c.outputError));
      if (c.attemptId)
        info.append(
          h('a', { href: `#/runs/${encodeURIComponent(c.attemptId)}`, class: 'link', dataset: { focusKey: 'open-run' }, onclick: () => dismiss(c) }, 'Open this run in Runs →'),
        );
      const p = c.p as ProposalView;
      info.append(
        h(
          'button',
          {
            type: 'button',
            class: 'btn small trust-btn',
            'data-testid': 'consent-trust',
            dataset: { focusKey: 'trust' },
            title: 'Opens Security with a trusted-revision scope for this revision, agent and workspace filled in. Nothing changes until you save it there.',
            onclick: () => {
              dismiss(c);
              requestTrust({ skill: p.skill, revision: p.revision, agentId: p.agent.id, workspace: p.workspace, timeoutMsCeiling: p.timeoutMs, maxOutputBytesCeiling: p.maxOutputBytes });
            },
          },
          'Trust this revision…',
        ),
      );
    } else if (c.lastStep) {
      info.append(progressBar(c.progress, `${runEventLabel(c.lastStep.type)}…`), h('p', { class: 'muted small' }, `Last step: ${runEventLabel(c.lastStep.type)}`));
    } else {
      info.append(progressBar(undefined, 'Waiting for the run to start…'));
    }
  } else if (c.kind === 'proposal' && TERMINAL_BEFORE_RUN.has(c.p.state)) {
    info.append(h('p', { class: 'muted small' }, 'No script was started for this request.'));
  }
  f.append(
    info,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'btn', dataset: { focusKey: 'close' }, 'data-testid': 'consent-close', onclick: () => dismiss(c) }, pendingCount() > 0 ? 'Next request' : 'Close'),
    ),
  );
  return f;
}

/** The pending buttons of a capture grant: Deny, Allow once, Allow for
 * this session. Like Approve, both allow buttons arm after a delay. */
function grantActions(c: Card, armed: boolean, expiredHere: boolean): HTMLElement[] {
  const allow = (scope: GrantScope, label: string, busy: string, primary: boolean) =>
    h(
      'button',
      {
        type: 'button',
        class: ['btn', primary ? 'primary' : ''],
        'data-testid': `grant-${scope}`,
        dataset: { focusKey: scope },
        disabled: !!c.deciding || expiredHere || !armed,
        onclick: () => void decide(c, true, scope),
      },
      c.deciding === scope ? busy : label,
    );
  return [
    h('p', { class: 'muted small hint' }, 'Esc denies. “Allow once” allows this capture only; “for this session” also allows later captures of this connection inside the same limits.'),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'btn', 'data-testid': 'consent-deny', dataset: { focusKey: 'deny' }, disabled: !!c.deciding, onclick: () => void decide(c, false) }, c.deciding === 'deny' ? 'Denying…' : 'Deny'),
      allow('session', 'Allow for this session', 'Allowing…', false),
      allow('once', 'Allow once', 'Allowing…', true),
    ),
  ];
}

/** For tests and the header: the requests currently queued. */
export function queuedProposals(): Req[] {
  return cards.map((c) => c.p);
}

/** Resets module state (used when the shell re-initializes). */
export function resetConsent(): void {
  cards = [];
  current = 0;
  pendingListeners = [];
}
