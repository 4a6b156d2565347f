import { describe, expect, it } from 'vitest';
import type { FirstDivergence } from '../api/types';
import { canonical, charRanges, divergenceWords, fieldDiffs, isRow, rowsOf, screenMarks, segments } from './compare_diff';

describe('character ranges', () => {
  it('marks the differing characters like the backend', () => {
    // The same cases as backend/compare (TestCharRanges, the one-line change).
    expect(charRanges('abc', 'abc')).toEqual({ left: [], right: [] });
    expect(charRanges('50%', '55%')).toEqual({ left: [[1, 2]], right: [[1, 2]] });
    expect(charRanges('', 'xyz')).toEqual({ left: [], right: [[0, 3]] });
    expect(charRanges('✔ build succeeded', '✘ build failed')).toEqual({ left: [[0, 1], [8, 15]], right: [[0, 1], [8, 12]] });
  });
  it('swapping the sides swaps the ranges', () => {
    for (const [a, b] of [['kitten', 'sitting'], ['abcabc', 'cbacba'], ['ünï', 'uni']]) {
      const x = charRanges(a!, b!);
      const y = charRanges(b!, a!);
      expect(y).toEqual({ left: x.right, right: x.left });
    }
  });
  it('splits text into marked pieces by code point', () => {
    expect(segments('✘ build failed', [[0, 1], [8, 12]])).toEqual([
      { text: '✘', marked: true },
      { text: ' build ', marked: false },
      { text: 'fail', marked: true },
      { text: 'ed', marked: false },
    ]);
    expect(segments('ab', [[5, 9]])).toEqual([{ text: 'ab', marked: false }]);
    expect(segments('', [])).toEqual([{ text: '', marked: false }]);
  });
  it('marks only rows that differ on two screens', () => {
    const m = screenMarks(['same  ', '50%   '], ['same', '55%', 'extra']);
    expect([...m.left.entries()]).toEqual([[1, [[1, 2]]]]);
    expect([...m.right.entries()]).toEqual([[1, [[1, 2]]], [2, [[0, 5]]]]);
  });
});

describe('field-level differences', () => {
  it('compares canonically and marks differing fields', () => {
    expect(canonical({ b: 1, a: [1, { d: 2, c: 3 }] })).toBe('{"a":[1,{"c":3,"d":2}],"b":1}');
    const f = fieldDiffs({ command: 'git', working_directory: 'a', x: 1 }, { working_directory: 'b', command: 'git', y: 2 })!;
    expect(f.map((x) => [x.key, x.differs])).toEqual([['command', false], ['working_directory', true], ['x', true], ['y', true]]);
    expect(fieldDiffs('a', 'b')).toBeNull();
    // The backend's list (under the mode) decides: times differ but are not named.
    const g = fieldDiffs({ at_ms: 1, path: '/a' }, { at_ms: 2, path: '/b' }, ['path'])!;
    expect(g.map((x) => [x.key, x.differs])).toEqual([['at_ms', false], ['path', true]]);
  });
});

describe('the first divergence in words', () => {
  it('names the differing terminal row', () => {
    const fd: FirstDivergence = {
      status: 'found', dimension: 'terminal', index: 0, left_at_ms: 10, right_at_ms: 12,
      left: { offset: 5, rows: [{ row: 3, text: '✔ build succeeded', ranges: [[0, 1]] }] },
      right: { offset: 5, rows: [{ row: 3, text: '✘ build failed', ranges: [[0, 1]] }] },
      left_location: '$.normalized_result.frames[2]', right_location: '$.normalized_result.frames[2]',
    };
    expect(divergenceWords(fd)).toBe("Terminal row 4: '✔ build succeeded' → '✘ build failed'");
  });
  it('names differing fields and one-sided items', () => {
    const base = { status: 'found' as const, index: 0, left_at_ms: 1, right_at_ms: 1, left_location: null, right_location: null };
    expect(divergenceWords({ ...base, dimension: 'shim', left: { command: 'codex', working_directory: '<wd>' }, right: { command: 'codex', working_directory: '<wd>/sub' } })).toBe(
      "Shims item 1: working_directory '<wd>' → '<wd>/sub'",
    );
    expect(divergenceWords({ ...base, dimension: 'process', left: null, right: { command: 'curl x', parent_commands: [] } })).toMatch(/^Processes: only the right run has /);
    expect(divergenceWords({ status: 'none' })).toMatch(/Nothing differs/);
    expect(divergenceWords({ ...base, dimension: 'protocol', left: { at_ms: 30, path: '/a/1' }, right: { at_ms: 60, path: '/b/1' } }, ['path'])).toBe("Protocol item 1: path '/a/1' → '/b/1'");
  });
  it('never passes control characters through', () => {
    const fd: FirstDivergence = {
      status: 'found', dimension: 'terminal', index: 0, left_at_ms: 0, right_at_ms: 0,
      left: { offset: 0, data: '\x1b[2Ja', rows: [] }, right: { offset: 0, data: '\x1b[2Jb', rows: [] },
      left_location: null, right_location: null,
    };
    expect(divergenceWords(fd)).not.toMatch(/\x1b/);
  });
});

describe('screen rows', () => {
  it('reads only well-formed rows', () => {
    expect(isRow({ row: 3, text: 'x' })).toBe(true);
    for (const v of [null, 'row', { row: '3', text: 'x' }, { row: 3 }, { text: 'x' }]) expect(isRow(v)).toBe(false);
    expect(rowsOf({ rows: [{ row: 1, text: 'a', ranges: [[0, 1]] }, { row: 'x', text: 'b' }, null, { row: 2, text: 'c' }] })).toEqual([
      { row: 1, text: 'a', ranges: [[0, 1]] },
      { row: 2, text: 'c' },
    ]);
    expect(rowsOf({ rows: 'no' })).toEqual([]);
    expect(rowsOf(null)).toEqual([]);
  });
});
