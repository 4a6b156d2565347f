// One capture opened from the library: the backend re-verifies the file
// on every read (a failing file is shown as rejected, never replayed);
// then the replay (Player + ReplayControls), the keyboard shortcuts and
// the panels, each linked to the timeline.

import { api, ApiError, callWithText } from '../api/client';
import type { EvidenceItem, Issue } from '../api/types';
import { h, icon, replace, uid } from '../lib/dom';
import { formatBytes, formatDateTime } from '../lib/format';
import { badge, emptyState, errorBox, hashChip, loading } from '../lib/ui';
import { ReplayControls } from './controls';
import { exitText, settlementTone } from './format';
import { PANELS, panelBody, type PanelContext, type PanelName } from './panels';
import { DEFAULT_IDLE_CAP_MS, Player } from './player';
import { PREDICATE_TERMINAL_RECORDING } from './asciicast';
import { PREDICATE_CAPTURE, terminalOf, type CaptureRecord, type EvidenceEnvelope } from './record';
import { adjacentMarker, lastAtOrBefore } from './timeline';
import { verdict, type CommitmentCheck } from './verify';
import { verifyInBackground, type Verification } from './verify_client';

/** Fired on the detail element after every seek made through the UI,
 * once the screen has been parsed and painted: detail {ms, latency}. */
export const SEEKED_EVENT = 'gatehouse:seeked';

/** The capture page. */
export class EvidenceDetail {
  readonly el: HTMLElement;
  readonly id: string;
  private item: EvidenceItem | null = null;
  private env: EvidenceEnvelope | null = null;
  private rec: CaptureRecord | null = null;
  private error: unknown = null;
  private player: Player | null = null;
  private panel: PanelName = 'events';
  private checks: CommitmentCheck[] | null = null;
  private checkError: string | null = null;
  private panelEl: HTMLElement | null = null;
  private controls: ReplayControls | null = null;
  private pending: number | null = null;
  private seekBusy = false;
  private currentRows: HTMLElement[] = [];
  private currentRow: HTMLElement | null = null;
  private disposed = false;
  private readonly offs: (() => void)[] = [];
  private verification: Verification | null = null;
  /** Milliseconds from the start of load() to the first screen shown. */
  openMs = 0;

  constructor(id: string) {
    this.id = id;
    this.el = h('div', { class: 'evidence-detail', 'data-testid': 'evidence-detail', dataset: { id } });
    const onKey = (e: KeyboardEvent) => this.onKey(e);
    document.addEventListener('keydown', onKey);
    this.offs.push(() => document.removeEventListener('keydown', onKey));
  }

  /** Opens the file: the backend checks it before handing it over; the
   * first screen (the poster frame) is shown at once, while a web worker
   * recomputes every commitment from its own copy of the exact text. The
   * page says "verified" only when the worker has answered. */
  async load(): Promise<void> {
    const started = performance.now();
    replace(this.el, this.back(), loading('Opening the Evidence file…'));
    let text: string | null = null;
    try {
      const r = await callWithText('GetEvidence', { id: this.id });
      this.el.dataset.fetchMs = (performance.now() - started).toFixed(1);
      if (this.disposed) return;
      text = r.text;
      this.item = r.result.item;
      this.env = r.result.evidence as EvidenceEnvelope;
      if (this.env.predicate_type === PREDICATE_CAPTURE) this.rec = this.env.normalized_result as CaptureRecord;
    } catch (e) {
      this.error = e;
    }
    this.render();
    if (this.env && !this.disposed) void this.verifyInBrowser(text, this.env, started);
    if (this.player && this.rec) {
      await this.player.load(this.rec, 'poster');
      await nextFrame();
      if (this.disposed) return;
      this.openMs = performance.now() - started;
      this.el.dataset.openMs = this.openMs.toFixed(1);
      this.el.dataset.poster = String(this.player.time);
      this.el.dataset.ready = 'true';
    }
  }

