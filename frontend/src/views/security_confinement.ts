// Security → Script confinement: the person's setting (files: workspace |
// off, network: deny | allow), what the kernel enforces for it right now
// and how each run's processes are owned, exactly as GetSecurity reports
// them; a draft that weakens confinement is warned about before it is
// saved. The backend validates and decides; this shows and sends.

import { api } from '../api/client';
import type { ConfinementSettings, SecurityView } from '../api/types';
import { h, icon } from '../lib/dom';
import { confinementModel, settingChanged, settingWords, weakeningWarning } from '../lib/confinement';
import { badge, card, kv } from '../lib/ui';
import { savedNote, SettingsSection } from './settings_section';

type Choice<K extends keyof ConfinementSettings> = { value: ConfinementSettings[K]; label: string; line: string };

const FILESYSTEM: Choice<'filesystem'>[] = [
  { value: 'workspace', label: 'Workspace only (recommended)', line: 'A script writes only the workspace you approved and its own temporary folder, and reads only the skill, the Node runtime and system files.' },
  { value: 'off', label: 'Off — full access', line: 'A script can read and change every file you can.' },
];
const NETWORK: Choice<'network'>[] = [
  { value: 'deny', label: 'Denied (recommended)', line: 'A script cannot connect to or listen on the network.' },
  { value: 'allow', label: 'Allowed', line: 'A script can use the network as you can.' },
];

export function confinementSection(root: HTMLElement) {
  let saved: SecurityView | null = null;
  let draft: ConfinementSettings | null = null;
  let done = '';
  const sec = new SettingsSection(root, {
    fetch: async () => {
      saved = await api.GetSecurity({});
      draft = { ...saved.confinement };
    },
    view,
    dirty: () => !!saved && !!draft && settingChanged(saved.confinement, draft),
  });
  const render = () => sec.render();

  function group<K extends keyof ConfinementSettings>(key: K, legend: string, choices: Choice<K>[]): HTMLElement {
    const d = draft!;
    return h(
      'fieldset',
      { class: 'modes' },
      h('legend', { class: 'label' }, legend),
      choices.map((c) =>
        h(
          'label',
          { class: ['mode-option', d[key] === c.value ? 'selected' : ''] },
          h('input', {
            type: 'radio',
            name: `confinement-${key}`,
            value: c.value,
            checked: d[key] === c.value,
            'data-testid': `confinement-${key}-${c.value}`,
            dataset: { focusKey: `confinement-${key}-${c.value}` },
            onchange: () => {
              d[key] = c.value;
              done = '';
              render();
            },
          }),
          h('span', { class: 'mode-text' }, h('strong', null, c.label, saved!.confinement[key] === c.value ? h('span', { class: 'muted small' }, ' (saved)') : null), h('span', { class: 'muted small' }, c.line)),
        ),
      ),
    );
  }

  function view(): HTMLElement {
    if (sec.loadError || !saved || !draft) return sec.placeholder('Script confinement', 'Could not read the Security setting.', 'Reading the Security setting…');
    const m = confinementModel(saved);
    const warning = weakeningWarning(saved.confinement, draft);
    const changed = settingChanged(saved.confinement, draft);
    const now = h(
      'div',
      { class: 'stack', 'data-testid': 'confinement-now' },
      h('div', { class: 'confinement-line' }, h('strong', null, 'Right now:'), badge(m.status.label, m.status.tone), h('span', { class: 'muted small', 'data-testid': 'confinement-setting' }, m.setting)),
      h('p', { class: 'small', 'data-testid': 'confinement-status' }, m.status.text),
      m.unavailable ? h('div', { class: 'alert tone-danger small', role: 'alert', 'data-testid': 'confinement-unavailable' }, icon('warn'), h('div', null, h('strong', null, 'Not enforceable here: '), m.unavailable)) : null,
      m.features.length
        ? h(
            'ul',
            { class: 'plain confinement-features', 'data-testid': 'confinement-features' },
            m.features.map((f) =>
              h(
                'li',
                { class: 'confinement-line', dataset: { feature: f.name, enforced: String(f.enforced) } },
                f.enforced ? badge('enforced', 'ok') : badge('not enforced', 'warn'),
                h('strong', null, f.label),
                h('span', { class: 'muted small' }, f.text),
              ),
            ),
          )
        : null,
      saved.enforcement ? h('p', { class: 'muted small' }, `Landlock ABI ${saved.enforcement.abi} on this kernel.`) : null,
      kv(
        [
          ['Process ownership', h('span', { 'data-testid': 'confinement-ownership', dataset: { mechanism: m.ownership.name } }, m.ownership.text)],
          [
            'Cleanup',
            m.ownership.verifiable
              ? h('span', { 'data-testid': 'confinement-cleanup' }, 'Verified: Gatehouse proves every process of a run has ended.')
              : h('span', { class: 'tone-warn', 'data-testid': 'confinement-cleanup' }, `Cannot be verified: ${m.ownership.reason}`),
          ],
        ],
        'small',
      ),
    );
    const save = async () => {
      const next = { ...draft! };
      await sec.save(
        async () => {
          saved = await api.SetSecurity(next);
          draft = { ...saved.confinement };
          sec.saveError = null;
          done = `Saved: ${settingWords(saved.confinement)}.`;
        },
        () => false,
      );
    };
    const body = h(
      'div',
      { class: 'stack' },
      now,
      sec.changedElsewhereNote('The setting was changed elsewhere. ', 'Load it', ' (discards your choice here).'),
      group('filesystem', 'Files', FILESYSTEM),
      group('network', 'Network', NETWORK),
      warning ? h('div', { class: 'alert tone-danger', role: 'alert', 'data-testid': 'confinement-warning' }, icon('warn'), h('div', null, h('strong', null, 'This turns confinement off. '), warning)) : null,
      sec.notSaved('confinement-not-saved', 0, ''),
      h(
        'div',
        { class: 'row wrap' },
        changed
          ? h(
              'button',
              { type: 'button', class: ['btn', warning ? 'danger' : 'primary'], 'data-testid': 'confinement-save', disabled: sec.saving, onclick: () => void save() },
              sec.saving ? 'Saving…' : warning ? 'Save: run scripts with less confinement' : 'Save',
            )
          : h('span', { class: 'muted small' }, 'No unsaved changes.'),
        changed ? h('button', { type: 'button', class: 'btn ghost', onclick: () => { draft = { ...saved!.confinement }; render(); } }, 'Discard') : null,
      ),
      done ? savedNote('confinement-saved', done) : null,
    );
    return card(
      'Script confinement',
      {
        description:
          'What a script may touch once you approve it, enforced by the kernel (Landlock, and a network namespace where one can be made) through a small launcher before Node starts. The consent dialog and each run record state what was actually enforced.',
      },
      body,
    );
  }

  const ready = sec.load();
  return { ready, external: () => sec.external() };
}
