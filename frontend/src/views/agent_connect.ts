// How to connect an MCP client as a new agent: the endpoint and the
// configurations `gatehouse agent add` prints (the backend's
// agents.Connection, returned by AddAgent), each with a copy button. Used
// by Security → Agents and the Skills first-run card.

import type { Agent, AgentConnection } from '../api/types';
import { h, icon } from '../lib/dom';
import { codeBlock, copyButton } from '../lib/ui';

const SNIPPETS: { key: keyof AgentConnection; title: string; help: string }[] = [
  { key: 'mcpJson', title: '.mcp.json (HTTP)', help: 'For a client that reads .mcp.json; works while Gatehouse runs.' },
  { key: 'claudeHttp', title: 'Claude Code (HTTP)', help: 'Run in a terminal, in the project the agent works in.' },
  { key: 'stdioJson', title: '.mcp.json (stdio)', help: 'For a client that starts its servers itself: gatehouse mcp relays to the running app.' },
  { key: 'claudeStdio', title: 'Claude Code (stdio)', help: 'The same, as a claude mcp add line.' },
];

/** The endpoint and every configuration snippet of conn, copyable. */
export function connectionBox(conn: AgentConnection): HTMLElement {
  return h(
    'div',
    { class: 'connect-box', 'data-testid': 'agent-connect' },
    h('div', { class: 'connect-snippet-head' }, h('span', null, h('strong', null, 'MCP endpoint: '), h('code', { class: 'mono', 'data-testid': 'agent-connect-url' }, conn.url)), copyButton(conn.url, 'MCP endpoint')),
    SNIPPETS.map((s) =>
      h(
        'div',
        { class: 'connect-snippet', 'data-testid': `agent-connect-${s.key}` },
        h('div', { class: 'connect-snippet-head' }, h('span', null, h('strong', null, s.title), h('span', { class: 'muted small' }, ` — ${s.help}`)), copyButton(conn[s.key], s.title, `agent-connect-copy-${s.key}`)),
        codeBlock(conn[s.key], { label: s.title, testid: `agent-connect-text-${s.key}` }),
      ),
    ),
  );
}

/** A new agent's one-time token, with how to connect as it; done closes it. */
export function newAgentBox(added: { agent: Agent; token: string; connect: AgentConnection }, done: () => void): HTMLElement {
  return h(
    'div',
    { class: 'token-box', role: 'region', 'aria-label': 'New agent token', 'data-testid': 'agent-token-box' },
    h('div', { class: 'alert tone-warn' }, icon('warn'), h('div', null, h('strong', null, `Token for “${added.agent.name}”, shown only this once. `), 'Copy it now and give it to the agent. Gatehouse keeps only a hash: if you lose it, delete the agent and add it again. Anyone with this token can ask to run scripts as this agent.')),
    h(
      'div',
      { class: 'token-row' },
      h('input', { type: 'text', readonly: true, class: 'input mono', value: added.token, 'aria-label': 'Agent token', 'data-testid': 'agent-token', onfocus: (e: Event) => (e.target as HTMLInputElement).select() }),
      copyButton(added.token, 'token', 'agent-token-copy'),
      h('button', { type: 'button', class: 'btn small', 'data-testid': 'agent-token-done', onclick: done }, 'I have stored it'),
    ),
    h('p', { class: 'muted small' }, 'Connect an MCP client as this agent with one of these (each already holds the token):'),
    connectionBox(added.connect),
  );
}
