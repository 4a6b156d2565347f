// Security → Execution policy: the mode, safe mode and the trusted revision
// scopes. Save sends the whole policy; the server validates and applies it
// atomically, and field errors are shown next to the fields. If a field cannot
// even be encoded (say, a ceiling that is not a number) nothing is sent.

import { api, ApiError } from '../api/client';
import type { Agent, PathError, Policy, PolicyMode, Scope, SkillSummary } from '../api/types';
import { h, icon, replace, uid } from '../lib/dom';
import { formatBytes, formatDateTime, shortHash } from '../lib/format';
import { CEILING_BOUNDS, ceilingHint, ceilingValue, describeProblem, type CeilingField, MODE_ORDER, MODES, normalizePath, policyChanges, policyForSave, revisionHint, scopeEdited, workspaceHint } from '../lib/policy';
import { badge, card, copyButton, errorBox, fieldErrors } from '../lib/ui';
import { fieldDetails, problemList, savedNote, SettingsSection } from './settings_section';
import type { TrustRequest } from '../lib/trust_request';

const DEFAULT_TIMEOUT_CEILING = 30000;
const DEFAULT_OUTPUT_CEILING = 65536;
/** Longer workspace paths are also written out in full under the input. */
const WORKSPACE_INLINE = 28;

// ---- execution policy ---------------------------------------------------

interface DraftScope extends Scope {
  key: string;
  /** The scope as loaded, when this row came from the server. */
  saved?: Scope;
  timeoutText: string;
  outputText: string;
}

