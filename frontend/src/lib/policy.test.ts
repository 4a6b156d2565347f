import { describe, expect, it } from 'vitest';
import type { Policy } from '../api/types';
import { ceilingHint, ceilingValue, describeProblem, groupErrors, linesToList, MODE_ORDER, MODES, normalizePath, policyChanges, policyFieldLabel, policyForSave, revisionHint, scopeEdited, workspaceHint } from './policy';

const scope = (over: Partial<Policy['trusted'][number]> = {}) => ({
  revision: 'sha256:' + 'a'.repeat(64),
  agentId: 'local',
  workspace: '/w',
  timeoutMsCeiling: 5000,
  maxOutputBytesCeiling: 65536,
  receiptId: null as string | null,
  approvedAt: null as string | null,
  ...over,
});

describe('normalizePath', () => {
  it('handles the server path forms', () => {
    expect(normalizePath('$')).toBe('');
    expect(normalizePath('$.mode')).toBe('mode');
    expect(normalizePath('$.trusted[3].workspace')).toBe('trusted.3.workspace');
    expect(normalizePath('$.trusted[0]')).toBe('trusted.0');
    expect(normalizePath('$.roots[12]')).toBe('roots.12');
    expect(normalizePath('$["weird key"]')).toBe('weird key');
    expect(normalizePath('$.executableRoots[1]')).toBe('executableRoots.1');
    expect(normalizePath('$["x-host"].a')).toBe('x-host.a');
    expect(normalizePath('$.properties["$ref"]')).toBe('properties.$ref');
    expect(normalizePath('$["q\\"\\\\"]')).toBe('q"\\');
    expect(normalizePath('$["\\u001b[2J"][0]')).toBe('\u001b[2J.0');
    expect(normalizePath('$[""]')).toBe('');
  });

  it('reads only the one path syntax the backend writes', () => {
    // JSON pointers, bare names and malformed steps are not paths of that
    // syntax: they come back as written, never as some field.
    for (const p of ['/trusted/0/revision', 'safeMode', '$.', '$..a', '$.a-b', '$[01]', '$[-1]', '$["a"', '$["\\x"]', '$[\'a\']', '$.trusted[0]junk']) {
      expect(normalizePath(p)).toBe(p);
    }
  });

  it('groups messages by field', () => {
    const g = groupErrors(
      [
        { path: '$.trusted[0].workspace', message: 'a' },
        { path: '$.trusted[0].workspace', message: 'b' },
        { path: '$.mode', message: 'c' },
      ],
      (d) => d.path,
    );
    expect(g.get('trusted.0.workspace')).toEqual(['a', 'b']);
    expect(g.get('mode')).toEqual(['c']);
  });
});

describe('policyChanges', () => {
  it('counts receipts issued, kept and revoked', () => {
    const before: Policy = { mode: 'trusted_revisions', safeMode: false, trusted: [scope({ receiptId: 'r1', approvedAt: 't' }), scope({ workspace: '/x', receiptId: 'r2', approvedAt: 't' })] };
    const after: Policy = { mode: 'trusted_revisions', safeMode: false, trusted: [scope({ receiptId: 'r1', approvedAt: 't' }), scope({ workspace: '/y', receiptId: 'r3', approvedAt: 't' })] };
    const c = policyChanges(before, after);
    expect([c.issued, c.kept, c.removed, c.drafts]).toEqual([1, 1, 1, 0]);
    expect(c.lines).toEqual(['1 receipt issued.', '1 receipt kept.', '1 receipt revoked.']);
  });

  it('describes mode and safe mode changes and drafts', () => {
    const c = policyChanges({ mode: 'ask', safeMode: false, trusted: [] }, { mode: 'blocked', safeMode: true, trusted: [scope(), scope({ workspace: '/b' })] });
    expect(c.lines[0]).toBe('Mode changed from Ask every time to Blocked.');
    expect(c.lines[1]).toMatch(/Safe mode turned on/);
    expect(c.lines).toContain('2 scopes are saved as drafts (not in force outside Trusted revisions mode).');
    expect(c.lines).toContain('2 scopes added.');
  });

  it('says when nothing changed', () => {
    const p: Policy = { mode: 'ask', safeMode: false, trusted: [] };
    expect(policyChanges(p, p).lines).toEqual(['Saved; nothing changed.']);
  });
});

