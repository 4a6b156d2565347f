import { describe, expect, it } from 'vitest';
import { approvalBadge, invocationSummary, lineDiff, MAX_DIFF_CELLS, orderFiles, outputPreview, splitLines } from './consent_model';

const date = (s: string) => s.slice(0, 10);

describe('consent model', () => {
  it('puts the entrypoint first', () => {
    const files = [{ path: 'SKILL.md' }, { path: 'execution.json' }, { path: 'scripts/run.mjs' }];
    expect(orderFiles(files, 'scripts/run.mjs').map((f) => f.path)).toEqual(['scripts/run.mjs', 'SKILL.md', 'execution.json']);
    expect(orderFiles(files, 'missing').map((f) => f.path)).toEqual(['SKILL.md', 'execution.json', 'scripts/run.mjs']);
  });

  it('words the approval badge', () => {
    expect(approvalBadge({ status: 'new', changes: [] }, date).label).toBe('New skill');
    expect(approvalBadge({ status: 'same', approvedAt: '2026-11-30T10:00:00Z', changes: [] }, date).label).toBe('Same revision you approved on 2026-11-30');
    const ch = approvalBadge(
      { status: 'changed', approvedAt: '2026-11-29T10:00:00Z', changes: [{ path: 'execution.json', kind: 'modified' }, { path: 'scripts/run.mjs', kind: 'modified' }, { path: 'x', kind: 'added' }] },
      date,
    );
    expect(ch.label).toBe('Changed since the revision you approved on 2026-11-29: execution.json, scripts/run.mjs, x (added)');
    expect(ch.tone).toBe('warn');
    expect(approvalBadge({ status: 'unknown', changes: [], error: 'boom' }, date).text).toContain('boom');
    expect(approvalBadge(undefined, date).label).toBe('Approval history unknown');
  });

  it('summarizes only large invocations, biggest key first', () => {
    expect(invocationSummary('{\n  "a": 1\n}')).toBeNull();
    const big = JSON.stringify({ small: 1, text: 'x'.repeat(3000), list: [1, 2, 3], nested: { a: 1, b: 2 } }, null, 2);
    const s = invocationSummary(big)!;
    expect(s).toMatch(/^4 top-level keys, 3\.0 KB in all: text \(string of 3000 characters, 2\.9 KB\)/);
    expect(s).toContain('list (array of 3, 7 B)');
    expect(s).toContain('nested (object, 2 keys, 13 B)');
    const many = JSON.stringify(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i])), null, 2);
    expect(invocationSummary(many)).toMatch(/and 12 more$/);
    expect(invocationSummary(JSON.stringify(Array.from({ length: 40 }, () => 1), null, 2))).toMatch(/^array of 40, /);
    expect(invocationSummary('x'.repeat(5000))).toBeNull(); // not JSON: shown as is
  });

  it('diffs lines with numbers on both sides', () => {
    const d = lineDiff('a\nb\nc\nd\n', 'a\nB\nc\nd\ne\n');
    expect(d.map((l) => `${l.kind[0]}${l.oldNo ?? '-'}${l.newNo ?? '-'}:${l.text}`)).toEqual(['s11:a', 'd2-:b', 'a-2:B', 's33:c', 's44:d', 'a-5:e']);
    expect(lineDiff('same\n', 'same\n').every((l) => l.kind === 'same')).toBe(true);
    expect(lineDiff('', 'x\n')).toEqual([{ kind: 'add', text: 'x', newNo: 1 }]);
    expect(lineDiff('x\n', '')).toEqual([{ kind: 'del', text: 'x', oldNo: 1 }]);
    expect(splitLines('a\n\nb')).toEqual(['a', '', 'b']);
  });

  it('falls back to a plain replacement past the cell budget, still exact', () => {
    const n = Math.ceil(Math.sqrt(MAX_DIFF_CELLS)) + 1;
    const a = Array.from({ length: n }, (_, i) => `a${i}`).join('\n');
    const b = Array.from({ length: n }, (_, i) => `b${i}`).join('\n');
    const d = lineDiff(a, b);
    expect(d.filter((l) => l.kind === 'del')).toHaveLength(n);
    expect(d.filter((l) => l.kind === 'add')).toHaveLength(n);
    // Re-assembling each side gives back its text.
    expect(d.filter((l) => l.kind !== 'add').map((l) => l.text).join('\n')).toBe(a);
    expect(d.filter((l) => l.kind !== 'del').map((l) => l.text).join('\n')).toBe(b);
  });

  it('previews the first lines of an output', () => {
    const p = outputPreview({ a: 1, b: [1, 2, 3] }, 3)!;
    expect(p.text.split('\n')).toHaveLength(3);
    expect(p.more).toBe(5);
    expect(outputPreview(undefined)).toBeNull();
  });
});
