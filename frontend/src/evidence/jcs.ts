// RFC 8785 JSON Canonicalization Scheme and the commitment digest of
// docs/formats/capture-record.md: digest(v) = hex(SHA-256(JCS(v))), computed in the
// browser with WebCrypto so the viewer re-checks commitments itself
// instead of trusting the backend's word.
//
// Hand-written because it is small and exact in JavaScript: RFC 8785
// defines number serialization as ECMAScript's Number::toString and string
// escaping as JSON.stringify's, and JavaScript's default string sort
// compares UTF-16 code units, which is the RFC's property order. What is
// left is rejecting what I-JSON forbids (non-finite numbers, lone
// surrogates) and walking the value. Tested against the RFC's vectors.

/** Thrown for a value RFC 8785 cannot canonicalize. */
export class CanonicalizationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CanonicalizationError';
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function str(s: string): string {
  if (LONE_SURROGATE.test(s)) throw new CanonicalizationError('a string holds a lone surrogate (not I-JSON)');
  return JSON.stringify(s);
}

/** The RFC 8785 canonical JSON text of a parsed JSON value. */
export function canonicalize(v: unknown): string {
  const parts: string[] = [];
  walk(v, parts);
  return parts.join('');
}

function walk(v: unknown, out: string[]): void {
  if (v === null) {
    out.push('null');
    return;
  }
  switch (typeof v) {
    case 'boolean':
      out.push(v ? 'true' : 'false');
      return;
    case 'number':
      if (!Number.isFinite(v)) throw new CanonicalizationError(`${v} is not a JSON number`);
      out.push(JSON.stringify(v)); // ECMAScript Number::toString; -0 → "0"
      return;
    case 'string':
      out.push(str(v));
      return;
    case 'object': {
      if (Array.isArray(v)) {
        out.push('[');
        v.forEach((x, i) => {
          if (i) out.push(',');
          walk(x, out);
        });
        out.push(']');
        return;
      }
      const o = v as Record<string, unknown>;
      const keys = Object.keys(o).sort(); // UTF-16 code unit order
      out.push('{');
      keys.forEach((k, i) => {
        if (i) out.push(',');
        out.push(str(k), ':');
        walk(o[k], out);
      });
      out.push('}');
      return;
    }
    default:
      throw new CanonicalizationError(`a ${typeof v} is not a JSON value`);
  }
}

/** Lowercase hex SHA-256 of the UTF-8 bytes of s (WebCrypto). */
export async function sha256Hex(s: string): Promise<string> {
  const buf = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(s));
  return Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** digest(v) = hex(SHA-256(RFC 8785 JCS(v))). */
export function digest(v: unknown): Promise<string> {
  return sha256Hex(canonicalize(v));
}
