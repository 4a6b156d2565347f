// Security → Agents: the identities MCP and API callers authenticate as;
// add one (its token is shown once), disable, enable or delete.

import { api } from '../api/client';
import type { Agent, AgentConnection } from '../api/types';
import { h, uid } from '../lib/dom';
import { formatDateTime } from '../lib/format';
import { badge, card, errorBox, loading } from '../lib/ui';
import { newAgentBox } from './agent_connect';
import { SettingsSection } from './settings_section';

// ---- agents -------------------------------------------------------------

export function agentsSection(root: HTMLElement, changed: () => void) {
  let list: Agent[] | null = null;
  let addName = '';
  let addExec = true;
  let addError: unknown = null;
  let adding = false;
  let token: { agent: Agent; token: string; connect: AgentConnection } | null = null;
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
    const tokenBox = token ? newAgentBox(token, () => ((token = null), render())) : null;
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
