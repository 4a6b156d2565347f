// Security settings: execution policy (mode, safe mode, trusted revision
// scopes), agents, the Node runtime pin, skill roots and the process-capture
// operator policy. Every Save sends the whole object for its section; the
// server validates and applies it atomically, and field errors are shown
// next to the fields. The UI never sends a partial save: if a field cannot
// even be encoded (say, a ceiling that is not a number) nothing is sent.
// The load / render / save / "changed elsewhere" scaffold the sections
// share is SettingsSection in security_section.ts.

import { api, ApiError, onEvent } from '../api/client';
import type { Agent, CaptureFieldError, CapturePolicyResult, CaptureSettings, PathError, Policy, PolicyMode, RuntimeResult, Scope, SkillRootsResult, SkillSummary } from '../api/types';
import { h, icon, replace, uid } from '../lib/dom';
import { formatBytes, formatDateTime, shortHash } from '../lib/format';
import { groupErrors, linesToList, MODE_ORDER, MODES, normalizePath, policyChanges, policyForSave, scopeEdited } from '../lib/settings';
import { badge, card, copyButton, errorBox, fieldErrors, hashChip, kv, loading, pathText } from '../lib/ui';
import { fieldDetails, savedNote, SettingsSection } from './security_section';
import { confinementSection } from './security_confinement';
import { signingSection } from './security_signing';
import type { View } from './view';

const DEFAULT_TIMEOUT_CEILING = 30000;
const DEFAULT_OUTPUT_CEILING = 65536;

export function securityView(): View {
  const el = h('div', { class: 'page security-view' });
  const sections = {
    policy: h('div', { id: 'policy' }),
    agents: h('div', { id: 'agents' }),
    confinement: h('div', { id: 'confinement' }),
    runtime: h('div', { id: 'runtime' }),
    roots: h('div', { id: 'roots' }),
    capture: h('div', { id: 'capture' }),
    signing: h('div', { id: 'signing' }),
  };
  const jump = h(
    'nav',
    { class: 'jump', 'aria-label': 'Security sections' },
    [
      ['policy', 'Execution policy'],
      ['agents', 'Agents'],
      ['confinement', 'Script confinement'],
      ['runtime', 'Node runtime'],
      ['roots', 'Skill roots'],
      ['capture', 'Process capture'],
      ['signing', 'Evidence signing'],
    ].map(([id, label]) =>
      h(
        'a',
        {
          href: `#/security/${id}`,
          class: 'jump-link',
        },
        label,
      ),
    ),
  );
  el.append(
    h('header', { class: 'page-head' }, h('div', null, h('h1', null, 'Security'), h('p', { class: 'muted small' }, 'What agents may run, who they are, and what Gatehouse trusts. Each section saves on its own, all or nothing.')), jump),
    sections.policy,
    sections.agents,
    sections.confinement,
    sections.runtime,
    sections.roots,
    sections.capture,
    sections.signing,
  );

  const policy = policySection(sections.policy);
  // Every section loads on its own; jump to an anchor once all have drawn
  // (earlier, the sections above would still grow and push it away).
  const agents = agentsSection(sections.agents, () => policy.agentsChanged());
  const confinement = confinementSection(sections.confinement);
  const runtime = runtimeSection(sections.runtime);
  const roots = rootsSection(sections.roots);
  const capture = captureSection(sections.capture);
  const signing = signingSection(sections.signing);

  const off = onEvent('settings', (e) => {
    switch (e?.what) {
      case 'policy':
        policy.external();
        break;
      case 'agents':
        agents.reload();
        break;
      case 'runtime':
        runtime.reload();
        break;
      case 'roots':
        roots.external();
        break;
      case 'capture':
        capture.external();
        break;
      case 'security':
        confinement.external();
        break;
    }
  });

  return {
    el,
    title: 'Security',
    route(parts: string[]) {
      const id = parts[0] as keyof typeof sections | undefined;
      if (!id || !sections[id]) return;
      void Promise.all([policy.ready, agents.ready, confinement.ready, runtime.ready, roots.ready, capture.ready, signing.ready]).then(() =>
        requestAnimationFrame(() => sections[id].scrollIntoView({ block: 'start' })),
      );
    },
    destroy() {
      off();
    },
  };
}

// ---- execution policy ---------------------------------------------------

interface DraftScope extends Scope {
  key: string;
  /** The scope as loaded, when this row came from the server. */
  saved?: Scope;
  timeoutText: string;
  outputText: string;
}

