// Token-set similarity and polarity checks for the memory-organization planner.
// See references/REFERENCE.md ("Similarity") for the rules and their limits.

/** English negation markers, written as they look after normalizeContent(). */
export const NEGATIONS = new Set([
  'no', 'not', 'never', 'none', 'nobody', 'nothing', 'neither', 'nor', 'without',
  'cannot', 'cant', 'dont', 'doesnt', 'didnt', 'isnt', 'arent', 'wasnt', 'werent',
  'wont', 'wouldnt', 'shouldnt', 'couldnt', 'hasnt', 'havent', 'hadnt', 'aint',
]);

/**
 * Build the comparison profile of a token list: its unique tokens and whether
 * it contains any negation marker ("negative" polarity).
 */
export function profile(tokens) {
  const set = new Set(tokens);
  let negative = false;
  for (const token of set) {
    if (NEGATIONS.has(token)) {
      negative = true;
      break;
    }
  }
  return { set, negative };
}

/**
 * Token-set Jaccard similarity |A n B| / |A u B| as an exact fraction
 * { num, den } plus its float value. Two empty sets are identical (1).
 */
export function jaccard(a, b) {
  if (a.size === 0 && b.size === 0) return { num: 1, den: 1, value: 1 };
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const token of small) if (large.has(token)) shared += 1;
  const union = a.size + b.size - shared;
  return { num: shared, den: union, value: shared / union };
}

/** True when every token of the smaller set appears in the larger one. */
export function isSubsetEitherWay(a, b) {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const token of small) if (!large.has(token)) return false;
  return true;
}

/** Compare a Jaccard fraction with a threshold without float rounding surprises. */
export function atLeast(fraction, threshold) {
  // num/den >= t  <=>  num >= t*den, with a tiny tolerance for t's binary form.
  return fraction.num >= threshold * fraction.den - 1e-9;
}

/**
 * Relationship between two facts' content profiles (same kind and subject):
 *  - "near_duplicate": same polarity and Jaccard >= threshold;
 *  - "compatible": same polarity and one token set contains the other
 *    (an elaboration such as "lives in Berlin" / "lives in Berlin, Germany");
 *  - "conflict": opposite polarity (one side negated), or Jaccard < threshold
 *    with neither token set containing the other.
 */
export function relate(p, q, threshold) {
  const sim = jaccard(p.set, q.set);
  if (p.negative !== q.negative) return { relation: 'conflict', similarity: sim, polarity: true };
  if (atLeast(sim, threshold)) return { relation: 'near_duplicate', similarity: sim, polarity: false };
  if (isSubsetEitherWay(p.set, q.set)) return { relation: 'compatible', similarity: sim, polarity: false };
  return { relation: 'conflict', similarity: sim, polarity: false };
}

/** Round a similarity for output (4 decimals, never rounded up to a threshold). */
export function roundSimilarity(value) {
  return Math.floor(value * 10_000 + 1e-9) / 10_000;
}
