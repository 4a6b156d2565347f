// What the consent dialog shows for the two requests that are not single
// runs: a workflow plan (every exact step, approved or denied as a whole)
// and a process-capture grant (approved for once or for the connection's
// session). The dialog shell, queue, countdown and keyboard rules live in
// consent.ts; this module only builds the kind-specific parts.

import type { GrantView, PlanView } from '../api/types';
import { h } from '../lib/dom';
import { formatBytes, formatDuration, formatWhen, formatDateTime } from '../lib/format';
import { stateIn, type StateInfo } from '../lib/labels';
import { codeBlock, hashChip, pathText } from '../lib/ui';

const PLAN_STATE: Record<PlanView['state'], StateInfo> = {
  pending: { label: 'Waiting for you', tone: 'accent', text: 'An agent proposes this plan. Nothing runs until you approve; each step may then run once, exactly as shown.' },
  approved: { label: 'Approved', tone: 'ok', text: 'You approved this plan. Each step may run once, exactly as shown, in this agent connection only.' },
  denied: { label: 'Denied', tone: 'neutral', text: 'You denied this plan. None of its steps can run.' },
  expired: { label: 'Expired', tone: 'warn', text: 'Nobody decided within 5 minutes, so this plan expired. Nothing ran.' },
  stale: { label: 'Replaced', tone: 'warn', text: 'The agent replaced this plan with a newer one. Its unused steps can no longer run.' },
  cancelled: { label: 'Cancelled', tone: 'neutral', text: 'The agent stopped waiting or disconnected. Nothing from this plan can run any more.' },
};

const GRANT_STATE: Record<GrantView['state'], StateInfo> = {
  pending: { label: 'Waiting for you', tone: 'accent', text: 'An agent asks to record a command in a terminal. Nothing runs until you allow it.' },
  approved: { label: 'Allowed', tone: 'ok', text: 'You allowed captures like this one for the rest of this agent connection.' },
  consumed: { label: 'Allowed once', tone: 'ok', text: 'You allowed this one capture and Gatehouse started it (the grant is now used up).' },
  denied: { label: 'Denied', tone: 'neutral', text: 'You denied this capture. Nothing ran.' },
  expired: { label: 'Expired', tone: 'warn', text: 'Nobody decided within 5 minutes, so this request expired. Nothing ran.' },
  cancelled: { label: 'Cancelled', tone: 'neutral', text: 'The agent stopped waiting or disconnected; the grant is gone.' },
};

/** Plain-language state of a plan. */
export function planState(s: string): StateInfo {
  return stateIn(PLAN_STATE, s, 'plan');
}

/** Plain-language state of a capture grant. */
export function grantState(s: string): StateInfo {
  return stateIn(GRANT_STATE, s, 'grant');
}

/** The dialog title for a plan. */
export function planTitle(p: PlanView, pending: boolean): string {
  const n = `${p.steps.length} step${p.steps.length === 1 ? '' : 's'}`;
  return pending ? `Approve a workflow plan (${n})?` : `Workflow plan (${n})`;
}

/** The dialog title for a capture grant. */
export function grantTitle(g: GrantView, pending: boolean): string {
  const prog = g.request.executable.split('/').pop() || g.request.executable;
  return pending ? `Record “${prog}” in a terminal?` : `Capture of “${prog}”`;
}

function asked(createdAt: string, expiresAt: string): HTMLElement {
  return h(
    'dd',
    null,
    h('span', { title: formatDateTime(createdAt) }, formatWhen(createdAt)),
    h('span', { class: 'muted' }, ' · expires '),
    h('span', { title: formatDateTime(expiresAt) }, formatWhen(expiresAt)),
  );
}

/** Every step of a plan, each with the exact invocation it may run. */
export function planDetails(p: PlanView): HTMLElement {
  return h(
    'div',
    { class: 'plan-details' },
    h(
      'dl',
      { class: 'kv consent-kv' },
      h('dt', null, 'Agent'),
      h('dd', null, h('strong', null, p.agent.name || p.agent.id), ' ', h('code', { class: 'mono muted' }, p.agent.id)),
      h('dt', null, 'Asked'),
      asked(p.createdAt, p.expiresAt),
      h('dt', null, 'Run'),
      h('dd', null, h('code', { class: 'mono small' }, p.runId)),
    ),
    h(
      'ol',
      { class: 'plan-steps', 'data-testid': 'plan-steps' },
      p.steps.map((s, i) =>
        h(
          'li',
          { class: ['plan-step', s.consumed ? 'consumed' : ''], 'data-testid': `plan-step-${i}` },
          h(
            'div',
            { class: 'plan-step-head' },
            h('span', { class: 'plan-step-no num' }, String(i + 1)),
            h('strong', null, s.skill),
            hashChip(s.revision),
            s.consumed ? h('span', { class: 'badge tone-ok' }, 'ran') : null,
          ),
          h(
            'dl',
            { class: 'kv small' },
            h('dt', null, 'Entrypoint'),
            h('dd', null, h('code', { class: 'mono' }, s.entrypoint), h('span', { class: 'muted' }, ` · ${s.files.length} files, ${formatBytes(s.files.reduce((n, f) => n + f.size, 0))}`)),
            h('dt', null, 'Workspace'),
            h('dd', null, pathText(s.workspace)),
            h('dt', null, 'Limits'),
            h('dd', null, `${formatDuration(s.timeoutMs)} time · ${formatBytes(s.maxOutputBytes)} output`),
          ),
          codeBlock(s.invocation, { label: `Invocation of step ${i + 1}`, cls: 'invocation' }),
        ),
      ),
    ),
  );
}

/** What a capture grant would allow. */
export function grantDetails(g: GrantView): HTMLElement {
  const list = (xs: string[], none: string) =>
    xs.length ? h('ul', { class: 'chip-list' }, xs.map((x) => h('li', null, h('code', { class: 'mono' }, x)))) : h('span', { class: 'muted' }, none);
  return h(
    'dl',
    { class: 'kv consent-kv grant-details', 'data-testid': 'grant-details' },
    h('dt', null, 'Agent'),
    h('dd', null, h('strong', null, g.agent.name || g.agent.id), ' ', h('code', { class: 'mono muted' }, g.agent.id)),
    h('dt', null, 'Command'),
    h('dd', null, codeBlock(g.command.map(shellQuote).join(' '), { testid: 'grant-command', label: 'Command line' })),
    h('dt', null, 'Program'),
    h('dd', null, pathText(g.request.executable)),
    h('dt', null, 'Directory'),
    h('dd', null, pathText(g.request.workingDir)),
    h('dt', null, 'Environment'),
    h('dd', null, list(g.request.envNames, 'none passed in')),
    h('dt', null, 'Snapshots of'),
    h('dd', null, list(g.request.filesystemRoots, 'no filesystem roots')),
    h('dt', null, 'Network'),
    h('dd', null, g.request.externalNetwork ? h('strong', null, 'host network') : 'loopback only'),
    h('dt', null, 'Asked'),
    asked(g.createdAt, g.expiresAt),
    g.scope ? h('dt', null, 'Allowed') : null,
    g.scope ? h('dd', null, g.scope === 'session' ? `for this connection (${g.uses} capture${g.uses === 1 ? '' : 's'} so far)` : 'once') : null,
  );
}

/** Quotes one argument for display the way a POSIX shell would read it. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
