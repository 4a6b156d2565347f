// Tests for bundles/memory-organization: run the real entrypoint as a child
// process (like Gatehouse does) and compare the complete parsed output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { checkManifestShape, loadBundle } from './harness.mjs';

const bundle = loadBundle('memory-organization');
const { manifest, run, runRaw } = bundle;

// --- fixtures -----------------------------------------------------------------
const NOW = '2025-06-01T00:00:00Z';
let serial = 0;
function fact(overrides) {
  serial += 1;
  return {
    id: `f${serial}`,
    kind: 'preference',
    subject: 'user.editor.theme',
    content: 'The user prefers dark mode in the editor.',
    tags: [],
    confidence: 0.5,
    source: 'test',
    observed_at: '2025-01-01T00:00:00Z',
    expires_at: null,
    ...overrides,
  };
}
const emptyPlan = () => ({
  expired: [],
  exact_duplicates: [],
  near_duplicates: [],
  conflicts: [],
  summary: { total: 0, expired: 0, duplicates: 0, near_duplicates: 0, conflicts: 0, kept: 0, truncated: false },
});

// --- manifest -------------------------------------------------------------------
test('execution.json has the strict v1 shape and existing files', () => {
  checkManifestShape(bundle);
  assert.equal(manifest.entrypoint, 'scripts/run.mjs');
  assert.equal(manifest.timeoutMs, 5000);
  assert.equal(manifest.maxOutputBytes, 65536);
  assert.equal(manifest.inputSchema.type, 'object');
  assert.equal(manifest.outputSchema.anyOf.length, 2);
});

// --- categories -----------------------------------------------------------------
test('expired: expires_at before or equal to now is proposed for deletion', () => {
  const facts = [
    fact({ id: 'b', subject: 's1', expires_at: '2025-05-31T23:59:59Z' }),
    fact({ id: 'a', subject: 's2', expires_at: '2025-06-01T02:00:00+02:00' }), // == now
    fact({ id: 'c', subject: 's3', expires_at: '2025-06-01T00:00:00.001Z' }), // just after now
  ];
  const plan = emptyPlan();
  plan.expired = [
    { id: 'a', expired_at: '2025-06-01T02:00:00+02:00', action: 'delete' },
    { id: 'b', expired_at: '2025-05-31T23:59:59Z', action: 'delete' },
  ];
  plan.summary = { total: 3, expired: 2, duplicates: 0, near_duplicates: 0, conflicts: 0, kept: 1, truncated: false };
  assert.deepEqual(run({ facts, now: NOW }), { ok: true, plan });
});

test('exact duplicates: folded case, whitespace and punctuation; keep by confidence, then newest, then id', () => {
  const facts = [
    // confidence decides
    fact({ id: 'x1', kind: 'profile', subject: 'user.tz', content: "User's time zone is Europe/Berlin.", confidence: 0.6 }),
    fact({ id: 'x2', kind: 'Profile', subject: 'User.TZ', content: "  user's TIME zone is europe / berlin ", confidence: 0.9 }),
    // newest observed_at decides (offset applied: 10:30+02:00 is 08:30Z, newer than 08:00Z)
    fact({ id: 'y1', subject: 'user.lang', content: 'Speaks German', confidence: 0.7, observed_at: '2025-01-01T08:00:00Z' }),
    fact({ id: 'y2', subject: 'user.lang', content: 'speaks german!', confidence: 0.7, observed_at: '2025-01-01T10:30:00+02:00' }),
    // full tie: smallest id
    fact({ id: 'z2', subject: 'user.os', content: 'Uses Linux.' }),
    fact({ id: 'z1', subject: 'user.os', content: 'uses linux' }),
    fact({ id: 'z3', subject: 'user.os', content: 'USES LINUX' }),
  ];
  const plan = emptyPlan();
  plan.exact_duplicates = [
    { keep: 'x2', remove: ['x1'], reason: 'same kind, subject and normalized content; kept fact has the highest confidence (0.9)' },
    { keep: 'y2', remove: ['y1'], reason: 'same kind, subject and normalized content; kept fact has equal confidence (0.7) and the newest observed_at (2025-01-01T10:30:00+02:00)' },
    { keep: 'z1', remove: ['z2', 'z3'], reason: 'same kind, subject and normalized content; kept fact has equal confidence and observed_at, and the smallest id' },
  ];
  plan.summary = { total: 7, expired: 0, duplicates: 4, near_duplicates: 0, conflicts: 0, kept: 3, truncated: false };
  assert.deepEqual(run({ facts, now: NOW }), { ok: true, plan });
});

