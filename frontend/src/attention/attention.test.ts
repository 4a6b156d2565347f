import { describe, expect, it } from 'vitest';
import type { GrantView, PlanView, ProposalView } from '../api/types';
import { describe as describeRequest, plainText, titleFor } from './attention';

describe('attention', () => {
  it('puts the count in front of the title only while requests wait', () => {
    expect(titleFor(0, 'Skills · Gatehouse')).toBe('Skills · Gatehouse');
    expect(titleFor(1, 'Skills · Gatehouse')).toBe('(1) Approval needed · Skills · Gatehouse');
    expect(titleFor(3, 'Runs · Gatehouse')).toBe('(3) Approval needed · Runs · Gatehouse');
  });

  it('never lets control, bidi or separator characters live', () => {
    const hostile = 'bot\x1b[2J\r\n\u202Etxt.exe\u2066\u2069\u200F\u061C\u2028\u0085\u007f';
    const out = plainText(hostile, 500);
    // eslint-disable-next-line no-control-regex
    expect(out).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/);
    expect(out).toContain('\\u001b');
    expect(out).toContain('\\u202e');
    expect(plainText('a'.repeat(61), 60)).toBe('a'.repeat(60) + '…');
    expect(plainText('a'.repeat(60), 60)).toBe('a'.repeat(60));
  });

  it('says which agent asks to run what, for each kind', () => {
    const agent = { id: 'agent_1', name: 'helper\u202Egnp.exe' };
    const p = describeRequest('proposal', { id: 'p', agent, skill: 'text-metrics', entrypoint: 'scripts/run.mjs' } as ProposalView);
    expect(p.title).toBe('Approval needed: text-metrics');
    expect(p.body).toBe('Agent “helper\\u202egnp.exe” asks to run the skill “text-metrics” (scripts/run.mjs).');
    const plan = describeRequest('plan', { id: 'w', agent, steps: [{ skill: 'a' }, { skill: 'b' }] } as PlanView);
    expect(plan.title).toBe('Approval needed: a plan of 2 steps');
    expect(plan.body).toContain('“a”, “b”');
    const g = describeRequest('grant', { id: 'g', agent: { id: 'agent_2', name: '' }, command: ['/bin/sh', '-c', 'echo\nhi'] } as GrantView);
    expect(g.body).toBe('Agent “agent_2” asks to run and record “/bin/sh -c echo\\u000ahi” in a terminal.');
  });
});
