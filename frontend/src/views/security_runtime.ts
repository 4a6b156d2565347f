// Security → Node runtime: the pinned Node binary (path, version, digest)
// and re-pinning it.

import { api } from '../api/client';
import type { RuntimeResult } from '../api/types';
import { h, icon, uid } from '../lib/dom';
import { formatDateTime } from '../lib/format';
import { badge, card, errorBox, hashChip, kv, loading, pathText } from '../lib/ui';
import { savedNote, SettingsSection } from './settings_section';

// ---- runtime ------------------------------------------------------------

export function runtimeSection(root: HTMLElement) {
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
