// Plain-language labels for states and statuses (pure, unit-tested).

import type { ProposalState, SkillSummary } from '../api/types';

export type Tone = 'ok' | 'warn' | 'danger' | 'info' | 'neutral' | 'accent';

/** A state or status in plain language: a short label, its tone and one sentence. */
export type StateInfo = { label: string; tone: Tone; text: string };

/**
 * The entry of table for state; a state the table does not know (a newer
 * backend's) is shown as itself, neutral, with a sentence naming what it is
 * the state of.
 */
export function stateIn<S extends string>(table: Record<S, StateInfo>, state: string, what: string): StateInfo {
  return table[state as S] ?? { label: state, tone: 'neutral', text: `This ${what} is now "${state}".` };
}

/** What a proposal's state means for the person, in one sentence. */
export const PROPOSAL_STATE: Record<ProposalState, StateInfo> = {
  pending: { label: 'Waiting for you', tone: 'accent', text: 'An agent is asking to run this script. Nothing runs until you approve.' },
  approved: { label: 'Approved', tone: 'ok', text: 'You approved this run. Gatehouse is starting it.' },
  consumed: { label: 'Approved', tone: 'ok', text: 'You approved this run and Gatehouse launched it (the one-time approval is now used up).' },
  denied: { label: 'Denied', tone: 'neutral', text: 'You denied this request. Nothing ran.' },
  expired: {
    label: 'Expired',
    tone: 'warn',
    text: 'Nobody decided within 5 minutes, so this request expired. Nothing ran.',
  },
  stale: {
    label: 'Replaced',
    tone: 'warn',
    text: 'The agent replaced this request with a newer one for the same skill. Nothing ran from this one.',
  },
  binding_changed: {
    label: 'Changed before launch',
    tone: 'danger',
    text: 'Something this approval was bound to (the workspace, the skill files or the runtime) changed before launch, so Gatehouse did not run it.',
  },
  policy_refused: {
    label: 'Refused by policy',
    tone: 'danger',
    text: 'The execution policy changed (blocked, safe mode, or the agent lost permission) before launch, so Gatehouse refused it.',
  },
  cancelled: {
    label: 'Withdrawn',
    tone: 'neutral',
    text: 'The run that asked for this was cancelled or ended, so the request was withdrawn. Nothing ran.',
  },
};

export function proposalState(state: string): StateInfo {
  return stateIn(PROPOSAL_STATE, state, 'request');
}

/** Run envelope statuses. */
export const RUN_STATUS: Record<string, StateInfo> = {
  succeeded: { label: 'Succeeded', tone: 'ok', text: 'The script finished and its output matched the output schema.' },
  failed: { label: 'Failed', tone: 'danger', text: 'The script failed or its output did not match the protocol.' },
  timeout: { label: 'Timed out', tone: 'warn', text: 'The script ran past its time limit and was stopped.' },
  cancelled: { label: 'Cancelled', tone: 'neutral', text: 'The run was cancelled and its processes were ended.' },
  output_limit: { label: 'Output limit', tone: 'warn', text: 'The script wrote more than its output limit and was stopped.' },
  cleanup_failed: {
    label: 'Cleanup failed',
    tone: 'danger',
    text: 'Gatehouse could not verify that every process the script started has ended.',
  },
  refused: { label: 'Refused', tone: 'neutral', text: 'Gatehouse refused to launch this run.' },
  interrupted: {
    label: 'Interrupted',
    tone: 'warn',
    text: 'Gatehouse stopped during this attempt (crash or kill); whether the script ran, finished or changed anything is unknown.',
  },
};

export function runStatus(status: string): StateInfo {
  return RUN_STATUS[status] ?? { label: status || 'Unknown', tone: 'neutral', text: '' };
}

/** The availability badge of a skill in the list. */
export function availability(s: Pick<SkillSummary, 'valid' | 'execution'>): { label: string; tone: Tone; title: string } {
  if (!s.valid) return { label: 'Invalid', tone: 'danger', title: 'SKILL.md does not follow the Agent Skills rules.' };
  const ex = s.execution;
  if (ex.available) return { label: 'Available', tone: 'ok', title: 'The script passed inspection and can be run.' };
  if (ex.reason === 'prompt_only' && !ex.issues) {
    return { label: 'Prompt-only', tone: 'info', title: 'Instructions only: this skill has no script to run.' };
  }
  if (ex.issues > 0) {
    return {
      label: `${ex.issues} issue${ex.issues === 1 ? '' : 's'}`,
      tone: 'warn',
      title: 'The script did not pass inspection; see the issues in the skill detail.',
    };
  }
  return { label: 'Unavailable', tone: 'warn', title: ex.reason ? `Not runnable: ${ex.reason.replace(/_/g, ' ')}` : 'Not runnable.' };
}

/** Lifecycle journal event types. */
export const RUN_EVENT: Record<string, string> = {
  proposed: 'Consent requested',
  decided: 'Decision recorded',
  consumed: 'Approval used',
  staged: 'Snapshot staged',
  spawned: 'Process started',
  progress: 'Progress',
  exited: 'Process exited',
  cleaned: 'Processes cleaned up',
  validated: 'Output checked',
  completed: 'Completed',
};

export function runEventLabel(type: string): string {
  return RUN_EVENT[type] ?? type;
}