  private async verifyInBrowser(text: string | null, env: EvidenceEnvelope, started: number): Promise<void> {
    this.verification = verifyInBackground(text !== null ? { text, field: 'evidence' } : { envelope: env });
    this.el.dataset.verifiedIn = this.verification.where;
    const reply = await this.verification.done;
    if (this.disposed) return;
    if ('checks' in reply) this.checks = reply.checks;
    else this.checkError = `The commitments could not be recomputed in this browser: ${reply.error}`;
    const chip = this.el.querySelector('[data-testid="ev-browser-check"]');
    if (chip) replace(chip, this.verifyBadge());
    const alertHost = this.el.querySelector('[data-testid="ev-verify-alert"]');
    if (alertHost) replace(alertHost, this.verifyAlert());
    if (this.panel === 'commitments') this.renderPanel();
    this.el.dataset.verifiedMs = (performance.now() - started).toFixed(1);
    this.el.dataset.browserVerified = this.checkError ? 'error' : verdict(this.checks ?? []);
  }

  private back(): HTMLElement {
    return h('a', { href: '#/evidence', class: 'back-link' }, icon('back'), 'All Evidence');
  }

  /** The one verification badge: "verifying…" until the browser's own
   * check has answered, then verified or failed. */
  private verifyBadge(): HTMLElement {
    if (this.checkError) return badge('not verified: the browser check failed', 'danger', this.checkError);
    if (!this.checks)
      return badge('verifying in this browser…', 'neutral', 'Gatehouse checked the file before handing it over; this browser is recomputing every commitment in the background');
    const bad = this.checks.filter((c) => c.ok === false).length;
    const v = verdict(this.checks);
    if (v === 'incomplete') return badge('not verified: the browser check is incomplete', 'danger', 'The evidence id was not recomputed');
    return v === 'mismatch'
      ? badge(`verification failed: ${bad} commitment${bad === 1 ? '' : 's'} ✗`, 'danger', 'Recomputed in this browser: see Commitments')
      : badge('verified ✓', 'ok', 'Gatehouse re-checked the envelope, its evidence id and every record commitment and invariant, and this browser recomputed every commitment (WebCrypto SHA-256 over RFC 8785 JSON)');
  }

  /** A failed browser check is said above the replay, not only in a badge. */
  private verifyAlert(): HTMLElement | null {
    const bad = this.checks?.filter((c) => c.ok === false) ?? [];
    if (!this.checks && !this.checkError) return null; // still verifying
    if (!this.checkError && verdict(this.checks ?? []) === 'ok') return null;
    return h(
      'div',
      { class: 'alert tone-danger', role: 'alert', 'data-testid': 'ev-verify-failed' },
      icon('warn'),
      h(
        'div',
        null,
        h('strong', null, 'Not verified: do not rely on this replay. '),
        this.checkError ?? (bad.length ? `This browser recomputed the file's commitments and ${bad.length} differ${bad.length === 1 ? 's' : ''}: ` : 'This browser could not recompute the evidence id.'),
        bad.map((c, i) => [i ? ', ' : '', h('code', { class: 'mono' }, c.path)]),
      ),
    );
  }

  // ---- rendering --------------------------------------------------------

  /** What the library offers for verified Evidence that is not a process
   * capture: imported recordings and comparisons open in the Compare view,
   * which knows how to show them. */
  private notACapture(env: EvidenceEnvelope): HTMLElement {
    const id = encodeURIComponent(this.id);
    if (env.predicate_type === PREDICATE_TERMINAL_RECORDING)
      return emptyState(
        'Imported asciicast — terminal only',
        'This recording was imported from an asciicast file: only the terminal was recorded, so input, exit, processes, files, protocol and shims are unknown.',
        h('a', { href: `#/compare/recording/${id}`, class: 'btn primary', 'data-testid': 'ev-open-recording' }, 'Replay the recording'),
      );
    if (env.predicate_type.startsWith('gatehouse.process-comparison/'))
      return emptyState(
        'Comparison Evidence',
        'This file records a comparison of two captures; the Compare view re-checks it and shows both sides.',
        h('a', { href: `#/compare/open/${id}`, class: 'btn primary', 'data-testid': 'ev-open-comparison' }, 'Open the comparison'),
      );
    return emptyState('Not a process capture', `This Evidence (${env.operation}) is verified, but replay is for process captures (${PREDICATE_CAPTURE}).`);
  }

