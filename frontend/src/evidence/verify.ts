// Re-verifies an Evidence envelope's commitments in the browser (WebCrypto
// SHA-256 over RFC 8785 canonical JSON), independently of the backend,
// which verified the same file before handing it over. Each check names
// the JSON path of the committed digest and what it was computed over.

import { CanonicalizationError, digest } from './jcs';
import type { CaptureRecord, EvidenceEnvelope } from './record';
import { PREDICATE_CAPTURE } from './record';

export interface CommitmentCheck {
  /** JSON path of the digest in the Evidence file. */
  path: string;
  /** What the digest covers, for people. */
  covers: string;
  expected: string;
  /** The digest computed here; null when it cannot be computed. */
  actual: string | null;
  /** true: equal; false: differs or cannot be computed; null: not
   * checkable here (the value is not embedded). */
  ok: boolean | null;
  note?: string;
}

async function check(path: string, covers: string, expected: unknown, value: unknown, prefix = ''): Promise<CommitmentCheck> {
  const exp = typeof expected === 'string' ? expected : '';
  try {
    const actual = prefix + (await digest(value));
    return { path, covers, expected: exp, actual, ok: actual === exp };
  } catch (e) {
    const note = e instanceof CanonicalizationError ? e.message : String(e);
    return { path, covers, expected: exp, actual: null, ok: false, note };
  }
}

/** The evidence_id projection: the envelope without evidence_id, with
 * the subject reduced to {digest, format, architecture}. */
export function idProjection(env: EvidenceEnvelope): Record<string, unknown> {
  const p: Record<string, unknown> = { ...env };
  delete p.evidence_id;
  if (env.subject) p.subject = { digest: env.subject.digest, format: env.subject.format, architecture: env.subject.architecture };
  return p;
}

/** Every commitment of the envelope (and of its capture record), checked
 * here. The evidence_id check covers the whole file, so it runs last. */
export async function verifyCommitments(env: EvidenceEnvelope): Promise<CommitmentCheck[]> {
  const out: CommitmentCheck[] = [];
  if (env.predicate_type === PREDICATE_CAPTURE && env.normalized_result && typeof env.normalized_result === 'object') {
    const rec = env.normalized_result as CaptureRecord;
    const m = rec.manifest;
    const base = '$.normalized_result.manifest';
    out.push(await check(`${base}.full_scenario_sha256`, 'manifest.scenario', m.full_scenario_sha256, m.scenario));
    out.push(await check(`${base}.comparison_contract_sha256`, 'manifest.comparison_contract', m.comparison_contract_sha256, m.comparison_contract));
    out.push(await check(`${base}.normalization_sha256`, 'normalization', m.normalization_sha256, rec.normalization));
    out.push(await check(`${base}.shim_plan_sha256`, 'manifest.shim_plan', m.shim_plan_sha256, m.shim_plan));
    out.push(await check(`${base}.replay_plan_sha256`, 'manifest.replay_plan', m.replay_plan_sha256, m.replay_plan));
    out.push({
      path: `${base}.executable_sha256`,
      covers: 'the executable’s bytes',
      expected: m.executable_sha256,
      actual: null,
      ok: null,
      note: 'the executable is not embedded in the Evidence, so this digest cannot be recomputed here',
    });
  }
  out.push(await check('$.evidence_id', 'the whole envelope (without evidence_id; subject reduced to its identity)', env.evidence_id, idProjection(env), 'ev_'));
  return out;
}

/** What a verification worker is asked: the exact JSON text of a result
 * that holds an Evidence envelope under `field` ("" = the text is the
 * envelope), or the envelope itself when no text exists (the desktop
 * shell hands over parsed values). */
export interface VerifyRequest {
  text?: string;
  field?: string;
  envelope?: EvidenceEnvelope;
}

/** A worker's answer: every commitment checked, or why none could be. */
export type VerifyReply = { checks: CommitmentCheck[] } | { error: string };

/** Answers one VerifyRequest (what verify_worker.ts runs off the page's
 * thread). It parses its own copy of the text, so the page never clones
 * a 10 MB object graph to hand it over. */
export async function answerVerify(req: VerifyRequest): Promise<VerifyReply> {
  try {
    let env = req.envelope;
    if (req.text !== undefined) {
      const v = JSON.parse(req.text) as Record<string, unknown>;
      env = (req.field ? v[req.field] : v) as EvidenceEnvelope;
    }
    if (!env || typeof env !== 'object') return { error: 'no Evidence envelope to verify' };
    return { checks: await verifyCommitments(env) };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

/** The browser's verdict on a list of checks: "ok" only when the
 * evidence_id check (which covers the whole file) was made and matched and
 * no check failed; an empty or partial list is never "ok". */
export function verdict(checks: readonly CommitmentCheck[]): 'ok' | 'mismatch' | 'incomplete' {
  if (checks.some((c) => c.ok === false)) return 'mismatch';
  return checks.some((c) => c.path === '$.evidence_id' && c.ok === true) ? 'ok' : 'incomplete';
}
