// The Skills view's first-run card: what Gatehouse is for, the policy mode
// and agents as they are now, and how to connect an agent (add one here;
// its token comes with the same MCP configurations the CLI prints). Shown
// while no agent other than the built-in one exists, until hidden.

import { api, onEvent } from '../api/client';
import type { Agent, AgentConnection, Policy } from '../api/types';
import { h, replace, uid } from '../lib/dom';
import { MODES } from '../lib/policy';
import { errorBox } from '../lib/ui';
import { newAgentBox } from './agent_connect';

const HIDDEN_KEY = 'gatehouse.firstRun.hidden';

function hiddenByPerson(): boolean {
  try {
    return localStorage.getItem(HIDDEN_KEY) === '1';
  } catch {
    return false;
  }
}

/** The card; el stays the same element across re-renders (empty when not shown). */
export class FirstRunCard {
  readonly el = h('div', { class: 'first-run-host' });
  private agents: Agent[] | null = null;
  private policy: Policy | null = null;
  private policyError: unknown = null;
  private added: { agent: Agent; token: string; connect: AgentConnection } | null = null;
  private name = '';
  private adding = false;
  private addError: unknown = null;
  private hidden = hiddenByPerson();
  private readonly off: () => void;

  constructor() {
    this.off = onEvent('settings', (e) => {
      if (e?.what === 'agents' || e?.what === 'policy') void this.load();
    });
    void this.load();
  }

  destroy(): void {
    this.off();
  }

  private async load(): Promise<void> {
    if (this.hidden) return this.render();
    const [a, p] = await Promise.allSettled([api.ListAgents({}), api.GetPolicy({})]);
    this.agents = a.status === 'fulfilled' ? a.value.agents : this.agents;
    if (p.status === 'fulfilled') {
      this.policy = p.value;
      this.policyError = null;
    } else this.policyError = p.reason;
    this.render();
  }

  /** First run: no agent but the built-in one yet (or the one just added, while its token shows). */
  private shown(): boolean {
    if (this.hidden || !this.agents) return false;
    return !!this.added || this.agents.every((x) => x.built_in);
  }

  private async add(): Promise<void> {
    if (this.adding) return;
    this.addError = null;
    if (!this.name.trim()) {
      this.addError = new Error('Give the agent a name, for example the MCP client it is for.');
      this.render();
      this.el.querySelector<HTMLElement>('[data-testid="first-run-agent-name"]')?.focus();
      return;
    }
    this.adding = true;
    this.render();
    try {
      this.added = await api.AddAgent({ name: this.name.trim(), canExecuteSkills: true });
      this.name = '';
    } catch (e) {
      this.addError = e;
    } finally {
      this.adding = false;
      await this.load();
      this.el.querySelector<HTMLElement>('[data-testid="agent-token"]')?.focus();
    }
  }

  private hide(): void {
    this.hidden = true;
    try {
      localStorage.setItem(HIDDEN_KEY, '1');
    } catch {
      /* only a convenience */
    }
    const next = document.querySelector<HTMLElement>('[data-testid="run-open"], [data-testid="skill-row"]');
    this.render();
    next?.focus();
  }

  private render(): void {
    if (!this.shown()) return replace(this.el);
    const p = this.policy;
    const others = (this.agents ?? []).filter((a) => !a.built_in);
    const nameId = uid('fr-name');
    replace(
      this.el,
      h(
        'section',
        { class: 'card first-run', 'aria-labelledby': `${nameId}-title`, 'data-testid': 'first-run' },
        h(
          'header',
          { class: 'card-head' },
          h('div', null, h('h2', { id: `${nameId}-title` }, 'Welcome to Gatehouse'), h('p', { class: 'card-desc' }, 'Gatehouse stands between AI agents and this machine. An agent asks, over MCP, to run a script from one of these skills; Gatehouse freezes the exact files, asks you in a consent dialog (or applies a trust rule you set), runs that frozen copy confined to the workspace you approved, and keeps a record you can read in Runs.')),
          h('div', { class: 'card-actions' }, h('button', { type: 'button', class: 'btn ghost small', 'data-testid': 'first-run-hide', onclick: () => this.hide() }, 'Hide')),
        ),
        h(
          'div',
          { class: 'first-run-facts small' },
          h(
            'span',
            { 'data-testid': 'first-run-policy' },
            h('strong', null, 'Policy: '),
            p ? `${MODES[p.mode]?.label ?? p.mode}${p.safeMode ? ', safe mode on (every script is refused)' : ''}` : this.policyError ? 'could not be read' : '…',
            ' · ',
            h('a', { class: 'link', href: '#/security/policy' }, 'Change in Security'),
          ),
          h(
            'span',
            { 'data-testid': 'first-run-agents' },
            h('strong', null, 'Agents: '),
            others.length ? others.map((a) => a.name).join(', ') : 'none yet — only you (local), from this app and the CLI',
            ' · ',
            h('a', { class: 'link', href: '#/security/agents' }, 'Manage'),
          ),
        ),
        h(
          'ol',
          null,
          h(
            'li',
            null,
            h('strong', null, 'Connect an agent. '),
            'Name it after the MCP client it is for; you get its token with ready-to-paste configurations.',
            this.added
              ? newAgentBox(this.added, () => {
                  this.added = null;
                  void this.load();
                })
              : h(
                  'form',
                  {
                    class: 'inline-form',
                    onsubmit: (e: Event) => {
                      e.preventDefault();
                      void this.add();
                    },
                  },
                  h('div', { class: 'field' }, h('label', { for: nameId }, 'Agent name'), h('input', { id: nameId, type: 'text', class: 'input', value: this.name, maxlength: '128', placeholder: 'e.g. claude-code', 'data-testid': 'first-run-agent-name', oninput: (e: Event) => (this.name = (e.target as HTMLInputElement).value) })),
                  h('button', { type: 'submit', class: 'btn primary', 'data-testid': 'first-run-agent-add', disabled: this.adding }, this.adding ? 'Adding…' : 'Add agent'),
                ),
            this.addError ? errorBox(this.addError, 'Not added:') : null,
          ),
          h('li', null, h('strong', null, 'Ask the agent to use a skill. '), 'Each run it asks for opens the consent dialog here, showing the exact files and input; nothing runs until you approve.'),
          h('li', null, h('strong', null, 'Or run one yourself: '), 'pick a skill on the left and press Run….'),
        ),
      ),
    );
  }
}