  private render(): void {
    if (this.error) {
      replace(this.el, this.back(), this.rejected(this.error));
      return;
    }
    const env = this.env;
    const item = this.item;
    if (!env || !item) return;
    if (!this.rec) {
      replace(
        this.el,
        this.back(),
        h('header', { class: 'ev-head' }, h('h1', null, env.predicate_type), h('div', { class: 'badges' }, h('span', { 'data-testid': 'ev-browser-check' }, this.verifyBadge()))),
        h('div', { 'data-testid': 'ev-verify-alert' }, this.verifyAlert()),
        this.notACapture(env),
      );
      return;
    }
    const rec = this.rec;
    const s = item.summary ?? {};
    const term = terminalOf(rec);
    const head = h(
      'header',
      { class: 'ev-head' },
      h('div', { class: 'detail-title' }, h('h1', { class: 'ev-title' }, h('code', { class: 'mono', title: s.command ?? '' }, s.command || env.operation))),
      h(
        'div',
        { class: 'badges' },
        h('span', { 'data-testid': 'ev-browser-check' }, this.verifyBadge()),
        badge(exitText(rec.exit), rec.exit.reason === 'exited' && rec.exit.code === 0 ? 'ok' : 'warn'),
        badge(`settlement ${rec.settlement.state.replace(/_/g, ' ')}`, settlementTone(rec.settlement.state)),
        rec.truncated ? badge('truncated', 'danger') : null,
        badge(item.origin, item.origin === 'imported' ? 'info' : 'neutral'),
      ),
      h(
        'p',
        { class: 'ev-meta muted small' },
        hashChip(item.evidence_id, { what: 'evidence id', len: 16 }),
        h('span', null, `started ${formatDateTime(rec.manifest.started_at)}`),
        h('span', null, `${term.columns}×${term.rows}`),
        h('span', null, `${rec.frames.length} raw / ${rec.rendered_frames.length} rendered frames`),
        h('span', null, formatBytes(item.size)),
      ),
    );
    this.player?.dispose();
    const player = new Player({ idleCapMs: DEFAULT_IDLE_CAP_MS, maxScale: 2.5 });
    this.player = player;
    const screenHost = h('div', { class: 'ev-screen', 'data-testid': 'player' });
    (screenHost as unknown as { gatehousePlayer: Player }).gatehousePlayer = player;
    this.controls?.dispose();
    this.controls = new ReplayControls(player, (ms) => void this.seek(ms));
    const replay = h('section', { class: 'ev-replay', 'aria-label': 'Replay', 'data-testid': 'ev-replay' }, screenHost, this.controls.el);
    this.controls.el.querySelector('.ev-controls-row')?.append(this.fullscreenButton(replay));
    const tabs = this.tabs();
    this.panelEl = h('div', { class: 'tab-panel ev-panel', role: 'tabpanel', tabindex: '-1', 'data-testid': 'ev-panel' });
    // The replay stays in view while the panels scroll (sticky above them,
    // or beside them on a wide window), so a clicked row's moment shows.
    const body = h('div', { class: 'ev-body' }, replay, h('section', { class: 'ev-panels', 'aria-label': 'Capture details' }, tabs, this.panelEl));
    replace(this.el, this.back(), head, h('div', { 'data-testid': 'ev-verify-alert' }, this.verifyAlert()), body);
    player.mount(screenHost);
    this.offs.push(
      player.onTime((ms) => this.showTime(ms)),
      player.onState((st) => (this.el.dataset.state = st)),
    );
    this.renderPanel();
  }

  /** Full screen for the replay (the screen and its controls); F toggles
   * it, Escape leaves it. */
  private fullscreenButton(replay: HTMLElement): HTMLElement {
    const btn = h('button', { type: 'button', class: 'btn small ev-fullscreen', 'data-testid': 'player-fullscreen', title: 'Full screen (F)', 'aria-pressed': 'false' }, 'Full screen');
    this.toggleFullscreen = () => {
      if (document.fullscreenElement === replay) void document.exitFullscreen().catch(() => {});
      else void replay.requestFullscreen?.().catch(() => {});
    };
    btn.addEventListener('click', this.toggleFullscreen);
    const onChange = () => {
      const on = document.fullscreenElement === replay;
      btn.textContent = on ? 'Exit full screen' : 'Full screen';
      btn.title = on ? 'Exit full screen (F or Escape)' : 'Full screen (F)';
      btn.setAttribute('aria-pressed', String(on));
      this.el.dataset.fullscreen = String(on);
    };
    document.addEventListener('fullscreenchange', onChange);
    this.offs.push(() => document.removeEventListener('fullscreenchange', onChange));
    return btn;
  }

