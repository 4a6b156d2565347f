import { describe, expect, it } from 'vitest';
import type { EvidenceEnvelope } from './record';
import { verifyCommitments } from './verify';

// The real capture fixture re-sealed by the Go sealer (evidence.Seal) with a
// non-null subject: a cross-implementation vector for the subject reduction.
import FIXTURE from './testdata/capture_with_subject.json?raw';

// docs/formats/capture-record.md: evidence_id = "ev_" + digest(envelope without
// evidence_id, with subject reduced to {digest, format, architecture}).
// Readers recompute it and reject a mismatch.
const idCheck = async (env: EvidenceEnvelope) => (await verifyCommitments(env)).find((c) => c.path === '$.evidence_id')!.ok;

describe('evidence_id subject reduction in the browser', () => {
  it('ignores name and local_path, covers digest, format and architecture', async () => {
    const fresh = () => JSON.parse(FIXTURE) as EvidenceEnvelope & { subject: Record<string, unknown> };
    expect(await idCheck(fresh())).toBe(true);
    const moved = fresh();
    moved.subject.name = 'sh-copy';
    moved.subject.local_path = '/opt/elsewhere/sh';
    expect(await idCheck(moved)).toBe(true);
    const changes: [string, unknown][] = [['format', 'mach-o'], ['architecture', 'arm64'], ['digest', { sha256: 'cd'.repeat(32) }]];
    for (const [field, value] of changes) {
      const e = fresh();
      e.subject[field] = value;
      expect(await idCheck(e), field).toBe(false);
    }
  });
});
