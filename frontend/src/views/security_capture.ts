// Security → Process capture: the operator policy for recording processes
// (enabled, network, executable and working roots, environment names), with
// the environment overrides in effect shown at their fields.

import { api } from '../api/client';
import type { CaptureFieldError, CapturePolicyResult, CaptureSettings } from '../api/types';
import { h, icon, uid } from '../lib/dom';
import { linesToList, normalizePath } from '../lib/policy';
import { card, fieldErrors } from '../lib/ui';
import { fieldDetails, problemList, savedNote, SettingsSection, type Problem } from './settings_section';

// ---- process capture ----------------------------------------------------

const CAPTURE_ENV: Record<keyof CaptureSettings, string> = {
  enabled: 'GATEHOUSE_PROCESS_CAPTURE_ENABLED',
  executableRoots: 'GATEHOUSE_PROCESS_EXECUTABLE_ROOTS_JSON',
  workingRoots: 'GATEHOUSE_PROCESS_WORKING_ROOTS_JSON',
  allowedEnv: 'GATEHOUSE_PROCESS_ALLOWED_ENV_JSON',
  allowExternalNetwork: 'GATEHOUSE_PROCESS_ALLOW_EXTERNAL_NETWORK',
  autoGrant: 'GATEHOUSE_PROCESS_CAPTURE_AUTO_GRANT',
};

export function captureSection(root: HTMLElement) {
  let res: CapturePolicyResult | null = null;
  let draft: { enabled: boolean; allowExternalNetwork: boolean; autoGrant: boolean; executableRoots: string; workingRoots: string; allowedEnv: string } | null = null;
  let errors = new Map<string, string[]>();
  let errorCount = 0;
  let problems: Problem[] = [];
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
    problems = [];
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
          const p = normalizePath(x.path);
          const [field, index] = p.split('.');
          const list = errors.get(field) ?? [];
          list.push(index !== undefined ? `Line ${Number(index) + 1}: ${x.message}` : x.message);
          errors.set(field, list);
        }
        problems = d.map((x) => {
          const [field, index] = normalizePath(x.path).split('.');
          const name = field in CAPTURE_LABEL ? CAPTURE_LABEL[field as keyof CaptureSettings] : field || 'Capture policy';
          const label = name.charAt(0).toUpperCase() + name.slice(1);
          return { label: index !== undefined ? `${label}, line ${Number(index) + 1}` : label, text: x.message, path: x.path };
        });
        return true;
      },
    );
    // Focus stays in this section, on the answer.
    root.querySelector<HTMLElement>('[data-testid="capture-errors"], [data-testid="capture-saved"]')?.focus();
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
          h('input', { type: 'checkbox', checked: d[k], 'data-testid': `capture-${k}`, dataset: { focusKey: `cap-${k}`, path: k }, onchange: (e: Event) => ((d[k] = (e.target as HTMLInputElement).checked), render()) }),
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
          dataset: { focusKey: `cap-${k}`, path: k },
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
      sec.notSaved('capture-errors', errorCount, `Fix ${errorCount === 1 ? 'this problem' : `these ${errorCount} problems`} and save again:`, problemList(root, problems, 'capture-error'), true),
      done ? savedNote('capture-saved', done) : null,
      h(
        'div',
        { class: 'save-row' },
        sec.saveButton('capture-save', 'Save capture policy', () => void save()),
        h('button', { type: 'button', class: 'btn ghost', disabled: sec.saving, onclick: () => ((draft = toDraft(res!.settings)), (errors = new Map()), (errorCount = 0), (problems = []), render()) }, 'Discard changes'),
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