  private toggleFullscreen: (() => void) | null = null;

  private rejected(err: unknown): HTMLElement {
    const e = err instanceof ApiError ? err : null;
    const issues = e && Array.isArray(e.details) ? (e.details as Issue[]) : [];
    if (e && (e.code === 'evidence_integrity_mismatch' || e.code === 'invalid_evidence')) {
      return h(
        'div',
        { class: 'ev-rejected', 'data-testid': 'evidence-rejected' },
        h('div', { class: 'alert tone-danger', role: 'alert' }, icon('warn'), h('div', null, h('strong', null, 'Rejected: not opened. '), e.message)),
        issues.length ? h('ul', { class: 'ev-issues' }, issues.map((is) => h('li', null, h('code', { class: 'mono ev-issue-path' }, is.path), ' ', h('span', { class: 'code-tag' }, is.code), ' ', h('span', { class: 'small' }, is.message)))) : null,
        e.code === 'evidence_integrity_mismatch' ? this.deleteRejected() : null,
      );
    }
    return errorBox(err, 'Could not open this Evidence.');
  }

  /** Removes a saved file that no longer verifies (two clicks). */
  private deleteRejected(): HTMLElement {
    let armed = false;
    const btn = h('button', { type: 'button', class: 'btn danger-outline small', 'data-testid': 'evidence-delete-rejected' }, 'Delete this file…');
    btn.addEventListener('click', async () => {
      if (!armed) {
        armed = true;
        btn.textContent = 'Confirm delete';
        btn.classList.replace('danger-outline', 'danger');
        return;
      }
      btn.disabled = true;
      btn.textContent = 'Deleting…';
      try {
        await api.DeleteEvidence({ id: this.id });
        location.hash = '#/evidence';
      } catch (err) {
        btn.replaceWith(errorBox(err, 'Could not delete the file.'));
      }
    });
    return h('p', null, btn);
  }

  private tabs(): HTMLElement {
    const rec = this.rec!;
    const list = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Capture details' });
    const ids = Object.fromEntries(PANELS.map((p) => [p.name, uid('evtab')]));
    for (const p of PANELS) {
      const n = p.count(rec);
      list.append(
        h(
          'button',
          {
            type: 'button',
            role: 'tab',
            id: ids[p.name],
            class: ['tab', this.panel === p.name && 'active'],
            'aria-selected': String(this.panel === p.name),
            tabindex: this.panel === p.name ? '0' : '-1',
            'data-testid': `ev-tab-${p.name}`,
            onclick: () => this.selectPanel(p.name),
            onkeydown: (e: KeyboardEvent) => {
              if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
              e.preventDefault();
              e.stopPropagation();
              const i = PANELS.findIndex((x) => x.name === this.panel);
              const next = PANELS[(i + (e.key === 'ArrowRight' ? 1 : PANELS.length - 1)) % PANELS.length]!.name;
              this.selectPanel(next);
              list.querySelector<HTMLElement>(`[data-testid="ev-tab-${next}"]`)?.focus();
            },
          },
          p.label,
          n !== null ? h('span', { class: 'ev-count' }, String(n)) : null,
        ),
      );
    }
    return list;
  }

  private selectPanel(name: PanelName): void {
    this.panel = name;
    this.el.querySelectorAll<HTMLElement>('[role="tab"]').forEach((t) => {
      const on = t.dataset.testid === `ev-tab-${name}`;
      t.classList.toggle('active', on);
      t.setAttribute('aria-selected', String(on));
      t.tabIndex = on ? 0 : -1;
    });
    this.renderPanel();
  }

  private renderPanel(): void {
    if (!this.panelEl || !this.rec || !this.player) return;
    const ctx: PanelContext = { rec: this.rec, duration: this.player.duration || this.durationGuess(), seek: (ms) => void this.seek(ms), checks: this.checks, checkError: this.checkError };
    replace(this.panelEl, panelBody(this.panel, ctx));
    this.currentRows = [...this.panelEl.querySelectorAll<HTMLElement>('[data-at]')].filter((r) => r.dataset.testid !== 'ev-checkpoint');
    this.currentRows.sort((a, b) => Number(a.dataset.at) - Number(b.dataset.at));
    this.currentRow = null;
    this.markCurrent(this.player.time);
  }

