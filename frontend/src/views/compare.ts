// Compare (#/compare): pick two saved captures (or open a comparison
// Evidence file), compare them through the facade, and study the result
// (evidence/compare_result.ts); plus asciicast export and import
// (evidence/asciicast_panel.ts).
//
// Routes: #/compare · #/compare/<left id>/<right id>[/exact] (compares at
// once, in behaviour mode unless /exact) ·
// #/compare/open/<comparison evidence id> · #/compare/recording/<id> (replays
// a saved imported asciicast recording).

import { api, onReconnect } from '../api/client';
import type { CompareMode, ComparisonView, EvidenceItem } from '../api/types';
import { AsciicastPanel } from '../evidence/asciicast_panel';
import { ComparisonPanel, issuesBox } from '../evidence/compare_result';
import { PREDICATE_CAPTURE } from '../evidence/record';
import { h, icon, replace, uid } from '../lib/dom';
import { formatDateTime, shortHash } from '../lib/format';
import { emptyState, errorBox, filePicker, loading } from '../lib/ui';
import type { View } from './view';

const COMPARISON_PREDICATES = ['gatehouse.process-comparison/v3', 'gatehouse.process-comparison/v4'];

/** A capture as a picker shows it: command, time, evidence id, and —
 * against the other side's capture — whether their comparison contracts
 * are equal (only then can they be compared). */
