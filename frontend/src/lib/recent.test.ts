import { describe, expect, it } from 'vitest';
import { loadRecent, MAX_RECENT, parseRecent, remember, saveRecent } from './recent';

function memStore() {
  const m = new Map<string, string>();
  return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v), m };
}

describe('recent workspaces', () => {
  it('puts the latest first, once, and keeps at most MAX_RECENT', () => {
    let l: string[] = [];
    for (let i = 0; i < MAX_RECENT + 2; i++) l = remember(l, `/w${i}`);
    expect(l).toHaveLength(MAX_RECENT);
    expect(l[0]).toBe(`/w${MAX_RECENT + 1}`);
    expect(remember(l, '/w3')[0]).toBe('/w3');
    expect(remember(l, '/w3').filter((x) => x === '/w3')).toHaveLength(1);
    expect(remember(['/a'], '  ')).toEqual(['/a']);
  });
  it('reads only a list of strings from storage', () => {
    expect(parseRecent(null)).toEqual([]);
    expect(parseRecent('not json')).toEqual([]);
    expect(parseRecent('{"a":1}')).toEqual([]);
    expect(parseRecent('["/a", 3, "", "/a", "/b"]')).toEqual(['/a', '/b']);
    expect(parseRecent(JSON.stringify(Array.from({ length: 20 }, (_, i) => `/x${i}`)))).toHaveLength(MAX_RECENT);
  });
  it('saves through the store and survives a store that throws', () => {
    const s = memStore();
    saveRecent('/one', s);
    saveRecent('/two', s);
    expect(loadRecent(s)).toEqual(['/two', '/one']);
    const broken = { getItem: () => { throw new Error('denied'); }, setItem: () => { throw new Error('full'); } };
    expect(loadRecent(broken)).toEqual([]);
    expect(saveRecent('/z', broken)).toEqual(['/z']);
  });
});