  private durationGuess(): number {
    const r = this.rec!;
    return Math.max(0, ...r.frames.map((f) => f.at_ms), ...r.filesystem_checkpoints.map((c) => c.at_ms));
  }

  private showTime(ms: number): void {
    this.controls?.showTime(ms);
    this.el.dataset.time = String(Math.round(ms));
    this.markCurrent(ms);
  }

  /** Marks the panel row of the latest observation at or before ms. */
  private markCurrent(ms: number): void {
    const i = lastAtOrBefore(this.currentRows, ms, (r) => Number(r.dataset.at));
    const row = i >= 0 ? this.currentRows[i]! : null;
    if (row === this.currentRow) return;
    this.currentRow?.classList.remove('is-current');
    row?.classList.add('is-current');
    this.currentRow = row;
  }

  /** Seeks through the UI: drags coalesce to the latest position; the
   * seeked event reports the latency up to the painted frame. */
  async seek(ms: number): Promise<void> {
    const player = this.player;
    if (!player) return;
    this.pending = ms;
    if (this.seekBusy) return;
    this.seekBusy = true;
    try {
      while (this.pending !== null && !this.disposed) {
        const target = this.pending;
        this.pending = null;
        const t0 = performance.now();
        await player.seek(target);
        await nextFrame();
        const latency = performance.now() - t0;
        this.el.dataset.seekMs = latency.toFixed(1);
        this.el.dispatchEvent(new CustomEvent(SEEKED_EVENT, { detail: { ms: player.time, latency } }));
      }
    } finally {
      this.seekBusy = false;
    }
  }

  private onKey(e: KeyboardEvent): void {
    const player = this.player;
    if (!player || !this.el.isConnected || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target as HTMLElement | null;
    // xterm.js focuses a hidden textarea when the terminal is clicked; the
    // replay takes no input, so shortcuts work there too.
    if (t && !t.closest('.xterm') && (t.closest('input, select, textarea, [contenteditable="true"]') || t.closest('.modal-host:not([hidden])'))) return;
    const modal = document.getElementById('modal-host');
    if (modal && !modal.hidden) return;
    const step = e.shiftKey ? 5000 : 1000;
    const tl = player.timeline;
    let handled = true;
    switch (e.key) {
      case ' ':
        if (t && t.closest('button, [role="tab"], tr.clickable, .clickable, a')) return;
        player.toggle();
        break;
      case 'ArrowLeft':
        if (t?.getAttribute('role') === 'tab') return;
        void this.seek(player.time - step);
        break;
      case 'ArrowRight':
        if (t?.getAttribute('role') === 'tab') return;
        void this.seek(player.time + step);
        break;
      case 'Home':
        void this.seek(0);
        break;
      case 'f':
      case 'F':
        this.toggleFullscreen?.();
        break;
      case 'End':
        void this.seek(player.duration);
        break;
      case '[':
      case ']': {
        const i = adjacentMarker(player.markers, player.time, e.key === ']' ? 1 : -1);
        if (i >= 0) void this.seek(player.markers[i]!.at);
        break;
      }
      case ',':
      case '.': {
        if (!tl) break;
        const times = [...new Set(tl.ops.map((o) => o.at).concat(tl.keyframes.map((k) => k.at)))].sort((a, b) => a - b);
        const now = player.time;
        const next = e.key === '.' ? times.find((x) => x > now + 0.5) : [...times].reverse().find((x) => x < now - 0.5);
        if (next !== undefined) void this.seek(next);
        break;
      }
      default:
        handled = false;
    }
    if (handled) e.preventDefault();
  }

  destroy(): void {
    this.disposed = true;
    this.verification?.cancel();
    if (document.fullscreenElement && this.el.contains(document.fullscreenElement)) void document.exitFullscreen().catch(() => {});
    this.offs.forEach((f) => f());
    this.controls?.dispose();
    this.player?.dispose();
    this.player = null;
  }
}

function nextFrame(): Promise<void> {
  return new Promise((r) => requestAnimationFrame(() => r()));
}