test('near duplicates: Jaccard >= threshold but not identical, merged into the best-ranked fact', () => {
  const facts = [
    fact({ id: 'n2', content: 'User prefers dark mode in the code editor', confidence: 0.7 }), // 7/8 = 0.875
    fact({ id: 'n1', content: 'The user prefers dark mode in the editor.', confidence: 0.9 }),
    fact({ id: 'n3', content: 'the user prefers dark mode in the editor always', confidence: 0.8 }), // 7/8
  ];
  const plan = emptyPlan();
  plan.near_duplicates = [{ ids: ['n1', 'n2', 'n3'], similarity: 0.875, suggestion: 'merge', keep: 'n1' }];
  plan.summary = { total: 3, expired: 0, duplicates: 0, near_duplicates: 1, conflicts: 0, kept: 3, truncated: false };
  assert.deepEqual(run({ facts, now: NOW }), { ok: true, plan });

  // Below a stricter threshold, an elaboration (one token set contains the
  // other) is compatible: neither a near duplicate nor a conflict.
  const strict = run({ facts: facts.slice(0, 2), now: NOW, near_duplicate_threshold: 0.9 });
  assert.deepEqual(strict.plan, { ...emptyPlan(), summary: { ...emptyPlan().summary, total: 2, kept: 2 } });

  // One substituted word in 14 distinct tokens: J = 13/15 = 0.8667.
  const long = 'the user prefers dark mode in the editor and terminal on every work machine';
  const pair = [
    fact({ id: 'p1', subject: 'user.theme.all', content: `${long} today`, confidence: 0.6 }),
    fact({ id: 'p2', subject: 'user.theme.all', content: `${long} lately`, confidence: 0.6, observed_at: '2025-02-01T00:00:00Z' }),
  ];
  assert.deepEqual(run({ facts: pair, now: NOW }).plan.near_duplicates, [
    { ids: ['p1', 'p2'], similarity: 0.8666, suggestion: 'merge', keep: 'p2' },
  ]);
  // A stricter threshold turns the same pair into a conflict instead.
  assert.deepEqual(run({ facts: pair, now: NOW, near_duplicate_threshold: 0.9 }).plan.conflicts, [
    {
      subject: 'user.theme.all',
      kind: 'preference',
      ids: ['p1', 'p2'],
      keep: 'p2',
      reason: '2 active facts make different claims; kept fact has equal confidence (0.6) and the newest observed_at (2025-02-01T00:00:00Z)',
    },
  ]);
});

