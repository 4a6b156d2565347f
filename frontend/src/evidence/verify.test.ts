import { describe, expect, it } from 'vitest';
import type { EvidenceEnvelope } from './record';
import { answerVerify, verdict, verifyCommitments } from './verify';

// A real capture written by `gatehouse capture-process` (sh printing,
// reading input, writing a file, a resize), kept as a fixture.
import FIXTURE from './testdata/capture.json?raw';

describe('verifyCommitments', () => {
  it('accepts a real capture and flags a changed value at its path', async () => {
    const env = JSON.parse(FIXTURE) as EvidenceEnvelope;
    const checks = await verifyCommitments(env);
    expect(checks.map((c) => [c.path.replace('$.normalized_result.manifest.', ''), c.ok])).toEqual([
      ['full_scenario_sha256', true],
      ['comparison_contract_sha256', true],
      ['normalization_sha256', true],
      ['shim_plan_sha256', true],
      ['replay_plan_sha256', true],
      ['executable_sha256', null],
      ['$.evidence_id', true],
    ]);
    const rec = env.normalized_result as { manifest: { scenario: { timeout_ms: number } } };
    rec.manifest.scenario.timeout_ms += 1;
    const bad = await verifyCommitments(env);
    expect(bad.filter((c) => c.ok === false).map((c) => c.path)).toEqual(['$.normalized_result.manifest.full_scenario_sha256', '$.evidence_id']);
  });
});

describe('answerVerify', () => {
  it('verifies the envelope under a field of the exact text, and reports a tampered text', async () => {
    const text = `{"item":{},"evidence":${FIXTURE.trim()},"verification":{}}`;
    const good = await answerVerify({ text, field: 'evidence' });
    expect('checks' in good && good.checks.every((c) => c.ok !== false)).toBe(true);
    const bad = await answerVerify({ text: text.replace('"timeout_ms": 30000', '"timeout_ms": 30001'), field: 'evidence' });
    expect('checks' in bad && bad.checks.filter((c) => c.ok === false).map((c) => c.path)).toEqual(['$.normalized_result.manifest.full_scenario_sha256', '$.evidence_id']);
  });

  it('answers with an error, not a pass, for text that is not an envelope', async () => {
    expect(await answerVerify({ text: '{"evidence":', field: 'evidence' })).toHaveProperty('error');
    expect(await answerVerify({ text: '{}', field: 'evidence' })).toEqual({ error: 'no Evidence envelope to verify' });
  });
});

describe('verdict', () => {
  const id = { path: '$.evidence_id', covers: '', expected: 'ev_a', actual: 'ev_a', ok: true };
  it('is ok only with a matching evidence_id check and no failure', () => {
    expect(verdict([id])).toBe('ok');
    expect(verdict([])).toBe('incomplete');
    expect(verdict([{ ...id, path: '$.x' }])).toBe('incomplete');
    expect(verdict([id, { ...id, path: '$.y', ok: false }])).toBe('mismatch');
    expect(verdict([{ ...id, ok: null }])).toBe('incomplete');
  });
});
