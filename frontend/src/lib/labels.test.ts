import { describe, expect, it } from 'vitest';
import type { ProposalState } from '../api/types';
import { grantState, planState } from '../views/consent_requests';
import { availability, PROPOSAL_STATE, proposalState, runStatus } from './labels';

describe('labels', () => {
  it('explains every proposal state', () => {
    const states: ProposalState[] = ['pending', 'approved', 'denied', 'consumed', 'expired', 'stale', 'binding_changed', 'policy_refused', 'cancelled'];
    for (const s of states) expect(PROPOSAL_STATE[s].text.length).toBeGreaterThan(10);
    expect(proposalState('weird').label).toBe('weird');
  });

  it('shows a state no table knows as itself, naming what it is the state of', () => {
    expect(proposalState('weird')).toEqual({ label: 'weird', tone: 'neutral', text: 'This request is now "weird".' });
    expect(planState('weird')).toEqual({ label: 'weird', tone: 'neutral', text: 'This plan is now "weird".' });
    expect(grantState('weird')).toEqual({ label: 'weird', tone: 'neutral', text: 'This grant is now "weird".' });
    expect(planState('approved').label).toBe('Approved');
    expect(grantState('approved').label).toBe('Allowed');
  });

  it('labels skill availability', () => {
    expect(availability({ valid: false, execution: { available: false, issues: 0 } }).label).toBe('Invalid');
    expect(availability({ valid: true, execution: { available: true, issues: 0 } }).label).toBe('Available');
    expect(availability({ valid: true, execution: { available: false, reason: 'prompt_only', issues: 0 } }).label).toBe('Prompt-only');
    expect(availability({ valid: true, execution: { available: false, reason: 'manifest', issues: 1 } }).label).toBe('1 issue');
    expect(availability({ valid: true, execution: { available: false, reason: 'manifest', issues: 3 } }).label).toBe('3 issues');
    expect(availability({ valid: true, execution: { available: false, reason: 'runtime', issues: 0 } }).label).toBe('Unavailable');
  });

  it('labels run statuses', () => {
    expect(runStatus('succeeded').tone).toBe('ok');
    expect(runStatus('cleanup_failed').tone).toBe('danger');
    expect(runStatus('new_status').label).toBe('new_status');
  });
});