export function policySection(root: HTMLElement) {
  let saved: Policy | null = null;
  let draft: { mode: PolicyMode; safeMode: boolean; trusted: DraftScope[] } | null = null;
  let agents: Agent[] = [];
  let skills: SkillSummary[] = [];
  let errors = new Map<string, string[]>();
  /** The server's problems of the last Save, in its order, in words. */
  let errorList: { path: string; label: string; text: string }[] = [];
  let savedLines: string[] = [];
  let keySeq = 0;
  /** Set when a draft scope came from the consent dialog's "Trust this revision…". */
  let trustNote = '';
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
            dataset: { focusKey: `mode-${m}`, ...(d.mode === m ? { path: 'mode' } : {}) },
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
          dataset: { focusKey: 'safe', path: 'safeMode' },
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
      h('button', { type: 'button', class: 'btn ghost', hidden: !isDirty, 'data-dirty-only': true, disabled: sec.saving, onclick: () => ((draft = toDraft(saved!)), (trustNote = ''), clearMessages(), render()) }, 'Discard changes'),
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
        problemList(root, errorList, 'policy-error'),
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
      trustNote ? h('p', { class: 'trust-note small', role: 'status', 'data-testid': 'trust-note' }, trustNote) : null,
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
          dataset: { focusKey: fk('rev'), path: `trusted.${i}.revision` },
          oninput: (e: Event) => {
            s.revision = (e.target as HTMLInputElement).value.trim();
            const hint = (e.target as HTMLElement).parentElement?.querySelector('.rev-hint');
            if (hint) replace(hint, revHint(s.revision));
            soft();
          },
          onchange: (e: Event) => {
            const hint = (e.target as HTMLElement).parentElement?.querySelector('[data-testid="scope-revision-hint"]');
            if (hint) hint.textContent = err('revision') ? '' : (revisionHint(s.revision) ?? '');
            const k = skills.find((x) => x.execution.revision === s.revision);
            if (k && !s.saved && s.timeoutText === String(DEFAULT_TIMEOUT_CEILING) && s.outputText === String(DEFAULT_OUTPUT_CEILING)) {
              // The skill's own manifest limits are a sensible start.
              void api
                .InspectSkill({ name: k.name })
                .then((ins) => {
                  const m = ins.execution.manifest;
                  const row = root.querySelector(`[data-scope-key="${s.key}"]`);
                  const to = row?.querySelector<HTMLInputElement>('[data-testid="scope-timeout"]');
                  const out = row?.querySelector<HTMLInputElement>('[data-testid="scope-output"]');
                  // Never under the person's hands: a ceiling being typed in is left alone.
                  const typing = document.activeElement === to || document.activeElement === out;
                  if (m && !typing && s.timeoutText === String(DEFAULT_TIMEOUT_CEILING) && s.outputText === String(DEFAULT_OUTPUT_CEILING)) {
                    s.timeoutText = String(m.timeoutMs);
                    s.outputText = String(m.maxOutputBytes);
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
        // Mirrors the server's check once the person leaves the field; Save still asks the server.
        h('div', { class: 'field-hint small', 'aria-live': 'polite', 'data-testid': 'scope-revision-hint' }, err('revision') ? '' : (revisionHint(s.revision) ?? '')),
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
            dataset: { focusKey: fk('agent'), path: `trusted.${i}.agentId` },
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
          title: s.workspace || undefined,
          dataset: { focusKey: fk('ws'), path: `trusted.${i}.workspace` },
          oninput: (e: Event) => {
            const input = e.target as HTMLInputElement;
            s.workspace = input.value;
            input.title = s.workspace;
            const full = input.parentElement?.querySelector('.ws-full');
            if (full) full.textContent = s.workspace.length > WORKSPACE_INLINE ? s.workspace : '';
            soft();
          },
          onchange: (e: Event) => {
            const hint = (e.target as HTMLElement).parentElement?.querySelector('[data-testid="scope-workspace-hint"]');
            if (hint) hint.textContent = err('workspace') ? '' : (workspaceHint(s.workspace) ?? '');
          },
        }),
        h('div', { class: 'field-hint small', 'aria-live': 'polite', 'data-testid': 'scope-workspace-hint' }, err('workspace') ? '' : (workspaceHint(s.workspace) ?? '')),
        // A long path does not fit the input: it is also written out in full, wrapping.
        h('div', { class: 'ws-full mono small', 'data-testid': 'scope-workspace-full' }, s.workspace.length > WORKSPACE_INLINE ? s.workspace : ''),
        fieldErrors(err('workspace')),
      ),
      ceilingCell(s, i, { field: 'timeoutMsCeiling', text: 'timeoutText', what: 'time ceiling in milliseconds', testid: 'scope-timeout', focusKey: fk('to') }),
      ceilingCell(
        s,
        i,
        { field: 'maxOutputBytesCeiling', text: 'outputText', what: 'output ceiling in bytes', testid: 'scope-output', focusKey: fk('out') },
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
    o: { field: CeilingField; text: 'timeoutText' | 'outputText'; what: string; testid: string; focusKey: string },
    note?: HTMLElement,
    typed?: (input: HTMLInputElement) => void,
  ): HTMLElement {
    const err = errors.get(`trusted.${i}.${o.field}`);
    const b = CEILING_BOUNDS[o.field];
    const hintId = uid('hint');
    const hint = h('div', { class: 'field-hint small', id: hintId, 'aria-live': 'polite', 'data-testid': `${o.testid}-hint` }, err ? '' : (ceilingHint(o.field, s[o.text]) ?? ''));
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
          min: String(b.min),
          max: String(b.max),
          title: `${b.label}: ${b.min.toLocaleString('en-US')}–${b.max.toLocaleString('en-US')} ${b.unit}`,
          'aria-describedby': hintId,
          step: '1',
          'aria-label': `Scope ${i + 1} ${o.what}`,
          'aria-invalid': err ? 'true' : undefined,
          'data-testid': o.testid,
          dataset: { focusKey: o.focusKey, path: `trusted.${i}.${o.field}` },
          oninput: (e: Event) => {
            const input = e.target as HTMLInputElement;
            s[o.text] = input.value;
            typed?.(input);
            soft();
          },
          // A hint that mirrors the server's check, once the person leaves the field; Save still asks the server.
          onchange: () => (hint.textContent = ceilingHint(o.field, s[o.text]) ?? ''),
        }),
        h('span', { class: 'unit' }, b.unit),
      ),
      note,
      hint,
      fieldErrors(err),
    );
  }

  function revHint(rev: string): (Node | string)[] {
    if (!rev) return [h('span', { class: 'muted' }, 'Pick a skill’s current revision or paste one')];
    const skill = skills.find((k) => k.execution.revision === rev);
    return [skill ? h('span', null, skill.name) : h('span', { class: 'muted' }, 'no current skill has this revision'), ' · ', h('code', { class: 'mono', title: rev }, shortHash(rev)), copyButton(rev, 'full revision')];
  }

  /** Adds r as an unsaved draft scope (or points at the row that already
   * holds it) and says that nothing changes until Save. */
  async function draftTrust(r: TrustRequest): Promise<void> {
    await ready;
    if (!draft) return;
    let row = draft.trusted.find((s) => s.revision === r.revision && s.agentId === r.agentId && s.workspace === r.workspace);
    if (!row) {
      row = {
        key: `k${++keySeq}`,
        revision: r.revision,
        agentId: r.agentId,
        workspace: r.workspace,
        timeoutMsCeiling: r.timeoutMsCeiling,
        maxOutputBytesCeiling: r.maxOutputBytesCeiling,
        timeoutText: String(r.timeoutMsCeiling),
        outputText: String(r.maxOutputBytesCeiling),
        receiptId: null,
        approvedAt: null,
      };
      draft.trusted.push(row);
      trustNote = `A scope for “${r.skill}” is filled in below from the consent dialog. Nothing changes until you review it and Save${draft.mode === 'trusted_revisions' ? '' : ', and it applies only in Trusted revisions mode'}.`;
    } else {
      trustNote = `A scope for this revision of “${r.skill}”, agent and workspace is already listed below.`;
    }
    touched();
    const el = root.querySelector<HTMLElement>(`[data-scope-key="${row.key}"]`);
    el?.scrollIntoView({ block: 'center' });
    el?.querySelector<HTMLElement>('input, select')?.focus();
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
    // Everything as typed goes to the server, which checks every field and
    // answers with every problem at once; a ceiling that is not a number is
    // sent as its text, for the server to report with the rest.
    const trusted = draft.trusted.map((s) => ({ revision: s.revision, agentId: s.agentId, workspace: s.workspace, timeoutMsCeiling: ceilingValue(s.timeoutText) as number, maxOutputBytesCeiling: ceilingValue(s.outputText) as number, receiptId: s.receiptId, approvedAt: s.approvedAt }));
    const body = policyForSave({ mode: draft.mode, safeMode: draft.safeMode, trusted });
    const before = saved;
    await sec.save(
      async () => {
        const after = await api.SetPolicy({ policy: body });
        saved = after;
        draft = toDraft(after);
        savedLines = policyChanges(before, after).lines;
        sec.changedElsewhere = false;
        trustNote = '';
      },
      (e) => {
        const details = fieldDetails<PathError>(e, 'invalid_policy');
        if (!details) return false;
        errorList = details.map((d) => ({ path: d.path, ...describeProblem(d) }));
        errors = new Map();
        for (const d of details) {
          const k = normalizePath(d.path);
          errors.set(k, [...(errors.get(k) ?? []), describeProblem(d).text]);
        }
        return true;
      },
    );
    // Focus stays in this section: on the answer, which lists every problem or what changed.
    root.querySelector<HTMLElement>('[data-testid="policy-errors"], [data-testid="policy-saved"]')?.focus();
  }

  const ready = sec.load();
  return {
    ready,
    draftTrust,
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