function policySection(root: HTMLElement) {
  let saved: Policy | null = null;
  let draft: { mode: PolicyMode; safeMode: boolean; trusted: DraftScope[] } | null = null;
  let agents: Agent[] = [];
  let skills: SkillSummary[] = [];
  let errors = new Map<string, string[]>();
  let errorList: { path: string; message: string }[] = [];
  let savedLines: string[] = [];
  let keySeq = 0;
  const sec = new SettingsSection(root, {
    fetch: async () => {
      const [p, a, s] = await Promise.all([api.GetPolicy({}), api.ListAgents({}).catch(() => ({ agents: [] as Agent[] })), api.ListSkills({}).catch(() => ({ skills: [] as SkillSummary[], roots: [] }))]);
      saved = p;
      draft = toDraft(p);
      agents = a.agents;
      skills = s.skills;
    },
    view,
    dirty,
  });
  const render = () => sec.render();

  const toDraft = (p: Policy) => ({
    mode: p.mode,
    safeMode: p.safeMode,
    trusted: p.trusted.map((s) => ({ ...s, key: `k${++keySeq}`, saved: { ...s }, timeoutText: String(s.timeoutMsCeiling), outputText: String(s.maxOutputBytesCeiling) })),
  });

  function dirty(): boolean {
    if (!saved || !draft) return false;
    const before = JSON.stringify([saved.mode, saved.safeMode, saved.trusted.map((s) => [s.revision, s.agentId, s.workspace, String(s.timeoutMsCeiling), String(s.maxOutputBytesCeiling), s.receiptId])]);
    const now = JSON.stringify([draft.mode, draft.safeMode, draft.trusted.map((s) => [s.revision, s.agentId, s.workspace, s.timeoutText, s.outputText, s.receiptId])]);
    return before !== now;
  }

  function numbersOf(d: DraftScope): Scope {
    return { ...d, timeoutMsCeiling: Number(d.timeoutText), maxOutputBytesCeiling: Number(d.outputText) };
  }

  /** Cheap update after typing: no re-render (a re-render between
   * mousedown and click would swallow a click on Save). */
  function soft(): void {
    const isDirty = dirty();
    root.querySelectorAll<HTMLElement>('[data-dirty-only]').forEach((n) => (n.hidden = !isDirty));
    if (savedLines.length) {
      savedLines = [];
      root.querySelector('[data-testid="policy-saved"]')?.remove();
    }
  }

  /** The stored policy failed validation on read (corrupted, hand-edited,
   * or with a receipt Gatehouse cannot verify): every script is refused
   * until a valid policy is saved. Shows why, and offers a safe reset. */
  function invalidStored(e: ApiError): HTMLElement {
    const issues = Array.isArray(e.details) ? (e.details as { code: string; path: string; message: string }[]) : [];
    const reset = async () => {
      await sec.save(async () => {
        await api.SetPolicy({ policy: { mode: 'ask', safeMode: true, trusted: [] } });
      }, () => false);
      await sec.load();
    };
    return card(
      'Execution policy',
      { testid: 'policy-invalid' },
      errorBox(e, 'The stored policy is not valid, so no script runs.'),
      issues.length ? h('ul', { class: 'issues small' }, issues.map((i) => h('li', null, h('code', { class: 'mono' }, i.path), ' ', i.message, h('span', { class: 'code-tag' }, i.code)))) : null,
      h('p', { class: 'muted small' }, 'Replacing it discards the stored value, trusted scopes included; add them again afterwards.'),
      sec.saveError ? errorBox(sec.saveError, 'Nothing was saved.') : null,
      h('button', { type: 'button', class: 'btn', 'data-testid': 'policy-reset', disabled: sec.saving, onclick: () => void reset() }, 'Replace with: ask mode, safe mode on, no trusted scopes'),
    );
  }

  function view(): HTMLElement {
    if (sec.loadError instanceof ApiError && sec.loadError.code === 'policy_invalid') return invalidStored(sec.loadError);
    if (sec.loadError || !draft || !saved) return sec.placeholder('Execution policy', 'Could not load the policy.', 'Loading the policy…');
    const d = draft;
    const modeErr = errors.get('mode');
    const modeGroup = h(
      'fieldset',
      { class: 'modes', 'aria-describedby': modeErr ? 'mode-err' : undefined },
      h('legend', { class: 'label' }, 'Mode'),
      MODE_ORDER.map((m) =>
        h(
          'label',
          { class: ['mode-option', d.mode === m ? 'selected' : ''] },
          h('input', {
            type: 'radio',
            name: 'policy-mode',
            value: m,
            checked: d.mode === m,
            'data-testid': `security-mode-${m}`,
            dataset: { focusKey: `mode-${m}` },
            onchange: () => {
              d.mode = m;
              touched();
            },
          }),
          h('span', { class: 'mode-text' }, h('strong', null, MODES[m].label, saved!.mode === m ? h('span', { class: 'muted small' }, ' (saved)') : null), h('span', { class: 'muted small' }, MODES[m].line)),
        ),
      ),
      fieldErrors(modeErr, 'mode-err'),
    );
    const safeErr = errors.get('safeMode');
    const safe = h(
      'div',
      { class: ['safe-mode', d.safeMode ? 'on' : ''] },
      h(
        'label',
        { class: 'switch' },
        h('input', {
          type: 'checkbox',
          role: 'switch',
          checked: d.safeMode,
          'data-testid': 'security-safe-mode',
          dataset: { focusKey: 'safe' },
          onchange: (e: Event) => {
            d.safeMode = (e.target as HTMLInputElement).checked;
            touched();
          },
        }),
        h('span', { class: 'switch-track', 'aria-hidden': 'true' }),
        h('span', null, h('strong', null, 'Safe mode'), h('span', { class: 'muted small' }, d.safeMode ? ' — on: every script is refused, whatever the mode.' : ' — off. Turn it on to refuse every script at once, whatever the mode.')),
      ),
      fieldErrors(safeErr),
    );

    const table = scopesTable(d);
    const isDirty = dirty();
    const actions = h(
      'div',
      { class: 'save-row' },
      sec.saveButton('policy-save', 'Save policy', () => void save()),
      h('button', { type: 'button', class: 'btn ghost', hidden: !isDirty, 'data-dirty-only': true, disabled: sec.saving, onclick: () => ((draft = toDraft(saved!)), clearMessages(), render()) }, 'Discard changes'),
      h('span', { class: 'unsaved small', hidden: !isDirty, 'data-dirty-only': true }, 'Unsaved changes'),
    );
    const messages = h(
      'div',
      { class: 'save-messages' },
      sec.changedElsewhereNote('The policy was changed elsewhere. ', 'Load the saved policy', ' (your unsaved edits here are discarded).'),
      sec.notSaved(
        'policy-errors',
        errorList.length,
        `Fix ${errorList.length === 1 ? 'this problem' : `these ${errorList.length} problems`} and save again:`,
        errorList.length ? h('ul', { class: 'error-list' }, errorList.map((e) => h('li', null, h('code', { class: 'mono' }, e.path), ' ', e.message))) : null,
        true,
      ),
      savedLines.length ? savedNote('policy-saved', [h('strong', null, 'Saved. '), h('ul', { class: 'change-list' }, savedLines.map((l) => h('li', null, l)))], false) : null,
    );
    return card(
      'Execution policy',
      { description: 'Decides, before every launch, whether a script may run. Safe mode and the agent’s permission are checked first; consent is always one-use.' },
      modeGroup,
      safe,
      table,
      messages,
      actions,
    );
  }

  function scopesTable(d: NonNullable<typeof draft>): HTMLElement {
    const trustedMode = d.mode === 'trusted_revisions';
    const listId = uid('revs');
    const revs = skills.filter((s) => s.execution.revision);
    const datalist = h(
      'datalist',
      { id: listId },
      revs.map((s) => h('option', { value: s.execution.revision!, label: `${s.name} (current)` })),
    );
    const tableErr = errors.get('trusted');
    const rows = d.trusted.map((s, i) => scopeRow(s, i, listId, trustedMode));
    return h(
      'div',
      { class: 'scopes' },
      h(
        'div',
        { class: 'scopes-head' },
        h('h3', { class: 'label' }, `Trusted revisions (${d.trusted.length})`),
        h(
          'button',
          {
            type: 'button',
            class: 'btn small',
            'data-testid': 'scope-add',
            dataset: { focusKey: 'scope-add' },
            onclick: () => {
              const agentId = agents.find((a) => a.built_in)?.id ?? agents[0]?.id ?? 'local';
              d.trusted.push({
                key: `k${++keySeq}`,
                revision: '',
                agentId,
                workspace: '',
                timeoutMsCeiling: DEFAULT_TIMEOUT_CEILING,
                maxOutputBytesCeiling: DEFAULT_OUTPUT_CEILING,
                timeoutText: String(DEFAULT_TIMEOUT_CEILING),
                outputText: String(DEFAULT_OUTPUT_CEILING),
                receiptId: null,
                approvedAt: null,
              });
              touched();
              const rows = root.querySelectorAll<HTMLElement>('[data-testid="scope-revision"]');
              rows[rows.length - 1]?.focus();
            },
          },
          icon('plus'),
          'Add scope',
        ),
      ),
      h(
        'p',
        { class: 'muted small' },
        trustedMode
          ? 'A run whose revision, agent and workspace match a scope, within its ceilings, goes ahead without asking. Saving issues a receipt for each new or changed scope.'
          : 'These scopes only apply in Trusted revisions mode. Saved in another mode they stay drafts, with no receipt, and nothing runs without asking because of them.',
      ),
      fieldErrors(tableErr),
      datalist,
      d.trusted.length
        ? h(
            'div',
            { class: 'table-wrap' },
            h(
              'table',
              { class: 'table scopes-table' },
              h(
                'thead',
                null,
                h(
                  'tr',
                  null,
                  h('th', { scope: 'col' }, 'Skill revision'),
                  h('th', { scope: 'col' }, 'Agent'),
                  h('th', { scope: 'col' }, 'Workspace'),
                  h('th', { scope: 'col' }, 'Time ceiling'),
                  h('th', { scope: 'col' }, 'Output ceiling'),
                  h('th', { scope: 'col' }, 'Receipt'),
                  h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')),
                ),
              ),
              h('tbody', null, rows),
            ),
          )
        : h('p', { class: 'empty-inline muted' }, 'No trusted revisions. Add a scope to let one exact skill revision run without asking, for one agent in one workspace.'),
    );
  }

  function scopeRow(s: DraftScope, i: number, listId: string, trustedMode: boolean): HTMLElement {
    const err = (f: string) => errors.get(`trusted.${i}.${f}`);
    const rowErr = errors.get(`trusted.${i}`);
    const fk = (f: string) => `${s.key}-${f}`;
    const edited = s.saved ? scopeEdited(numbersOf(s), s.saved) : false;
    let receipt: Node;
    if (s.receiptId && !edited) {
      receipt = h(
        'div',
        { class: 'receipt' },
        h('span', { class: 'receipt-line' }, trustedMode ? badge('In force', 'ok') : badge('Not in force in this mode', 'warn'), ' ', h('code', { class: 'mono small', title: s.receiptId }, s.receiptId.slice(0, 8)), copyButton(s.receiptId, 'receipt id')),
        h('span', { class: 'muted small' }, `approved ${formatDateTime(s.approvedAt)}`),
      );
    } else if (s.receiptId && edited) {
      receipt = h('div', { class: 'receipt' }, badge('Edited', 'accent'), h('span', { class: 'muted small' }, trustedMode ? 'Saving revokes the old receipt and issues a new one.' : 'Saved as a draft: the old receipt is revoked.'));
    } else {
      receipt = h('div', { class: 'receipt' }, badge('Draft', 'warn'), h('span', { class: 'muted small draft-note' }, trustedMode && !s.saved ? 'Draft — receives a receipt when you save.' : 'Draft — not in force until saved in Trusted revisions mode'));
    }
    const knownAgent = agents.some((a) => a.id === s.agentId);
    return h(
      'tr',
      { class: ['scope-row', rowErr ? 'has-error' : ''], 'data-testid': 'scope-row', dataset: { draft: s.receiptId ? 'false' : 'true', index: String(i), scopeKey: s.key } },
      h(
        'td',
        { class: 'col-rev' },
        h('input', {
          type: 'text',
          class: ['input', 'mono', 'small', err('revision') ? 'invalid' : ''],
          value: s.revision,
          list: listId,
          placeholder: 'sha256:…',
          spellcheck: 'false',
          autocomplete: 'off',
          'aria-label': `Scope ${i + 1} revision`,
          'aria-invalid': err('revision') ? 'true' : undefined,
          'data-testid': 'scope-revision',
          dataset: { focusKey: fk('rev') },
          oninput: (e: Event) => {
            s.revision = (e.target as HTMLInputElement).value.trim();
            const hint = (e.target as HTMLElement).parentElement?.querySelector('.rev-hint');
            if (hint) replace(hint, revHint(s.revision));
            soft();
          },
          onchange: () => {
            const k = skills.find((x) => x.execution.revision === s.revision);
            if (k && !s.saved && s.timeoutText === String(DEFAULT_TIMEOUT_CEILING) && s.outputText === String(DEFAULT_OUTPUT_CEILING)) {
              // The skill's own manifest limits are a sensible start.
              void api
                .InspectSkill({ name: k.name })
                .then((ins) => {
                  const m = ins.execution.manifest;
                  if (m && s.timeoutText === String(DEFAULT_TIMEOUT_CEILING) && s.outputText === String(DEFAULT_OUTPUT_CEILING)) {
                    s.timeoutText = String(m.timeoutMs);
                    s.outputText = String(m.maxOutputBytes);
                    const row = root.querySelector(`[data-scope-key="${s.key}"]`);
                    const to = row?.querySelector<HTMLInputElement>('[data-testid="scope-timeout"]');
                    const out = row?.querySelector<HTMLInputElement>('[data-testid="scope-output"]');
                    if (to) to.value = s.timeoutText;
                    if (out) out.value = s.outputText;
                    soft();
                  }
                })
                .catch(() => {});
            }
          },
        }),
        h('div', { class: 'rev-hint small' }, revHint(s.revision)),
        fieldErrors(err('revision')),
        fieldErrors(rowErr),
      ),
      h(
        'td',
        null,
        h(
          'select',
          {
            class: ['input', 'small', err('agentId') ? 'invalid' : ''],
            'aria-label': `Scope ${i + 1} agent`,
            'aria-invalid': err('agentId') ? 'true' : undefined,
            'data-testid': 'scope-agent',
            dataset: { focusKey: fk('agent') },
            onchange: (e: Event) => {
              s.agentId = (e.target as HTMLSelectElement).value;
              touched();
            },
          },
          agents.map((a) => h('option', { value: a.id, selected: a.id === s.agentId }, `${a.name}${a.disabled ? ' (disabled)' : ''}`)),
          knownAgent ? null : h('option', { value: s.agentId, selected: true }, s.agentId ? `${s.agentId} (unknown agent)` : 'Choose…'),
        ),
        fieldErrors(err('agentId')),
      ),
      h(
        'td',
        null,
        h('input', {
          type: 'text',
          class: ['input', 'mono', 'small', err('workspace') ? 'invalid' : ''],
          value: s.workspace,
          placeholder: '/absolute/path',
          spellcheck: 'false',
          'aria-label': `Scope ${i + 1} workspace`,
          'aria-invalid': err('workspace') ? 'true' : undefined,
          'data-testid': 'scope-workspace',
          dataset: { focusKey: fk('ws') },
          oninput: (e: Event) => {
            s.workspace = (e.target as HTMLInputElement).value;
            soft();
          },
        }),
        fieldErrors(err('workspace')),
      ),
      ceilingCell(s, i, { field: 'timeoutMsCeiling', text: 'timeoutText', min: '1000', max: '120000', what: 'time ceiling in milliseconds', unit: 'ms', testid: 'scope-timeout', focusKey: fk('to') }),
      ceilingCell(
        s,
        i,
        { field: 'maxOutputBytesCeiling', text: 'outputText', min: '1', max: '262144', what: 'output ceiling in bytes', unit: 'bytes', testid: 'scope-output', focusKey: fk('out') },
        h('div', { class: 'muted small bytes-pretty' }, Number(s.outputText) >= 1024 ? formatBytes(Number(s.outputText)) : ''),
        (input) => {
          const n = Number(s.outputText);
          const pretty = input.closest('td')?.querySelector('.bytes-pretty');
          if (pretty) pretty.textContent = Number.isFinite(n) && n >= 1024 ? formatBytes(n) : '';
        },
      ),
      h('td', { 'data-testid': 'scope-receipt' }, receipt),
      h(
        'td',
        { class: 'row-actions' },
        h(
          'button',
          {
            type: 'button',
            class: 'icon-btn',
            'aria-label': `Remove scope ${i + 1}`,
            title: s.receiptId ? 'Remove (revokes its receipt when you save)' : 'Remove',
            'data-testid': 'scope-remove',
            dataset: { focusKey: fk('rm') },
            onclick: () => {
              draft!.trusted.splice(i, 1);
              touched();
              root.querySelector<HTMLElement>('[data-testid="scope-add"]')?.focus();
            },
          },
          icon('x'),
        ),
      ),
    );
  }

  /** A scope's ceiling cell: a whole-number input with its unit, an optional note under it, and its field errors. */
  function ceilingCell(
    s: DraftScope,
    i: number,
    o: { field: 'timeoutMsCeiling' | 'maxOutputBytesCeiling'; text: 'timeoutText' | 'outputText'; min: string; max: string; what: string; unit: string; testid: string; focusKey: string },
    note?: HTMLElement,
    typed?: (input: HTMLInputElement) => void,
  ): HTMLElement {
    const err = errors.get(`trusted.${i}.${o.field}`);
    return h(
      'td',
      null,
      h(
        'div',
        { class: 'unit-input' },
        h('input', {
          type: 'number',
          class: ['input', 'small', 'num-input', err ? 'invalid' : ''],
          value: s[o.text],
          min: o.min,
          max: o.max,
          step: '1',
          'aria-label': `Scope ${i + 1} ${o.what}`,
          'aria-invalid': err ? 'true' : undefined,
          'data-testid': o.testid,
          dataset: { focusKey: o.focusKey },
          oninput: (e: Event) => {
            const input = e.target as HTMLInputElement;
            s[o.text] = input.value;
            typed?.(input);
            soft();
          },
        }),
        h('span', { class: 'unit' }, o.unit),
      ),
      note,
      fieldErrors(err),
    );
  }

  function revHint(rev: string): (Node | string)[] {
    if (!rev) return [h('span', { class: 'muted' }, 'Pick a skill’s current revision or paste one')];
    const skill = skills.find((k) => k.execution.revision === rev);
    return [skill ? h('span', null, skill.name) : h('span', { class: 'muted' }, 'no current skill has this revision'), ' · ', h('code', { class: 'mono', title: rev }, shortHash(rev)), copyButton(rev, 'full revision')];
  }

  function touched(): void {
    savedLines = [];
    render();
  }

  function clearMessages(): void {
    errors = new Map();
    errorList = [];
    sec.saveError = null;
    savedLines = [];
  }

  async function save(): Promise<void> {
    if (!draft || !saved || sec.saving) return;
    clearMessages();
    // Encode everything first; if any field can't be encoded, send nothing.
    const local: { path: string; message: string }[] = [];
    const trusted: Scope[] = draft.trusted.map((s, i) => {
      const t = s.timeoutText.trim();
      const o = s.outputText.trim();
      if (!/^\d+$/.test(t)) local.push({ path: `$.trusted[${i}].timeoutMsCeiling`, message: 'Enter a whole number of milliseconds.' });
      if (!/^\d+$/.test(o)) local.push({ path: `$.trusted[${i}].maxOutputBytesCeiling`, message: 'Enter a whole number of bytes.' });
      return { revision: s.revision, agentId: s.agentId, workspace: s.workspace, timeoutMsCeiling: Number(t), maxOutputBytesCeiling: Number(o), receiptId: s.receiptId, approvedAt: s.approvedAt };
    });
    if (local.length) {
      errorList = local;
      errors = groupErrors(local, (e) => e.path);
      render();
      return;
    }
    const body = policyForSave({ mode: draft.mode, safeMode: draft.safeMode, trusted });
    const before = saved;
    await sec.save(
      async () => {
        const after = await api.SetPolicy({ policy: body });
        saved = after;
        draft = toDraft(after);
        savedLines = policyChanges(before, after).lines;
        sec.changedElsewhere = false;
      },
      (e) => {
        const details = fieldDetails<PathError>(e, 'invalid_policy');
        if (!details) return false;
        errorList = details.map((d) => ({ path: d.path, message: d.message }));
        errors = groupErrors(details, (d) => d.path);
        return true;
      },
    );
    if (errorList.length) root.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }

  const ready = sec.load();
  return {
    ready,
    external: () => sec.external(),
    agentsChanged(): void {
      void api
        .ListAgents({})
        .then((r) => {
          agents = r.agents;
          render();
        })
        .catch(() => {});
    },
  };
}

