// "New capture" in the Evidence library: a scenario editor (templates
// filled from the operator policy in effect), run as the local user with
// StartCapture, a progress bar with Cancel, and the saved capture opened
// when it is done. Whether a scenario is valid and allowed is the
// backend's answer (every failing path listed), never decided here.

import { api, ApiError, onEvent } from '../api/client';
import type { CaptureEvent, CaptureSettings, Issue } from '../api/types';
import { h, icon, replace, uid } from '../lib/dom';
import { errorBox } from '../lib/ui';
import { visibleString } from '../lib/visible';
import { captureProgress, scenarioTemplates, type ScenarioTemplate } from './capture_form';

type Phase = { kind: 'editing' } | { kind: 'starting' } | { kind: 'running'; id: string; command: string; last: CaptureEvent | null } | { kind: 'ended'; last: CaptureEvent };

/** The editor panel; `onClose` hides it (the library keeps the text). */
export class NewCapture {
  readonly el: HTMLElement;
  private templates: ScenarioTemplate[] = scenarioTemplates(null);
  private policy: CaptureSettings | null = null;
  private text = '';
  private phase: Phase = { kind: 'editing' };
  private problem: unknown = null;
  /** Events that arrived before StartCapture answered, by capture id. */
  private readonly early = new Map<string, CaptureEvent>();
  private readonly editor: HTMLTextAreaElement;
  private readonly status: HTMLElement;
  private readonly offEvent: () => void;
  private readonly onClose: () => void;

