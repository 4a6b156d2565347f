// Input validation for the memory-organization planner.
// Mirrors execution.json's inputSchema (so direct runs behave like checked
// runs) and adds the semantic checks a schema cannot express: RFC 3339
// timestamps, expires_at not before observed_at, unique ids.

import { parseRfc3339, preview } from './normalize.mjs';

export const MAX_ERRORS = 20;
export const MAX_FACTS = 1000;
export const DEFAULT_THRESHOLD = 0.85;

const LIMITS = {
  id: 200,
  kind: 100,
  subject: 200,
  content: 4000,
  source: 500,
  tag: 64,
  tags: 32,
};

const ROOT_KEYS = new Set(['facts', 'now', 'near_duplicate_threshold']);

class ErrorList {
  constructor() {
    this.items = [];
  }
  add(path, message) {
    if (this.items.length < MAX_ERRORS) this.items.push({ path, message });
  }
  get full() {
    return this.items.length >= MAX_ERRORS;
  }
}

function codePoints(text) {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}

function isPlainObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function keyPath(base, key) {
  if (/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(key)) return `${base}.${key}`;
  return `${base}[${JSON.stringify(preview(key, 40))}]`;
}

function checkString(errors, obj, key, path, { required, max }) {
  const value = obj[key];
  if (value === undefined) {
    if (required) errors.add(path, 'is required');
    return false;
  }
  if (typeof value !== 'string') {
    errors.add(path, 'must be a string');
    return false;
  }
  if (required && value.length === 0) {
    errors.add(path, 'must not be empty');
    return false;
  }
  if (codePoints(value) > max) {
    errors.add(path, `must be at most ${max} characters`);
    return false;
  }
  return true;
}

function checkTimestamp(errors, value, path) {
  if (typeof value !== 'string') {
    errors.add(path, 'must be an RFC 3339 date-time string');
    return null;
  }
  const parsed = parseRfc3339(value);
  if (!parsed.ok) {
    errors.add(path, `${JSON.stringify(preview(value))} ${parsed.reason}`);
    return null;
  }
  return parsed.ns;
}

/**
 * Validate a parsed invocation.
 * Returns { ok: true, facts, nowNs, threshold } or { ok: false, errors }.
 * `defaultNow` is an RFC 3339 string used when the input has no "now".
 */
export function validateInput(input, defaultNow) {
  const errors = new ErrorList();
  if (!isPlainObject(input)) {
    errors.add('$', 'must be a JSON object');
    return { ok: false, errors: errors.items };
  }
  for (const key of Object.keys(input)) {
    if (!ROOT_KEYS.has(key)) errors.add(keyPath('$', key), 'is not a known property');
  }

  let nowNs = null;
  if (input.now !== undefined) {
    nowNs = checkTimestamp(errors, input.now, '$.now');
  } else {
    nowNs = parseRfc3339(defaultNow).ns;
  }

  let threshold = DEFAULT_THRESHOLD;
  if (input.near_duplicate_threshold !== undefined) {
    const t = input.near_duplicate_threshold;
    if (typeof t !== 'number' || !Number.isFinite(t) || t < 0.5 || t > 1) {
      errors.add('$.near_duplicate_threshold', 'must be a number between 0.5 and 1');
    } else {
      threshold = t;
    }
  }

  const facts = [];
  if (input.facts === undefined) {
    errors.add('$.facts', 'is required');
  } else if (!Array.isArray(input.facts)) {
    errors.add('$.facts', 'must be an array');
  } else if (input.facts.length > MAX_FACTS) {
    errors.add('$.facts', `must contain at most ${MAX_FACTS} facts`);
  } else {
    const firstIndexById = new Map();
    input.facts.forEach((fact, index) => {
      if (errors.full) return;
      const base = `$.facts[${index}]`;
      if (!isPlainObject(fact)) {
        errors.add(base, 'must be an object');
        return;
      }
      const before = errors.items.length;
      const idOk = checkString(errors, fact, 'id', `${base}.id`, { required: true, max: LIMITS.id });
      checkString(errors, fact, 'kind', `${base}.kind`, { required: true, max: LIMITS.kind });
      checkString(errors, fact, 'subject', `${base}.subject`, { required: true, max: LIMITS.subject });
      checkString(errors, fact, 'content', `${base}.content`, { required: true, max: LIMITS.content });
      if (fact.source !== undefined) {
        checkString(errors, fact, 'source', `${base}.source`, { required: false, max: LIMITS.source });
      }
      if (fact.tags !== undefined) {
        if (!Array.isArray(fact.tags)) {
          errors.add(`${base}.tags`, 'must be an array of strings');
        } else if (fact.tags.length > LIMITS.tags) {
          errors.add(`${base}.tags`, `must contain at most ${LIMITS.tags} tags`);
        } else {
          fact.tags.forEach((tag, t) => {
            if (typeof tag !== 'string') errors.add(`${base}.tags[${t}]`, 'must be a string');
            else if (codePoints(tag) > LIMITS.tag) errors.add(`${base}.tags[${t}]`, `must be at most ${LIMITS.tag} characters`);
          });
        }
      }
      const c = fact.confidence;
      if (c === undefined) errors.add(`${base}.confidence`, 'is required');
      else if (typeof c !== 'number' || !Number.isFinite(c) || c < 0 || c > 1) {
        errors.add(`${base}.confidence`, 'must be a number between 0 and 1');
      }

      let observedNs = null;
      if (fact.observed_at === undefined) errors.add(`${base}.observed_at`, 'is required');
      else observedNs = checkTimestamp(errors, fact.observed_at, `${base}.observed_at`);

      let expiresNs = null;
      if (fact.expires_at !== undefined && fact.expires_at !== null) {
        expiresNs = checkTimestamp(errors, fact.expires_at, `${base}.expires_at`);
        if (expiresNs !== null && observedNs !== null && expiresNs < observedNs) {
          errors.add(`${base}.expires_at`, `is before observed_at (${preview(fact.observed_at)})`);
        }
      }

      if (idOk) {
        const first = firstIndexById.get(fact.id);
        if (first !== undefined) {
          errors.add(`${base}.id`, `duplicate id ${JSON.stringify(preview(fact.id))} (first used at $.facts[${first}].id)`);
        } else {
          firstIndexById.set(fact.id, index);
        }
      }

      if (errors.items.length === before) {
        facts.push({
          index,
          id: fact.id,
          kind: fact.kind,
          subject: fact.subject,
          content: fact.content,
          confidence: c,
          observed_at: fact.observed_at,
          observedNs,
          expires_at: fact.expires_at ?? null,
          expiresNs,
        });
      }
    });
  }

  if (errors.items.length > 0) return { ok: false, errors: errors.items };
  return { ok: true, facts, nowNs, threshold };
}
