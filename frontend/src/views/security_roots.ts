// Security → Skill roots: the ordered folders that hold skills (a later root
// wins a name clash); saved as a whole list.

import { api } from '../api/client';
import type { PathError, SkillRootsResult } from '../api/types';
import { h, icon } from '../lib/dom';
import { groupErrors, normalizePath } from '../lib/policy';
import { badge, card, fieldErrors, pathText } from '../lib/ui';
import { fieldDetails, problemList, savedNote, SettingsSection, type Problem } from './settings_section';

// ---- skill roots --------------------------------------------------------

export function rootsSection(root: HTMLElement) {
  let saved: SkillRootsResult | null = null;
  let draft: string[] = [];
  let errors = new Map<string, string[]>();
  let problems: Problem[] = [];
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
    problems = [];
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
        if (details) {
          errors = groupErrors(details, (d) => d.path);
          problems = details.map((d) => {
            const [, i] = normalizePath(d.path).split('.');
            return { label: i === undefined ? 'Skill roots' : `Skill root ${Number(i) + 1}`, text: d.message, path: d.path };
          });
        }
        return errors.size > 0;
      },
    );
    // Focus stays in this section, on the answer.
    root.querySelector<HTMLElement>('[data-testid="roots-errors"], [data-testid="roots-saved"]')?.focus();
  }

  function view(): HTMLElement {
    if (sec.loadError || !saved) return sec.placeholder('Skill roots', 'Could not read the skill roots.', 'Reading the skill roots…');
    const listErr = errors.get('roots');
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
              dataset: { focusKey: `root-${i}`, path: `roots.${i}` },
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
      sec.notSaved('roots-errors', problems.length, `Fix ${problems.length === 1 ? 'this problem' : `these ${problems.length} problems`} and save again:`, problemList(root, problems, 'roots-error'), true),
      done ? savedNote('roots-saved', done) : null,
      h(
        'div',
        { class: 'save-row' },
        h('button', { type: 'button', class: 'btn small', 'data-testid': 'root-add', dataset: { focusKey: 'root-add' }, onclick: () => (draft.push(''), render(), root.querySelector<HTMLElement>(`[data-focus-key="root-${draft.length - 1}"]`)?.focus()) }, icon('plus'), 'Add root'),
        sec.saveButton('roots-save', 'Save roots', () => void save()),
        h('button', { type: 'button', class: 'btn ghost', onclick: () => ((draft = [...saved!.roots]), (errors = new Map()), (problems = []), (done = ''), render()) }, 'Discard changes'),
      ),
    );
  }

  const ready = sec.load();
  return { ready, external: () => sec.external() };
}
