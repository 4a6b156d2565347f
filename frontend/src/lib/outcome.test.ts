import { describe, expect, it } from 'vitest';
import { runOutcome } from './outcome';

const rec = (authorized_by: string, status: string, code?: string) => ({ authorized_by, status, envelope: { errors: code ? [{ code }] : [] } });

describe('runOutcome', () => {
  it('names every outcome the backend records', () => {
    const cases: [ReturnType<typeof rec>, string][] = [
      [rec('person (consent 2eea0073)', 'succeeded'), 'Approved by you'],
      [rec('person (consent 2eea0073)', 'failed', 'nonzero_exit'), 'Approved by you'],
      [rec('person', 'refused', 'denied'), 'Denied'],
      [rec('consent: expired', 'refused', 'expired'), 'Expired'],
      [rec('consent', 'refused', 'cancelled'), 'Cancelled'],
      [rec('agent', 'refused', 'cancelled'), 'Cancelled'],
      [rec('consent', 'refused', 'superseded'), 'Replaced'],
      [rec('trusted scope rcpt_0123456789abcdef', 'succeeded'), 'Trusted (receipt rcpt_01234…)'],
      [rec('workflow plan', 'succeeded'), 'Plan step'],
      [rec('policy: safe mode', 'refused', 'safe_mode'), 'Refused (safe mode)'],
      [rec('policy: blocked', 'refused', 'blocked'), 'Refused (blocked)'],
      [rec('agent: can_execute_skills', 'refused', 'capability_missing'), 'Refused (capability missing)'],
      [rec('agent', 'refused', 'agent_disabled'), 'Refused (agent disabled)'],
      [rec('inspection', 'refused', 'not_executable'), 'Refused (not runnable)'],
      [rec('input schema', 'refused', 'invalid_input:type'), 'Refused (invalid input)'],
      [rec('consent', 'refused', 'permission_required'), 'Refused (nobody to ask)'],
      [rec('consent: binding_changed', 'refused', 'binding_changed'), 'Refused (changed before launch)'],
      [rec('launch check: not_executable', 'refused', 'not_executable'), 'Refused at launch (not executable)'],
      [rec('unknown (interrupted before it was recorded)', 'interrupted'), 'Unknown (interrupted)'],
    ];
    for (const [r, label] of cases) expect(runOutcome(r).label, r.authorized_by).toBe(label);
  });

  it('never calls an expired request approved by the person', () => {
    // The record of an approval that expired before launch (the backend
    // records the refusing rule since the fix; older rows still say
    // "person (consent …)" with the code expired).
    expect(runOutcome(rec('consent: expired', 'refused', 'expired')).label).toBe('Expired');
    expect(runOutcome(rec('person (consent 1)', 'refused', 'expired')).label).toBe('Expired');
  });

  it('keeps an unknown rule visible rather than inventing one', () => {
    expect(runOutcome(rec('something new', 'succeeded')).label).toBe('something new');
    expect(runOutcome(rec('', 'succeeded')).label).toBe('—');
  });
});