describe('policy helpers', () => {
  it('sends the whole policy with trimmed text fields', () => {
    const out = policyForSave({ mode: 'ask', safeMode: true, trusted: [scope({ revision: ' sha256:x ', workspace: ' /w ' })] });
    expect(out).toEqual({ mode: 'ask', safeMode: true, trusted: [scope({ revision: 'sha256:x', workspace: '/w' })] });
    expect(Object.keys(out.trusted[0]).sort()).toEqual(['agentId', 'approvedAt', 'maxOutputBytesCeiling', 'receiptId', 'revision', 'timeoutMsCeiling', 'workspace']);
  });

  it('detects edited scopes by their binding only', () => {
    expect(scopeEdited(scope(), scope({ receiptId: 'r' }))).toBe(false);
    expect(scopeEdited(scope(), scope({ timeoutMsCeiling: 1 }))).toBe(true);
  });

  it('has a plain-language line for every mode', () => {
    expect(MODE_ORDER.slice().sort()).toEqual(['ask', 'blocked', 'trusted_revisions', 'workflow']);
    for (const m of MODE_ORDER) expect(MODES[m].line.length).toBeGreaterThan(20);
  });

  it('splits lists by line', () => {
    expect(linesToList(' /a \n\n/b\n')).toEqual(['/a', '/b']);
  });
});

describe('policy field labels and problems', () => {
  it('labels every path form the server and the form use', () => {
    expect(policyFieldLabel('$.trusted[1].timeoutMsCeiling')).toBe('Scope 2 · Time ceiling');
    expect(policyFieldLabel('trusted.0.workspace')).toBe('Scope 1 · Workspace');
    expect(policyFieldLabel('$.trusted[0]')).toBe('Scope 1');
    expect(policyFieldLabel('$.trusted')).toBe('Trusted revisions');
    expect(policyFieldLabel('$.mode')).toBe('Mode');
    expect(policyFieldLabel('$.safeMode')).toBe('Safe mode');
    expect(policyFieldLabel('$["odd key"]')).toBe('odd key');
    expect(policyFieldLabel('$.trusted[0].network')).toBe('Scope 1 · network');
    expect(policyFieldLabel('$')).toBe('Policy');
  });
  it('says the bound that was crossed, in the field unit, from the server answer', () => {
    expect(describeProblem({ code: 'out_of_range', path: '$.trusted[0].timeoutMsCeiling', message: 'must be at least 1000', min: 1000, max: 120000 })).toEqual({ label: 'Scope 1 · Time ceiling', text: 'at least 1,000 ms' });
    expect(describeProblem({ code: 'out_of_range', path: '$.trusted[2].maxOutputBytesCeiling', message: 'must be at most 262144', min: 1, max: 262144 })).toEqual({ label: 'Scope 3 · Output ceiling', text: 'at most 262,144 bytes' });
    expect(describeProblem({ code: 'invalid_type', path: '$.trusted[0].timeoutMsCeiling', message: 'must be a whole number' }).text).toBe('a whole number of milliseconds, 1,000–120,000 ms');
    expect(describeProblem({ code: 'invalid_workspace', path: '$.trusted[0].workspace', message: 'workspace must be an absolute, clean path' }).text).toBe('workspace must be an absolute, clean path');
  });
  it('sends what was typed: numbers as numbers, anything else as text for the server to report', () => {
    expect(ceilingValue(' 5000 ')).toBe(5000);
    expect(ceilingValue('-3')).toBe(-3);
    expect(ceilingValue('1.5')).toBe('1.5');
    expect(ceilingValue('')).toBe('');
    expect(ceilingValue('99999999999999999999')).toBe('99999999999999999999');
  });
  it('hints at the limit and one past it exactly like the server', () => {
    expect(ceilingHint('timeoutMsCeiling', '1000')).toBeNull();
    expect(ceilingHint('timeoutMsCeiling', '999')).toBe('Time ceiling: at least 1,000 ms');
    expect(ceilingHint('timeoutMsCeiling', '120000')).toBeNull();
    expect(ceilingHint('timeoutMsCeiling', '120001')).toBe('Time ceiling: at most 120,000 ms');
    expect(ceilingHint('maxOutputBytesCeiling', '0')).toBe('Output ceiling: at least 1 bytes');
    expect(ceilingHint('maxOutputBytesCeiling', '262144')).toBeNull();
    expect(ceilingHint('maxOutputBytesCeiling', '262145')).toBe('Output ceiling: at most 262,144 bytes');
    expect(ceilingHint('maxOutputBytesCeiling', 'lots')).toBe('Output ceiling: a whole number of bytes');
  });
});

describe('revision and workspace hints', () => {
  it('mirror the server: sha256 and 64 lowercase hex digits', () => {
    expect(revisionHint('sha256:' + 'a'.repeat(64))).toBeNull();
    expect(revisionHint('sha256:' + 'a'.repeat(63))).not.toBeNull();
    expect(revisionHint('sha256:' + 'A'.repeat(64))).not.toBeNull();
    expect(revisionHint('')).toBeNull();
  });
  it('mirror filepath.Clean for absolute paths', () => {
    for (const ok of ['/', '/w', '/home/a b/c', '/a/.hidden', '/a/..b']) expect(workspaceHint(ok)).toBeNull();
    for (const bad of ['w', './w', '/a/', '/a//b', '/a/./b', '/a/../b', '/..', '/a/.', '//']) expect(workspaceHint(bad)).not.toBeNull();
  });
});