// ---- agents -------------------------------------------------------------

function agentsSection(root: HTMLElement, changed: () => void) {
  let list: Agent[] | null = null;
  let addName = '';
  let addExec = true;
  let addError: unknown = null;
  let adding = false;
  let token: { agent: Agent; token: string } | null = null;
  let confirmDelete = '';
  const rowError = new Map<string, unknown>();
  const busy = new Set<string>();
  const sec = new SettingsSection(root, {
    fetch: async () => {
      list = (await api.ListAgents({})).agents;
    },
    view,
  });
  const reload = () => sec.load();
  const render = () => sec.render();

  async function act(a: Agent, fn: () => Promise<unknown>): Promise<void> {
    busy.add(a.id);
    rowError.delete(a.id);
    render();
    try {
      await fn();
      changed();
    } catch (e) {
      rowError.set(a.id, e);
    } finally {
      busy.delete(a.id);
      await reload();
    }
  }

  async function add(): Promise<void> {
    if (adding) return;
    addError = null;
    if (!addName.trim()) {
      addError = new Error('Give the agent a name.');
      render();
      root.querySelector<HTMLElement>('[data-testid="agent-add-name"]')?.focus();
      return;
    }
    adding = true;
    render();
    try {
      token = await api.AddAgent({ name: addName.trim(), canExecuteSkills: addExec });
      addName = '';
      changed();
    } catch (e) {
      addError = e;
    } finally {
      adding = false;
      await reload();
      root.querySelector<HTMLElement>('[data-testid="agent-token"]')?.focus();
    }
  }

  function view(): HTMLElement {
    const table = sec.loadError
      ? errorBox(sec.loadError, 'Could not list agents.')
      : !list
        ? loading('Loading agents…')
        : h(
            'div',
            { class: 'table-wrap' },
            h(
              'table',
              { class: 'table' },
              h('thead', null, h('tr', null, h('th', null, 'Name'), h('th', null, 'Id'), h('th', null, 'Can run scripts'), h('th', null, 'Status'), h('th', null, 'Created'), h('th', null, h('span', { class: 'sr-only' }, 'Actions')))),
              h(
                'tbody',
                null,
                list.map((a) =>
                  h(
                    'tr',
                    { 'data-testid': 'agent-row', dataset: { id: a.id, name: a.name } },
                    h('td', { class: 'nowrap' }, h('strong', null, a.name), a.built_in ? [' ', badge('built-in', 'neutral', 'You, acting from this app or the CLI')] : null),
                    h('td', null, h('code', { class: 'mono small' }, a.id)),
                    h('td', null, a.can_execute_skills ? 'Yes' : h('span', { class: 'muted' }, 'No')),
                    h('td', null, a.disabled ? badge('Disabled', 'neutral') : badge('Enabled', 'ok')),
                    h('td', { class: 'nowrap' }, a.created_at ? formatDateTime(a.created_at) : h('span', { class: 'muted' }, '—')),
                    h(
                      'td',
                      { class: 'row-actions' },
                      confirmDelete === a.id
                        ? h(
                            'span',
                            { class: 'confirm', role: 'group', 'aria-label': `Confirm deleting ${a.name}` },
                            h('span', { class: 'small' }, 'Delete? Its token stops working. '),
                            h('button', { type: 'button', class: 'btn danger small', 'data-testid': 'agent-delete-confirm', dataset: { focusKey: `del-yes-${a.id}` }, onclick: () => ((confirmDelete = ''), void act(a, () => api.RemoveAgent({ id: a.id }))) }, 'Delete'),
                            h('button', { type: 'button', class: 'btn ghost small', dataset: { focusKey: `del-no-${a.id}` }, onclick: () => ((confirmDelete = ''), render()), onkeydown: (e: KeyboardEvent) => e.key === 'Escape' && ((confirmDelete = ''), render()) }, 'Keep'),
                          )
                        : [
                            h(
                              'button',
                              {
                                type: 'button',
                                class: 'btn small',
                                'data-testid': 'agent-toggle',
                                dataset: { focusKey: `tog-${a.id}` },
                                disabled: busy.has(a.id),
                                onclick: () => void act(a, () => api.SetAgentDisabled({ id: a.id, disabled: !a.disabled })),
                              },
                              a.disabled ? 'Enable' : 'Disable',
                            ),
                            a.built_in
                              ? null
                              : h(
                                  'button',
                                  {
                                    type: 'button',
                                    class: 'btn ghost small danger-text',
                                    'data-testid': 'agent-delete',
                                    dataset: { focusKey: `del-${a.id}` },
                                    disabled: busy.has(a.id),
                                    onclick: () => {
                                      confirmDelete = a.id;
                                      render();
                                      root.querySelector<HTMLElement>(`[data-focus-key="del-no-${CSS.escape(a.id)}"]`)?.focus();
                                    },
                                  },
                                  'Delete…',
                                ),
                          ],
                      rowError.has(a.id) ? errorBox(rowError.get(a.id)) : null,
                    ),
                  ),
                ),
              ),
            ),
          );
    const nameId = uid('agent-name');
    const form = h(
      'form',
      {
        class: 'inline-form',
        onsubmit: (e: Event) => {
          e.preventDefault();
          void add();
        },
      },
      h('div', { class: 'field' }, h('label', { for: nameId }, 'New agent name'), h('input', { id: nameId, type: 'text', class: 'input', value: addName, placeholder: 'e.g. claude-desktop', 'data-testid': 'agent-add-name', dataset: { focusKey: 'add-name' }, maxlength: '128', oninput: (e: Event) => (addName = (e.target as HTMLInputElement).value) })),
      h('label', { class: 'check-row' }, h('input', { type: 'checkbox', checked: addExec, 'data-testid': 'agent-add-exec', onchange: (e: Event) => (addExec = (e.target as HTMLInputElement).checked) }), h('span', null, 'Can ask to run skill scripts')),
      h('button', { type: 'submit', class: 'btn', 'data-testid': 'agent-add', disabled: adding }, adding ? 'Adding…' : 'Add agent'),
    );
    const tokenBox = token
      ? h(
          'div',
          { class: 'token-box', role: 'region', 'aria-label': 'New agent token' },
          h('div', { class: 'alert tone-warn' }, icon('warn'), h('div', null, h('strong', null, `Token for “${token.agent.name}”, shown only this once. `), 'Copy it now and give it to the agent. Gatehouse keeps only a hash: if you lose it, delete the agent and add it again. Anyone with this token can ask to run scripts as this agent.')),
          h('div', { class: 'token-row' }, h('input', { type: 'text', readonly: true, class: 'input mono', value: token.token, 'aria-label': 'Agent token', 'data-testid': 'agent-token', onfocus: (e: Event) => (e.target as HTMLInputElement).select() }), copyButton(token.token, 'token', 'agent-token-copy'), h('button', { type: 'button', class: 'btn small', onclick: () => ((token = null), render()) }, 'I have stored it')),
        )
      : null;
    return card(
      'Agents',
      { description: 'Identities that MCP and API callers authenticate as. An agent can never read or change these settings.' },
      table,
      tokenBox,
      form,
      addError ? errorBox(addError, 'Not added:') : null,
    );
  }

  const ready = reload();
  return { ready, reload: () => void reload() };
}