  constructor(onClose: () => void) {
    this.onClose = onClose;
    const edId = uid('scenario');
    this.editor = h('textarea', {
      id: edId,
      class: 'input mono ev-scenario',
      rows: 16,
      spellcheck: false,
      'data-testid': 'capture-scenario',
      'aria-describedby': `${edId}-help`,
      oninput: () => (this.text = this.editor.value),
    });
    this.status = h('div', { class: 'ev-capture-status', 'data-testid': 'capture-status', 'aria-live': 'polite' });
    this.el = h('section', { class: 'card ev-new-capture', 'data-testid': 'new-capture', 'aria-labelledby': `${edId}-h` });
    this.el.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && this.phase.kind !== 'running' && this.phase.kind !== 'starting') {
        e.preventDefault();
        this.onClose();
      }
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && this.phase.kind !== 'running') {
        e.preventDefault();
        void this.start();
      }
    });
    this.offEvent = onEvent('capture', (e) => this.onCapture(e));
    this.renderShell(edId);
    this.renderStatus();
    void this.loadPolicy();
  }

  /** Focuses the editor (when the panel opens). */
  focus(): void {
    this.editor.focus();
  }

  private async loadPolicy(): Promise<void> {
    try {
      this.policy = (await api.GetCapturePolicy({})).effective;
    } catch {
      this.policy = null; // the backend still answers StartCapture with its reasons
    }
    this.templates = scenarioTemplates(this.policy);
    if (this.text === '') this.useTemplate(this.templates[0]!.id);
    this.renderStatus();
  }

  private useTemplate(id: string): void {
    const t = this.templates.find((x) => x.id === id);
    if (!t) return;
    this.text = t.text;
    this.editor.value = t.text;
  }

  private renderShell(edId: string): void {
    const select = h(
      'select',
      { class: 'input small', 'data-testid': 'capture-template', 'aria-label': 'Template', onchange: (e: Event) => this.useTemplate((e.target as HTMLSelectElement).value) },
      this.templates.map((t) => h('option', { value: t.id }, t.label)),
    );
    replace(
      this.el,
      h(
        'header',
        { class: 'card-head' },
        h(
          'div',
          null,
          h('h2', { id: `${edId}-h` }, 'New capture'),
          h(
            'p',
            { class: 'card-desc', id: `${edId}-help` },
            'A Process Capture v4 scenario (JSON). It runs as you, under the capture operator policy (Security), in a real terminal; the Evidence is saved here and opened when done. ',
            h('a', { href: '#/security' }, 'Capture policy'),
          ),
        ),
        h('div', { class: 'card-actions' }, h('label', { class: 'filter' }, h('span', null, 'Template'), select)),
      ),
      h('label', { class: 'sr-only', for: edId }, 'Scenario JSON'),
      this.editor,
      this.status,
    );
  }

  private renderStatus(): void {
    const ph = this.phase;
    const out: (Node | null)[] = [];
    if (this.problem) out.push(this.problemBox(this.problem));
    if (ph.kind === 'running' || ph.kind === 'ended') {
      const ev = ph.kind === 'running' ? ph.last : ph.last;
      const p = ev ? captureProgress(ev) : { fraction: 0, label: 'Starting…' };
      const fill = h('span', { class: 'fill' });
      if (p.fraction !== null) fill.style.width = `${(p.fraction * 100).toFixed(1)}%`;
      const state = ev?.state ?? 'running';
      out.push(
        h(
          'div',
          { class: 'progress', 'data-testid': 'capture-progress', dataset: { state } },
          h(
            'div',
            {
              class: ['bar', p.fraction === null && state === 'saving' ? 'indeterminate' : ''],
              role: 'progressbar',
              'aria-label': 'Capture progress',
              'aria-valuemin': p.fraction !== null ? '0' : undefined,
              'aria-valuemax': p.fraction !== null ? '100' : undefined,
              'aria-valuenow': p.fraction !== null ? String(Math.round(p.fraction * 100)) : undefined,
            },
            fill,
          ),
          h('span', { class: 'progress-text small', 'data-testid': 'capture-progress-text' }, ph.kind === 'running' ? `${visibleString(ph.command)} — ${p.label}` : p.label),
        ),
      );
      if (ph.kind === 'ended' && ph.last.state === 'failed' && ph.last.error) out.push(this.problemBox(new ApiError(ph.last.error)));
    }
    const running = ph.kind === 'running' || ph.kind === 'starting';
    out.push(
      h(
        'div',
        { class: 'ev-capture-actions' },
        running
          ? h('button', { type: 'button', class: 'btn danger-outline', 'data-testid': 'capture-cancel', disabled: ph.kind === 'starting', onclick: () => void this.cancel() }, icon('x'), 'Cancel capture')
          : h('button', { type: 'button', class: 'btn primary', 'data-testid': 'capture-start', onclick: () => void this.start() }, 'Start capture'),
        running ? null : h('button', { type: 'button', class: 'btn', 'data-testid': 'capture-close', onclick: () => this.onClose() }, 'Close'),
        h('span', { class: 'muted small' }, running ? 'Cancel ends every process it started and saves nothing.' : 'Ctrl+Enter starts · Escape closes'),
      ),
    );
    const hadFocus = this.status.contains(document.activeElement);
    replace(this.status, ...out);
    this.editor.readOnly = running;
    if (hadFocus) this.status.querySelector<HTMLElement>('[data-testid="capture-cancel"], [data-testid="capture-start"]')?.focus();
  }

  /** The backend's refusal, with every failing path of the scenario. */
  private problemBox(err: unknown): HTMLElement {
    const e = err instanceof ApiError ? err : null;
    const issues = e && Array.isArray(e.details) ? (e.details as Issue[]) : [];
    if (e && e.code === 'invalid_scenario' && issues.length) {
      return h(
        'div',
        { class: 'ev-rejected', 'data-testid': 'capture-issues' },
        h('div', { class: 'alert tone-danger', role: 'alert' }, icon('warn'), h('div', null, h('strong', null, 'Not run. '), visibleString(e.message))),
        h(
          'ul',
          { class: 'ev-issues' },
          issues.map((is) =>
            h('li', { 'data-testid': 'capture-issue', dataset: { path: is.path } }, h('code', { class: 'mono ev-issue-path' }, visibleString(is.path)), ' ', h('span', { class: 'code-tag' }, is.code), ' ', h('span', { class: 'small' }, visibleString(is.message))),
          ),
        ),
      );
    }
    const box = errorBox(err, e?.category === 'permission' ? 'Not run: the capture policy or safe mode refused it.' : 'Not run.');
    box.dataset.testid = 'capture-refused';
    return box;
  }

  private async start(): Promise<void> {
    if (this.phase.kind === 'running' || this.phase.kind === 'starting') return;
    this.problem = null;
    this.phase = { kind: 'starting' };
    this.renderStatus();
    try {
      const r = await api.StartCapture({ scenario: this.editor.value });
      if (this.phase.kind !== 'starting') return;
      this.phase = { kind: 'running', id: r.capture_id, command: r.command, last: null };
      this.el.dataset.captureId = r.capture_id;
      const early = this.early.get(r.capture_id);
      this.early.clear();
      if (early) this.onCapture(early);
      if (this.phase.kind !== 'running') return;
    } catch (e) {
      this.problem = e;
      this.phase = { kind: 'editing' };
    }
    this.renderStatus();
    if (this.problem) this.status.querySelector<HTMLElement>('[role="alert"]')?.setAttribute('tabindex', '-1');
  }

  private async cancel(): Promise<void> {
    const ph = this.phase;
    if (ph.kind !== 'running') return;
    try {
      await api.CancelCapture({ capture_id: ph.id });
    } catch (e) {
      // Finished meanwhile: its outcome event says what happened.
      if (!(e instanceof ApiError && e.code === 'capture_not_found')) {
        this.problem = e;
        this.renderStatus();
      }
    }
  }

  private onCapture(e: CaptureEvent): void {
    const ph = this.phase;
    if (ph.kind === 'starting') {
      const prev = this.early.get(e.capture_id);
      if (!prev || prev.state === 'running' || prev.state === 'saving') this.early.set(e.capture_id, e);
      return;
    }
    if (ph.kind !== 'running' || e.capture_id !== ph.id) return;
    if (e.state === 'running' || e.state === 'saving') {
      ph.last = e;
      this.renderStatus();
      return;
    }
    this.phase = { kind: 'ended', last: e };
    this.renderStatus();
    if (e.state === 'done' && e.evidence_id) {
      this.phase = { kind: 'editing' };
      this.renderStatus();
      this.onClose();
      location.hash = `#/evidence/${encodeURIComponent(e.evidence_id)}`;
    }
  }

  destroy(): void {
    this.offEvent();
  }
}
