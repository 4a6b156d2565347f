// Text and timestamp normalization for the memory-organization planner.
// Pure functions only: no I/O, no globals, no dependencies beyond the language.

const APOSTROPHES = /['\u2018\u2019\u02BC\uFF07]/gu;
const PUNCTUATION = /\p{P}+/gu;
const WHITESPACE = /\s+/gu;

/**
 * Fold a fact's content for exact-duplicate comparison:
 * Unicode NFKC, lower case, apostrophes removed ("don't" -> "dont"),
 * every other run of punctuation replaced by a space, whitespace collapsed
 * and trimmed. Symbols (+, $, %, emoji, ...) are kept, so "C++" and "C"
 * stay distinct.
 */
export function normalizeContent(text) {
  return String(text)
    .normalize('NFKC')
    .toLowerCase()
    .replace(APOSTROPHES, '')
    .replace(PUNCTUATION, ' ')
    .replace(WHITESPACE, ' ')
    .trim();
}

/** Tokens of a normalized string (split on the single spaces it contains). */
export function tokenize(normalized) {
  return normalized === '' ? [] : normalized.split(' ');
}

/**
 * Fold a kind or subject for grouping: NFKC, lower case, whitespace collapsed
 * and trimmed. Punctuation is significant here ("user.theme" != "user theme").
 */
export function normalizeKey(text) {
  return String(text).normalize('NFKC').toLowerCase().replace(WHITESPACE, ' ').trim();
}

// RFC 3339 date-time: full-date "T" full-time, with a mandatory offset.
// Lower-case "t"/"z" are allowed by RFC 3339 section 5.6; a space is not.
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

function daysInMonth(year, month) {
  if (month === 2) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    return leap ? 29 : 28;
  }
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Parse an RFC 3339 timestamp into exact nanoseconds since the Unix epoch
 * (a BigInt, so sub-millisecond precision survives comparisons).
 * Returns { ok: true, ns } or { ok: false, reason }.
 * A leap second (":60") is accepted and counts as the following second.
 */
export function parseRfc3339(value) {
  if (typeof value !== 'string') return { ok: false, reason: 'must be an RFC 3339 string' };
  const m = RFC3339.exec(value);
  if (!m) {
    return { ok: false, reason: 'is not an RFC 3339 date-time (expected e.g. 2024-05-01T12:00:00Z)' };
  }
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12) return { ok: false, reason: `has month ${m[2]} outside 01..12` };
  if (day < 1 || day > daysInMonth(year, month)) {
    return { ok: false, reason: `has day ${m[3]} that does not exist in ${m[1]}-${m[2]}` };
  }
  if (hour > 23) return { ok: false, reason: `has hour ${m[4]} outside 00..23` };
  if (minute > 59) return { ok: false, reason: `has minute ${m[5]} outside 00..59` };
  if (second > 60) return { ok: false, reason: `has second ${m[6]} outside 00..60` };
  let offsetMinutes = 0;
  if (!m[8]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return { ok: false, reason: `has offset ${m[9]}${m[10]}:${m[11]} out of range` };
    offsetMinutes = (oh * 60 + om) * (m[9] === '-' ? -1 : 1);
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // setUTCFullYear keeps years 0..99 literal
  date.setUTCHours(hour, minute, second, 0);
  const ms = date.getTime() - offsetMinutes * 60_000;
  const fraction = BigInt((m[7] ?? '').padEnd(9, '0') || '0');
  return { ok: true, ns: BigInt(ms) * 1_000_000n + fraction };
}

/** Shorten a value for inclusion in an error message (never echo huge input). */
export function preview(value, max = 40) {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}\u2026`;
}