// ---- runtime ------------------------------------------------------------

function runtimeSection(root: HTMLElement) {
  let rt: RuntimeResult | null = null;
  let path = '';
  let busy = false;
  let err: unknown = null;
  let done = '';
  const sec = new SettingsSection(root, {
    fetch: async () => {
      rt = await api.GetRuntime({});
    },
    view,
  });
  const render = () => sec.render();

  async function repin(): Promise<void> {
    busy = true;
    err = null;
    done = '';
    render();
    try {
      const before = rt?.pin?.sha256;
      rt = await api.RepinRuntime(path.trim() ? { path: path.trim() } : {});
      done = rt.pin ? (rt.pin.sha256 === before ? `Re-pinned: same binary (Node ${rt.pin.version}).` : `Pinned Node ${rt.pin.version} at ${rt.pin.path}.`) : 'Re-pinned.';
    } catch (e) {
      err = e;
    } finally {
      busy = false;
      render();
    }
  }

  function view(): HTMLElement {
    const pathId = uid('node-path');
    const status = rt ? (rt.ok ? badge('OK', 'ok', 'The pinned file still matches its digest') : badge('Problem', 'danger')) : null;
    const body = sec.loadError
      ? errorBox(sec.loadError, 'Could not read the runtime pin.')
      : !rt
        ? loading('Reading the runtime pin…')
        : h(
            'div',
            { class: 'stack' },
            rt.problem ? h('div', { class: 'alert tone-danger small' }, icon('warn'), h('div', null, rt.problem)) : null,
            rt.pin
              ? kv([
                  ['path', pathText(rt.pin.path)],
                  ['version', rt.pin.version],
                  ['digest', hashChip('sha256:' + rt.pin.sha256.replace(/^sha256:/, ''), { len: 16, what: 'digest' })],
                  ['pinned', formatDateTime(rt.pin.pinned_at)],
                ])
              : h('p', { class: 'muted' }, 'No Node runtime is pinned; scripts cannot run until one is.'),
            h(
              'form',
              {
                class: 'inline-form',
                onsubmit: (e: Event) => {
                  e.preventDefault();
                  void repin();
                },
              },
              h('div', { class: 'field grow' }, h('label', { for: pathId }, 'Node binary (optional)'), h('input', { id: pathId, type: 'text', class: 'input mono', value: path, placeholder: 'Empty: the node found on PATH', spellcheck: 'false', oninput: (e: Event) => (path = (e.target as HTMLInputElement).value) })),
              h('button', { type: 'submit', class: 'btn', 'data-testid': 'runtime-repin', disabled: busy }, busy ? 'Pinning…' : 'Re-pin'),
            ),
            err ? errorBox(err, 'Not re-pinned:') : null,
            done ? savedNote(undefined, done) : null,
          );
    return card('Node runtime', { description: 'Scripts run only with this exact Node binary (path, version and SHA-256). Re-pin after you upgrade Node.', actions: status ? [status] : [] }, body);
  }

  const ready = sec.load();
  return { ready, reload: () => void sec.load() };
}

