import { describe, expect, it } from 'vitest';
import { canonicalize, CanonicalizationError, digest } from './jcs';

function fromHex(h: string): number {
  const b = new DataView(new ArrayBuffer(8));
  b.setBigUint64(0, BigInt('0x' + h));
  return b.getFloat64(0);
}

describe('RFC 8785', () => {
  // Appendix B: IEEE 754 bit patterns and their canonical text.
  const numbers: [string, string][] = [
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ];
  it.each(numbers)('number %s → %s', (hex, want) => {
    expect(canonicalize(fromHex(hex))).toBe(want);
  });

  it('rejects NaN and Infinity', () => {
    expect(() => canonicalize(fromHex('7fffffffffffffff'))).toThrow(CanonicalizationError);
    expect(() => canonicalize(fromHex('7ff0000000000000'))).toThrow(CanonicalizationError);
  });

  it('serializes the section 3.2.2 example', () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    );
    expect(canonicalize(input)).toBe('{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
  });

  it('sorts properties by UTF-16 code units (section 3.2.3)', () => {
    const input = JSON.parse(
      '{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With Dagesh", "1": "One", "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control", "\\u00f6": "Latin Small Letter O With Diaeresis"}',
    );
    // (Object.keys would list "1" first: read the keys from the text.)
    const keys = [...canonicalize(input).matchAll(/"((?:[^"\\]|\\.)*)":/g)].map((m) => JSON.parse(`"${m[1]}"`));
    expect(keys).toEqual(['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33']);
    expect(canonicalize(input).startsWith('{"\\r":"Carriage Return","1":"One","\u0080":"Control"')).toBe(true);
  });

  it('rejects lone surrogates', () => {
    expect(() => canonicalize('\ud800')).toThrow(CanonicalizationError);
    expect(() => canonicalize({ '\udc00': 1 })).toThrow(CanonicalizationError);
    expect(canonicalize('\ud83d\ude00')).toBe('"\ud83d\ude00"');
  });
});

describe('digest (docs/formats/capture-record.md test vectors)', () => {
  it('matches the spec', async () => {
    expect(await digest({})).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
    expect(await digest([])).toBe('4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945');
    expect(await digest({ paths: true, pids: true, ports: true, time_bucket_ms: 10, patterns: [] })).toBe(
      '60a27b2d1ee5aa73bf2e5cb2deaed2e9cc548f961ad2e3772c981828b643cc43',
    );
    // Key order never changes a digest.
    expect(await digest({ time_bucket_ms: 10, patterns: [], ports: true, pids: true, paths: true })).toBe(
      '60a27b2d1ee5aa73bf2e5cb2deaed2e9cc548f961ad2e3772c981828b643cc43',
    );
  });
});