test('conflicts: dissimilar or negated claims on one subject; elaborations are compatible', () => {
  const facts = [
    fact({ id: 'c1', content: 'The user prefers dark mode in the editor.', confidence: 0.9 }),
    fact({ id: 'c2', content: 'The user prefers light mode in the editor.', confidence: 0.4 }),
    fact({ id: 'd1', kind: 'fact', subject: 'user.diet', content: 'The user is vegetarian.', confidence: 0.8, observed_at: '2025-02-01T00:00:00Z' }),
    fact({ id: 'd2', kind: 'fact', subject: 'user.diet', content: "The user isn't vegetarian.", confidence: 0.8, observed_at: '2025-03-01T00:00:00Z' }),
    fact({ id: 'e1', kind: 'profile', subject: 'user.home', content: 'User lives in Berlin.' }),
    fact({ id: 'e2', kind: 'profile', subject: 'user.home', content: 'User lives in Berlin, Germany.' }),
    // same subject but a different kind: never compared
    fact({ id: 'k1', kind: 'note', subject: 'user.editor.theme', content: 'Asked about themes once.' }),
  ];
  const plan = emptyPlan();
  plan.conflicts = [
    { subject: 'user.editor.theme', kind: 'preference', ids: ['c1', 'c2'], keep: 'c1', reason: '2 active facts make different claims; kept fact has the highest confidence (0.9)' },
    { subject: 'user.diet', kind: 'fact', ids: ['d1', 'd2'], keep: 'd2', reason: '2 active facts make different claims (one negates another); kept fact has equal confidence (0.8) and the newest observed_at (2025-03-01T00:00:00Z)' },
  ];
  plan.summary = { total: 7, expired: 0, duplicates: 0, near_duplicates: 0, conflicts: 2, kept: 7, truncated: false };
  assert.deepEqual(run({ facts, now: NOW }), { ok: true, plan });
});

test('expired facts and removed duplicates take part in no other category', () => {
  const facts = [
    fact({ id: 'old', content: 'The user prefers light mode.', confidence: 1, expires_at: '2025-01-02T00:00:00Z' }),
    fact({ id: 'cur', content: 'The user prefers dark mode.', confidence: 0.5 }),
    fact({ id: 'dup', content: 'the user prefers DARK mode', confidence: 0.4 }),
  ];
  const plan = emptyPlan();
  plan.expired = [{ id: 'old', expired_at: '2025-01-02T00:00:00Z', action: 'delete' }];
  plan.exact_duplicates = [{ keep: 'cur', remove: ['dup'], reason: 'same kind, subject and normalized content; kept fact has the highest confidence (0.5)' }];
  plan.summary = { total: 3, expired: 1, duplicates: 1, near_duplicates: 0, conflicts: 0, kept: 1, truncated: false };
  assert.deepEqual(run({ facts, now: NOW }), { ok: true, plan });
});

test('all categories together, in deterministic order regardless of input order', () => {
  const example = JSON.parse(readFileSync(path.join(bundle.dir, 'assets', 'example-input.json'), 'utf8'));
  const expected = JSON.parse(readFileSync(path.join(bundle.dir, 'assets', 'example-output.json'), 'utf8'));
  const forward = runRaw(JSON.stringify(example));
  assert.equal(forward.status, 0);
  assert.deepEqual(JSON.parse(forward.stdout), expected, 'assets/example-output.json is up to date');

  const reversed = runRaw(JSON.stringify({ ...example, facts: [...example.facts].reverse() }));
  const rotated = runRaw(JSON.stringify({ ...example, facts: [...example.facts.slice(5), ...example.facts.slice(0, 5)] }));
  assert.equal(reversed.stdout, forward.stdout, 'byte-identical output for reversed input');
  assert.equal(rotated.stdout, forward.stdout, 'byte-identical output for rotated input');

  const { plan } = expected;
  const ids = (list) => list.map((e) => e.id ?? e.keep ?? e.ids[0]);
  for (const key of ['expired', 'exact_duplicates', 'near_duplicates', 'conflicts']) {
    const order = ids(plan[key]);
    assert.deepEqual(order, [...order].sort(), `${key} sorted`);
    assert.ok(plan[key].length > 0, `example exercises ${key}`);
  }
});

test('empty facts list gives an empty plan', () => {
  assert.deepEqual(run({ facts: [], now: NOW }), { ok: true, plan: emptyPlan() });
  assert.deepEqual(run({ facts: [] }), { ok: true, plan: emptyPlan() }); // default now
});

test('now defaults to the current time', () => {
  const facts = [
    fact({ id: 'past', subject: 'a', observed_at: '2000-01-01T00:00:00Z', expires_at: '2001-01-01T00:00:00Z' }),
    fact({ id: 'future', subject: 'b', expires_at: '2999-01-01T00:00:00Z' }),
  ];
  const { plan } = run({ facts });
  assert.deepEqual(plan.expired, [{ id: 'past', expired_at: '2001-01-01T00:00:00Z', action: 'delete' }]);
});