// ---- skill roots --------------------------------------------------------

function rootsSection(root: HTMLElement) {
  let saved: SkillRootsResult | null = null;
  let draft: string[] = [];
  let errors = new Map<string, string[]>();
  let done = '';

  const dirty = () => !!saved && (saved.roots.length !== draft.length || saved.roots.some((r, i) => r !== draft[i]));
  const sec = new SettingsSection(root, {
    fetch: async () => {
      saved = await api.GetSkillRoots({});
      draft = [...saved.roots];
    },
    view,
    dirty,
  });
  const render = () => sec.render();

  async function save(): Promise<void> {
    errors = new Map();
    sec.saveError = null;
    done = '';
    const before = saved?.roots ?? [];
    await sec.save(
      async () => {
        const after = await api.SetSkillRoots({ roots: draft.map((r) => r.trim()).filter((r) => r !== '') });
        saved = after;
        const added = after.roots.filter((r) => !before.includes(r)).length;
        const removed = before.filter((r) => !after.roots.includes(r)).length;
        draft = [...after.roots];
        done = added || removed ? `Saved: ${added} added, ${removed} removed. The skill list is reloaded.` : 'Saved; the order or nothing changed.';
      },
      (e) => {
        const details = fieldDetails<PathError>(e, 'invalid_roots');
        if (details) errors = groupErrors(details, (d) => d.path);
        return errors.size > 0;
      },
    );
  }

  function view(): HTMLElement {
    if (sec.loadError || !saved) return sec.placeholder('Skill roots', 'Could not read the skill roots.', 'Reading the skill roots…');
    const listErr = errors.get('roots');
    const problems = [...errors.entries()].reduce((n, [, m]) => n + m.length, 0);
    return card(
      'Skill roots',
      { description: 'Folders that hold skills. When two roots have a skill with the same name, the later root wins.' },
      h(
        'ol',
        { class: 'roots-list' },
        h('li', { class: 'root-item bundled' }, badge('bundled', 'neutral'), pathText(saved.bundled), h('span', { class: 'muted small' }, 'ships with Gatehouse, always first')),
        draft.length === 0 ? h('li', { class: 'muted small' }, 'No folders of your own yet. Add one to make its skills available; it must be an absolute path to an existing directory.') : null,
        draft.map((r, i) => {
          const e = errors.get(`roots.${i}`);
          return h(
            'li',
            { class: 'root-item', 'data-testid': 'root-row' },
            h('input', {
              type: 'text',
              class: ['input', 'mono', e ? 'invalid' : ''],
              value: r,
              placeholder: '/absolute/path/to/skills',
              spellcheck: 'false',
              'aria-label': `Skill root ${i + 1}`,
              'aria-invalid': e ? 'true' : undefined,
              'data-testid': 'root-input',
              dataset: { focusKey: `root-${i}` },
              oninput: (ev: Event) => {
                draft[i] = (ev.target as HTMLInputElement).value;
              },
            }),
            h('button', { type: 'button', class: 'icon-btn', 'aria-label': `Move root ${i + 1} up`, title: 'Move up (loses to later roots)', disabled: i === 0, dataset: { focusKey: `up-${i}` }, onclick: () => (([draft[i - 1], draft[i]] = [draft[i], draft[i - 1]]), render()) }, icon('up')),
            h('button', { type: 'button', class: 'icon-btn', 'aria-label': `Move root ${i + 1} down`, title: 'Move down (wins over earlier roots)', disabled: i === draft.length - 1, dataset: { focusKey: `down-${i}` }, onclick: () => (([draft[i + 1], draft[i]] = [draft[i], draft[i + 1]]), render()) }, icon('down')),
            h('button', { type: 'button', class: 'icon-btn', 'aria-label': `Remove root ${i + 1}`, title: 'Remove', dataset: { focusKey: `rm-${i}` }, onclick: () => (draft.splice(i, 1), render()) }, icon('x')),
            fieldErrors(e),
          );
        }),
      ),
      fieldErrors(listErr),
      sec.changedElsewhereNote('The skill roots were changed elsewhere. ', 'Load them'),
      sec.notSaved('roots-errors', problems, `Fix the ${problems === 1 ? 'marked root' : 'marked roots'} and save again.`),
      done ? savedNote('roots-saved', done) : null,
      h(
        'div',
        { class: 'save-row' },
        h('button', { type: 'button', class: 'btn small', 'data-testid': 'root-add', dataset: { focusKey: 'root-add' }, onclick: () => (draft.push(''), render(), root.querySelector<HTMLElement>(`[data-focus-key="root-${draft.length - 1}"]`)?.focus()) }, icon('plus'), 'Add root'),
        sec.saveButton('roots-save', 'Save roots', () => void save()),
        h('button', { type: 'button', class: 'btn ghost', onclick: () => ((draft = [...saved!.roots]), (errors = new Map()), (done = ''), render()) }, 'Discard changes'),
      ),
    );
  }

  const ready = sec.load();
  return { ready, external: () => sec.external() };
}