export function captureLabel(it: EvidenceItem, other?: EvidenceItem): string {
  const s = it.summary ?? {};
  const cmd = (s.command ?? it.operation).replace(/^\/(?:usr\/)?bin\//, '');
  const when = s.started_at ? formatDateTime(s.started_at) : formatDateTime(it.created_at);
  return `${cmd.length > 70 ? cmd.slice(0, 70) + '…' : cmd} · ${when} · ${shortHash(it.evidence_id, 10)}${contractNote(it, other)}`;
}

function contractNote(it: EvidenceItem, other?: EvidenceItem): string {
  const a = it.summary?.comparison_contract_sha256;
  const b = other?.summary?.comparison_contract_sha256;
  if (!other || other.evidence_id === it.evidence_id || !a || !b) return '';
  return a === b ? ' · ✓ same contract' : ' · ✗ other contract';
}

const MODES: { mode: CompareMode; label: string; help: string }[] = [
  { mode: 'behavior', label: 'Behaviour', help: 'Did the program behave differently? Output chunking, times, sample counts and how connections interleave are ignored.' },
  { mode: 'exact', label: 'Exact', help: 'Did the captures record the same observations? Item by item, times included.' },
];

export function compareView(): View {
  const el = h('div', { class: 'page compare-view evidence-view', tabindex: '-1' });
  let captures: EvidenceItem[] | null = null;
  let comparisons: EvidenceItem[] = [];
  let listError: unknown = null;
  let left = '';
  let right = '';
  let traceText = '';
  let traceName = '';
  let save = false;
  let mode: CompareMode = 'behavior';
  let busy: string | null = null;
  let panel: ComparisonPanel | null = null;
  const cast = new AsciicastPanel();

  const pickerHost = h('div');
  const statusHost = h('div', { class: 'cmp-status', 'aria-live': 'polite' });
  const resultHost = h('div');

  async function loadList(): Promise<void> {
    try {
      const r = await api.ListEvidence({});
      captures = r.evidence.filter((e) => e.predicate_type === PREDICATE_CAPTURE);
      comparisons = r.evidence.filter((e) => COMPARISON_PREDICATES.includes(e.predicate_type));
      listError = null;
      if (!left && !right && captures.length >= 2) {
        right = captures[0]!.evidence_id; // newest
        left = captures[1]!.evidence_id;
      }
    } catch (e) {
      listError = e;
    }
    renderPicker();
  }

  function setBusy(label: string | null): void {
    busy = label;
    replace(statusHost, label ? loading(label) : null);
    pickerHost.querySelectorAll<HTMLButtonElement>('button[data-busy-off]').forEach((b) => (b.disabled = !!label || (b.dataset.testid === 'compare-run' && !(left && right))));
  }

  async function show(view: ComparisonView): Promise<void> {
    panel?.destroy();
    panel = new ComparisonPanel(view);
    replace(resultHost, panel.el);
    try {
      await panel.start();
    } catch (e) {
      resultHost.append(errorBox(e, 'The captures could not be replayed.'));
    }
  }

  async function run(): Promise<void> {
    if (!left || !right || busy) return;
    setBusy('Comparing the two captures (re-verifying both)…');
    replace(resultHost);
    try {
      const v = await api.CompareCaptures({ left, right, mode, ...(traceText.trim() ? { traceSpec: traceText } : {}), ...(save ? { save: true } : {}) });
      setBusy(null);
      if (save) void loadList();
      history.replaceState(null, '', `#/compare/${left}/${right}${mode === 'exact' ? '/exact' : ''}`);
      await show(v);
    } catch (e) {
      setBusy(null);
      replace(resultHost, issuesBox(e, 'The comparison was refused.', 'compare-error'));
    }
  }

  async function open(args: { id?: string; text?: string }, what: string): Promise<void> {
    if (busy) return;
    setBusy(`Opening ${what} (re-verifying it and comparing again)…`);
    replace(resultHost);
    try {
      const v = await api.OpenComparison(args);
      setBusy(null);
      mode = v.result.mode ?? 'exact';
      if (v.left.available) left = v.left.evidence_id;
      if (v.right.available) right = v.right.evidence_id;
      renderPicker();
      await show(v);
    } catch (e) {
      setBusy(null);
      replace(resultHost, issuesBox(e, `${what} was rejected.`, 'compare-error'));
    }
  }

  function select(side: 'left' | 'right', id: string, label: string, term: string): HTMLElement {
    const fid = uid('cmp');
    const items = captures ?? [];
    const other = items.find((it) => it.evidence_id === (side === 'left' ? right : left));
    return h(
      'div',
      { class: 'field grow' },
      h('label', { for: fid }, label, h('span', { class: 'muted small' }, ` (${term})`)),
      h(
        'select',
        {
          id: fid,
          class: 'input',
          'data-testid': `compare-${side}`,
          onchange: (e: Event) => {
            const v = (e.target as HTMLSelectElement).value;
            if (side === 'left') left = v;
            else right = v;
            renderPicker();
          },
        },
        h('option', { value: '', selected: !id }, items.length ? 'Choose a capture…' : 'No captures yet'),
        items.map((it) => h('option', { value: it.evidence_id, selected: it.evidence_id === id }, captureLabel(it, other))),
      ),
    );
  }

  function renderPicker(): void {
    if (listError) {
      replace(pickerHost, errorBox(listError, 'Could not list the saved captures.'));
      return;
    }
    if (!captures) {
      replace(pickerHost, loading('Loading the saved captures…'));
      return;
    }
    const traceId = uid('trace');
    const traceFile = filePicker('.json,application/json', 'trace-file', 'Load a trace spec file', async (f) => {
      traceText = await f.text();
      traceName = f.name;
      renderPicker();
    });
    const openFile = filePicker('.json,application/json', 'open-comparison-file', 'Open a comparison Evidence file', async (f) => {
      void open({ text: await f.text() }, f.name);
    });
    const swap = h(
      'button',
      { type: 'button', class: 'btn ghost cmp-swap', 'data-testid': 'compare-swap', title: 'Swap the two sides', 'aria-label': 'Swap the two sides', onclick: () => (([left, right] = [right, left]), renderPicker()) },
      icon('swap'),
    );
    const li = captures.find((c) => c.evidence_id === left);
    const ri = captures.find((c) => c.evidence_id === right);
    const lc = li?.summary?.comparison_contract_sha256;
    const rc = ri?.summary?.comparison_contract_sha256;
    const contract =
      li && ri && li !== ri && lc && rc
        ? lc === rc
          ? h('p', { class: 'field-msg small', 'data-testid': 'contract-note' }, '✓ Equal comparison contracts: these two captures can be compared.')
          : h('p', { class: 'field-msg field-warn', 'data-testid': 'contract-note' }, '✗ Different comparison contracts (another scenario): the comparison will be refused.')
        : null;
    const modeSwitch = h(
      'div',
      { class: 'cmp-mode', role: 'radiogroup', 'aria-label': 'Comparison mode' },
      h('span', { class: 'small' }, 'Compare by'),
      MODES.map((m) =>
        h(
          'label',
          { class: ['cmp-mode-opt', mode === m.mode ? 'active' : ''], title: m.help },
          h('input', { type: 'radio', name: 'cmp-mode', value: m.mode, checked: mode === m.mode, 'data-testid': `compare-mode-${m.mode}`, onchange: () => ((mode = m.mode), renderPicker()) }),
          m.label,
        ),
      ),
      h('span', { class: 'muted small' }, MODES.find((m) => m.mode === mode)!.help),
    );
    const ready = !!left && !!right;
    const same = ready && left === right;
    const compareBtn = h(
      'button',
      { type: 'button', class: 'btn primary', 'data-testid': 'compare-run', 'data-busy-off': '1', disabled: !ready || !!busy, onclick: () => void run() },
      'Compare',
    );
    const saved = comparisons.length
      ? h(
          'select',
          {
            class: 'input small cmp-saved',
            'aria-label': 'Open a saved comparison',
            'data-testid': 'open-saved',
            onchange: (e: Event) => {
              const id = (e.target as HTMLSelectElement).value;
              if (id) location.hash = `#/compare/open/${id}`;
            },
          },
          h('option', { value: '' }, `Saved comparisons (${comparisons.length})…`),
          comparisons.map((c) => h('option', { value: c.evidence_id }, `${formatDateTime(c.created_at)} · ${String((c.summary as { status?: string }).status ?? '')} · ${shortHash(c.evidence_id, 10)}`)),
        )
      : null;
    replace(
      pickerHost,
      h(
        'section',
        { class: 'card cmp-picker', 'aria-label': 'Choose captures' },
        captures.length < 2
          ? emptyState(
              'Two captures are needed',
              h(
                'span',
                null,
                'Captures made with ',
                h('code', null, 'gatehouse capture-process'),
                ' (or by an agent) appear in the Evidence library; imported Process Capture Evidence works too. An imported asciicast is terminal-only and cannot be compared.',
              ),
              h('a', { href: '#/evidence', class: 'btn' }, 'Open the Evidence library'),
            )
          : null,
        h('div', { class: 'cmp-pick-row' }, select('left', left, 'Reference run', 'left · authority'), swap, select('right', right, 'Checked run', 'right · reconstruction')),
        contract,
        modeSwitch,
        same ? h('p', { class: 'field-msg field-warn' }, 'Both sides are the same capture: every dimension will be unchanged.') : null,
        h(
          'details',
          { class: 'cmp-trace-input', open: traceText.trim() !== '' },
          h('summary', null, 'Trace spec (optional)', traceName ? h('span', { class: 'muted small' }, ` · ${traceName}`) : null),
          h(
            'div',
            { class: 'field' },
            h('label', { for: traceId, class: 'field-help' }, 'Paste a trace spec (version 1) or load a file. Both captures are checked against it in journal order.'),
            h('textarea', {
              id: traceId,
              class: 'input mono',
              rows: '7',
              spellcheck: 'false',
              placeholder: '{"version": 1, "events": [...], "language": {"kind": "partial_order", ...}}',
              'data-testid': 'trace-spec',
              value: traceText,
              oninput: (e: Event) => {
                traceText = (e.target as HTMLTextAreaElement).value;
                traceName = '';
              },
            }),
            h(
              'div',
              { class: 'cmp-trace-actions' },
              h('button', { type: 'button', class: 'btn small', onclick: () => traceFile.click() }, 'Load file…'),
              traceFile,
              h('button', { type: 'button', class: 'btn small ghost', onclick: () => ((traceText = ''), (traceName = ''), renderPicker()) }, 'Clear'),
            ),
          ),
        ),
        h(
          'div',
          { class: 'cmp-actions' },
          compareBtn,
          h('label', { class: 'check-row' }, h('input', { type: 'checkbox', checked: save, 'data-testid': 'compare-save', onchange: (e: Event) => (save = (e.target as HTMLInputElement).checked) }), 'Save the comparison as Evidence'),
          h('span', { class: 'spacer' }),
          saved,
          h('button', { type: 'button', class: 'btn ghost', 'data-busy-off': '1', disabled: !!busy, onclick: () => openFile.click() }, 'Open comparison file…'),
          openFile,
        ),
      ),
    );
  }

  function onKey(e: KeyboardEvent): void {
    const t = e.target as HTMLElement;
    if (t.closest('input, textarea, select, [contenteditable]') || e.ctrlKey || e.metaKey || e.altKey) return;
    if (panel?.key(e)) e.preventDefault();
  }
  el.addEventListener('keydown', onKey);

  replace(
    el,
    h(
      'div',
      { class: 'page-head' },
      h('div', null, h('h1', null, 'Compare captures'), h('p', { class: 'muted' }, 'Two captures side by side on one clock: the seven dimension verdicts, the first divergence, the differences of each dimension and an optional trace spec.')),
    ),
    pickerHost,
    statusHost,
    resultHost,
    cast.el,
  );
  const offReconnect = onReconnect(() => void loadList());
  let listed = false;

  return {
    el,
    title: 'Compare',
    route(parts: string[]) {
      if (!listed) {
        listed = true;
        renderPicker();
      }
      const ready = loadList();
      if (parts[0] === 'recording' && parts[1]) {
        void cast.openSaved(decodeURIComponent(parts[1]));
      } else if (parts[0] === 'open' && parts[1]) {
        const id = decodeURIComponent(parts[1]);
        void ready.then(() => open({ id }, `comparison ${shortHash(id, 10)}`));
      } else if (parts.length === 2 || parts.length === 3) {
        const [l, r, m] = parts.map((p) => decodeURIComponent(p));
        const want: CompareMode = m === 'exact' ? 'exact' : 'behavior';
        if (l !== left || r !== right || want !== mode || !panel) {
          left = l!;
          right = r!;
          mode = want;
          void ready.then(() => run());
        }
      }
    },
    destroy() {
      el.removeEventListener('keydown', onKey);
      offReconnect();
      panel?.destroy();
      cast.destroy();
    },
  };
}
