import { describe, expect, it } from 'vitest';
import { visibleString } from './visible';

describe('visibleString', () => {
  it('shows control, bidi and invisible characters as markers', () => {
    const cases: [string, string][] = [
      ['plain ünïcödé 日本', 'plain ünïcödé 日本'],
      ['a\u001b[2Jb', 'a⟨U+001B⟩[2Jb'],
      ['rtl \u202eexe.txt', 'rtl ⟨U+202E⟩exe.txt'],
      ['zw\u200b\u200d\ufeff', 'zw⟨U+200B⟩⟨U+200D⟩⟨U+FEFF⟩'],
      ['isolate\u2067x\u2069', 'isolate⟨U+2067⟩x⟨U+2069⟩'],
      ['tag\u{E0041}', 'tag⟨U+E0041⟩'],
      ['c1\u009b31m', 'c1⟨U+009B⟩31m'],
      ['line\u2028sep', 'line⟨U+2028⟩sep'],
      ['lone\ud800', 'lone⟨U+D800⟩'],
      ['lines\nand\ttab\r', 'lines\nand\ttab⟨U+000D⟩'],
    ];
    for (const [input, want] of cases) expect(visibleString(input)).toBe(want);
  });
});