// ---- process capture ----------------------------------------------------

const CAPTURE_ENV: Record<keyof CaptureSettings, string> = {
  enabled: 'GATEHOUSE_PROCESS_CAPTURE_ENABLED',
  executableRoots: 'GATEHOUSE_PROCESS_EXECUTABLE_ROOTS_JSON',
  workingRoots: 'GATEHOUSE_PROCESS_WORKING_ROOTS_JSON',
  allowedEnv: 'GATEHOUSE_PROCESS_ALLOWED_ENV_JSON',
  allowExternalNetwork: 'GATEHOUSE_PROCESS_ALLOW_EXTERNAL_NETWORK',
  autoGrant: 'GATEHOUSE_PROCESS_CAPTURE_AUTO_GRANT',
};

function captureSection(root: HTMLElement) {
  let res: CapturePolicyResult | null = null;
  let draft: { enabled: boolean; allowExternalNetwork: boolean; autoGrant: boolean; executableRoots: string; workingRoots: string; allowedEnv: string } | null = null;
  let errors = new Map<string, string[]>();
  let errorCount = 0;
  let done = '';

  const toDraft = (s: CaptureSettings) => ({
    enabled: s.enabled,
    allowExternalNetwork: s.allowExternalNetwork,
    autoGrant: s.autoGrant,
    executableRoots: s.executableRoots.join('\n'),
    workingRoots: s.workingRoots.join('\n'),
    allowedEnv: s.allowedEnv.join('\n'),
  });
  const fromDraft = (): CaptureSettings => ({
    enabled: draft!.enabled,
    executableRoots: linesToList(draft!.executableRoots),
    workingRoots: linesToList(draft!.workingRoots),
    allowedEnv: linesToList(draft!.allowedEnv),
    allowExternalNetwork: draft!.allowExternalNetwork,
    autoGrant: draft!.autoGrant,
  });
  const dirty = () => !!res && !!draft && JSON.stringify(fromDraft()) !== JSON.stringify(res.settings);
  const sec = new SettingsSection(root, {
    fetch: async () => {
      res = await api.GetCapturePolicy({});
      draft = toDraft(res.settings);
    },
    view,
    dirty,
  });
  const render = () => sec.render();

  async function save(): Promise<void> {
    if (!draft) return;
    errors = new Map();
    errorCount = 0;
    sec.saveError = null;
    done = '';
    const before = res!.settings;
    const settings = fromDraft();
    await sec.save(
      async () => {
        const after = await api.SetCapturePolicy({ settings });
        res = after;
        const changedKeys = (Object.keys(settings) as (keyof CaptureSettings)[]).filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after.settings[k]));
        draft = toDraft(after.settings);
        done = changedKeys.length ? `Saved. Changed: ${changedKeys.map((k) => CAPTURE_LABEL[k]).join(', ')}.` : 'Saved; nothing changed.';
      },
      (e) => {
        const d = fieldDetails<CaptureFieldError>(e, 'invalid_capture_policy');
        if (!d) return false;
        errorCount = d.length;
        errors = new Map();
        for (const x of d) {
          const p = normalizePath(x.field);
          const [field, index] = p.split('.');
          const list = errors.get(field) ?? [];
          list.push(index !== undefined ? `Line ${Number(index) + 1}: ${x.message}` : x.message);
          errors.set(field, list);
        }
        return true;
      },
    );
  }

  function view(): HTMLElement {
    if (sec.loadError || !draft || !res) return sec.placeholder('Process capture', 'Could not read the capture policy.', 'Reading the capture policy…');
    const d = draft;
    const check = (k: 'enabled' | 'allowExternalNetwork' | 'autoGrant', label: string, help: string) =>
      h(
        'div',
        { class: 'field' },
        h(
          'label',
          { class: 'check-row' },
          h('input', { type: 'checkbox', checked: d[k], 'data-testid': `capture-${k}`, dataset: { focusKey: `cap-${k}` }, onchange: (e: Event) => ((d[k] = (e.target as HTMLInputElement).checked), render()) }),
          h('span', null, h('strong', null, label), h('span', { class: 'muted small' }, ` — ${help}`)),
        ),
        overrideNote(k),
        fieldErrors(errors.get(k)),
      );
    const list = (k: 'executableRoots' | 'workingRoots' | 'allowedEnv', label: string, help: string, placeholder: string) => {
      const id = uid('cap');
      return h(
        'div',
        { class: 'field' },
        h('label', { for: id }, label),
        h('p', { class: 'field-help' }, help),
        h('textarea', {
          id,
          class: ['input', 'mono', errors.get(k) ? 'invalid' : ''],
          rows: '3',
          placeholder,
          spellcheck: 'false',
          'aria-invalid': errors.get(k) ? 'true' : undefined,
          'data-testid': `capture-${k}`,
          dataset: { focusKey: `cap-${k}` },
          value: d[k],
          oninput: (e: Event) => (d[k] = (e.target as HTMLTextAreaElement).value),
        }),
        overrideNote(k),
        fieldErrors(errors.get(k)),
      );
    };
    const overrideNote = (k: keyof CaptureSettings) =>
      res!.overrides.includes(CAPTURE_ENV[k])
        ? h('div', { class: 'override-note small' }, icon('warn'), ' Overridden by ', h('code', { class: 'mono' }, CAPTURE_ENV[k]), ': in effect ', h('code', { class: 'mono' }, JSON.stringify(res!.effective[k])))
        : null;
    const root1 = errors.get('') ?? [];
    return card(
      'Process capture',
      { description: 'Operator limits for recording processes. Capture is off by default; checks run in this order: enabled, network, executable roots, working roots, environment names.' },
      res.overrides.length
        ? h(
            'div',
            { class: 'alert tone-warn small', 'data-testid': 'capture-overrides' },
            icon('warn'),
            h('div', null, h('strong', null, 'Environment overrides in effect: '), res.overrides.map((o, i) => [i ? ', ' : '', h('code', { class: 'mono' }, o)]), '. They win over the saved values below until Gatehouse is restarted without them.'),
          )
        : null,
      h(
        'div',
        { class: 'capture-grid' },
        h(
          'div',
          { class: 'stack' },
          check('enabled', 'Capture enabled', 'allow process capture at all'),
          check('allowExternalNetwork', 'Allow host networking', 'captured processes may use the network'),
          check('autoGrant', 'Auto-grant', 'install a grant for this boundary; off: each MCP caller needs your approval'),
        ),
        h(
          'div',
          { class: 'stack' },
          list('executableRoots', 'Executable roots', 'Programs must live under one of these absolute paths. One per line.', '/usr/bin'),
          list('workingRoots', 'Working roots', 'Working directories and bound filesystem roots. One per line.', '/home/you/projects'),
          list('allowedEnv', 'Allowed environment names', 'Variable names passed through. One per line.', 'LANG'),
        ),
      ),
      sec.changedElsewhereNote('The capture policy was changed elsewhere. ', 'Load it'),
      sec.notSaved('capture-errors', errorCount, `${errorCount} problem${errorCount === 1 ? '' : 's'}, shown at ${errorCount === 1 ? 'its field' : 'their fields'}.`, root1.length ? h('div', null, root1.join(' · ')) : null),
      done ? savedNote('capture-saved', done) : null,
      h(
        'div',
        { class: 'save-row' },
        sec.saveButton('capture-save', 'Save capture policy', () => void save()),
        h('button', { type: 'button', class: 'btn ghost', disabled: sec.saving, onclick: () => ((draft = toDraft(res!.settings)), (errors = new Map()), (errorCount = 0), render()) }, 'Discard changes'),
      ),
    );
  }

  const ready = sec.load();
  return { ready, external: () => sec.external() };
}

const CAPTURE_LABEL: Record<keyof CaptureSettings, string> = {
  enabled: 'capture enabled',
  executableRoots: 'executable roots',
  workingRoots: 'working roots',
  allowedEnv: 'allowed environment names',
  allowExternalNetwork: 'host networking',
  autoGrant: 'auto-grant',
};