// --- errors branch ---------------------------------------------------------------
test('semantic errors: bad timestamps, expires_at before observed_at, duplicate ids', () => {
  const facts = [
    fact({ id: 'a', observed_at: '2025-02-30T10:00:00Z' }),
    fact({ id: 'b', observed_at: '2025-01-01 10:00:00Z' }),
    fact({ id: 'c', observed_at: '2025-01-01T10:00:00' }),
    fact({ id: 'd', observed_at: '2025-03-01T00:00:00Z', expires_at: '2025-02-01T00:00:00Z' }),
    fact({ id: 'a', observed_at: '2025-01-01T00:00:00Z', expires_at: 'tomorrow' }),
  ];
  assert.deepEqual(run({ facts, now: '2025-06-01T25:00:00Z' }), {
    ok: false,
    errors: [
      { path: '$.now', message: '"2025-06-01T25:00:00Z" has hour 25 outside 00..23' },
      { path: '$.facts[0].observed_at', message: '"2025-02-30T10:00:00Z" has day 30 that does not exist in 2025-02' },
      { path: '$.facts[1].observed_at', message: '"2025-01-01 10:00:00Z" is not an RFC 3339 date-time (expected e.g. 2024-05-01T12:00:00Z)' },
      { path: '$.facts[2].observed_at', message: '"2025-01-01T10:00:00" is not an RFC 3339 date-time (expected e.g. 2024-05-01T12:00:00Z)' },
      { path: '$.facts[3].expires_at', message: 'is before observed_at (2025-03-01T00:00:00Z)' },
      { path: '$.facts[4].expires_at', message: '"tomorrow" is not an RFC 3339 date-time (expected e.g. 2024-05-01T12:00:00Z)' },
      { path: '$.facts[4].id', message: 'duplicate id "a" (first used at $.facts[0].id)' },
    ],
  });
});

test('structural errors when run outside Gatehouse, capped at 20', () => {
  assert.deepEqual(run([1, 2]), { ok: false, errors: [{ path: '$', message: 'must be a JSON object' }] });
  assert.deepEqual(run({ facts: 'none', near_duplicate_threshold: 0.2, extra: true }), {
    ok: false,
    errors: [
      { path: '$.extra', message: 'is not a known property' },
      { path: '$.near_duplicate_threshold', message: 'must be a number between 0.5 and 1' },
      { path: '$.facts', message: 'must be an array' },
    ],
  });
  const many = Array.from({ length: 30 }, (_, i) => fact({ id: `m${i}`, confidence: 1.5 }));
  const output = run({ facts: many, now: NOW });
  assert.equal(output.ok, false);
  assert.equal(output.errors.length, 20);
  assert.deepEqual(output.errors[19], { path: '$.facts[19].confidence', message: 'must be a number between 0 and 1' });
});

test('unparseable stdin: exit 2, nothing on stdout, a message on stderr', () => {
  for (const stdin of ['{"facts": [', '', 'not json', Buffer.from([0x7b, 0xff, 0x7d])]) {
    const result = runRaw(stdin);
    assert.equal(result.status, 2);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^memory-organization: stdin is not valid (UTF-8|JSON)\n$/);
  }
});

test('large plans are truncated to fit maxOutputBytes, counts stay complete', () => {
  const facts = Array.from({ length: 1000 }, (_, i) =>
    fact({ id: `${String(i).padStart(4, '0')}-${'x'.repeat(150)}`, subject: `s${i}`, expires_at: '2025-02-01T00:00:00Z' }));
  const { plan } = run({ facts, now: NOW });
  assert.equal(plan.summary.truncated, true);
  assert.equal(plan.summary.expired, 1000);
  assert.equal(plan.summary.kept, 0);
  assert.ok(plan.expired.length > 100 && plan.expired.length < 1000);
  assert.deepEqual(plan.expired.map((e) => e.id), facts.slice(0, plan.expired.length).map((f) => f.id));
});
