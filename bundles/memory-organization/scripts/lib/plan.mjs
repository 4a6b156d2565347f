// The planning algorithm. Pure: takes validated facts, returns a plan object.
// Nothing here changes, deletes or merges anything; every entry is a proposal.
// See references/REFERENCE.md for the rules in prose.

import { Buffer } from 'node:buffer';

import { normalizeContent, normalizeKey, tokenize } from './normalize.mjs';
import { profile, relate, roundSimilarity } from './similarity.mjs';

/** Code-unit string order: deterministic and locale independent. */
export function byString(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Keep order: highest confidence, then newest observed_at, then smallest id. */
export function byKeepRank(a, b) {
  if (a.confidence !== b.confidence) return b.confidence - a.confidence;
  if (a.observedNs !== b.observedNs) return a.observedNs > b.observedNs ? -1 : 1;
  return byString(a.id, b.id);
}

/** Explain which rule made `keep` win over `others` (all already rank-sorted). */
export function explainKeep(keep, others) {
  const maxConfidence = Math.max(...others.map((f) => f.confidence));
  if (keep.confidence > maxConfidence) return `the highest confidence (${keep.confidence})`;
  const tied = others.filter((f) => f.confidence === keep.confidence);
  if (tied.every((f) => keep.observedNs > f.observedNs)) {
    return `equal confidence (${keep.confidence}) and the newest observed_at (${keep.observed_at})`;
  }
  return 'equal confidence and observed_at, and the smallest id';
}

function groupBy(items, keyOf) {
  const groups = new Map();
  for (const item of items) {
    const key = keyOf(item);
    const list = groups.get(key);
    if (list) list.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

const sortedIds = (facts) => facts.map((f) => f.id).sort(byString);

/**
 * Build the plan.
 * @param facts validated facts ({id, kind, subject, content, confidence,
 *        observed_at, observedNs, expires_at, expiresNs})
 * @param nowNs BigInt nanoseconds since the epoch
 * @param threshold near-duplicate Jaccard threshold (0.5..1)
 */
export function buildPlan(facts, nowNs, threshold) {
  // 1. Expired: expires_at <= now. Expired facts take part in nothing else.
  const expired = [];
  const live = [];
  for (const fact of facts) {
    if (fact.expiresNs !== null && fact.expiresNs <= nowNs) {
      expired.push({ id: fact.id, expired_at: fact.expires_at, action: 'delete' });
    } else {
      const normalized = normalizeContent(fact.content);
      live.push({
        ...fact,
        normalized,
        profile: profile(tokenize(normalized)),
        groupKey: `${normalizeKey(fact.kind)}\u0000${normalizeKey(fact.subject)}`,
      });
    }
  }
  expired.sort((a, b) => byString(a.id, b.id));

  // 2. Exact duplicates: same kind + subject + normalized content.
  const exactDuplicates = [];
  const removed = new Set();
  for (const group of groupBy(live, (f) => `${f.groupKey}\u0000${f.normalized}`).values()) {
    if (group.length < 2) continue;
    group.sort(byKeepRank);
    const [keep, ...rest] = group;
    for (const f of rest) removed.add(f.id);
    exactDuplicates.push({
      keep: keep.id,
      remove: sortedIds(rest),
      reason: `same kind, subject and normalized content; kept fact has ${explainKeep(keep, rest)}`,
    });
  }
  exactDuplicates.sort((a, b) => byString(a.keep, b.keep));

  // 3. Near duplicates and 4. conflicts, per kind + subject, over active facts.
  const nearDuplicates = [];
  const conflicts = [];
  const active = live.filter((f) => !removed.has(f.id));
  for (const group of groupBy(active, (f) => f.groupKey).values()) {
    group.sort(byKeepRank);

    // Leader clustering: walk facts in keep order; a fact joins the cluster
    // whose leader it is most similar to (earliest cluster on ties) when that
    // leader is a near duplicate, otherwise it leads a new cluster.
    const clusters = [];
    for (const fact of group) {
      let best = null;
      for (const cluster of clusters) {
        const r = relate(cluster.leader.profile, fact.profile, threshold);
        if (r.relation !== 'near_duplicate') continue;
        if (best === null || r.similarity.value > best.similarity) {
          best = { cluster, similarity: r.similarity.value };
        }
      }
      if (best) {
        best.cluster.members.push(fact);
        best.cluster.minSimilarity = Math.min(best.cluster.minSimilarity, best.similarity);
      } else {
        clusters.push({ leader: fact, members: [fact], minSimilarity: 1 });
      }
    }
    for (const cluster of clusters) {
      if (cluster.members.length < 2) continue;
      nearDuplicates.push({
        ids: sortedIds(cluster.members),
        similarity: roundSimilarity(cluster.minSimilarity),
        suggestion: 'merge',
        keep: cluster.leader.id,
      });
    }

    // Leaders are the distinct claims about this kind + subject. Any pair of
    // leaders that "conflict" (see similarity.mjs relate) puts both in the set.
    const leaders = clusters.map((c) => c.leader);
    const involved = new Set();
    let negation = false;
    for (let i = 0; i < leaders.length; i += 1) {
      for (let j = i + 1; j < leaders.length; j += 1) {
        const r = relate(leaders[i].profile, leaders[j].profile, threshold);
        if (r.relation !== 'conflict') continue;
        involved.add(leaders[i]);
        involved.add(leaders[j]);
        if (r.polarity) negation = true;
      }
    }
    if (involved.size >= 2) {
      const parties = leaders.filter((f) => involved.has(f)); // still in keep order
      const [keep, ...rest] = parties;
      const why = negation ? ' (one negates another)' : '';
      conflicts.push({
        subject: keep.subject,
        kind: keep.kind,
        ids: sortedIds(parties),
        keep: keep.id,
        reason: `${parties.length} active facts make different claims${why}; kept fact has ${explainKeep(keep, rest)}`,
      });
    }
  }
  nearDuplicates.sort((a, b) => byString(a.ids[0], b.ids[0]));
  conflicts.sort((a, b) => byString(a.ids[0], b.ids[0]));

  const duplicates = exactDuplicates.reduce((n, d) => n + d.remove.length, 0);
  return {
    expired,
    exact_duplicates: exactDuplicates,
    near_duplicates: nearDuplicates,
    conflicts,
    summary: {
      total: facts.length,
      expired: expired.length,
      duplicates,
      near_duplicates: nearDuplicates.length,
      conflicts: conflicts.length,
      kept: facts.length - expired.length - duplicates,
      truncated: false,
    },
  };
}

/**
 * Make the serialized result fit in `budget` UTF-8 bytes by dropping entries
 * from the end of the largest list (lists stay sorted; summary counts keep
 * describing the full plan and summary.truncated becomes true).
 */
export function fitPlan(plan, budget) {
  const wrap = () => JSON.stringify({ ok: true, plan });
  let size = Buffer.byteLength(wrap());
  if (size <= budget) return plan;
  plan.summary.truncated = true;
  const lists = ['expired', 'exact_duplicates', 'near_duplicates', 'conflicts'];
  const sizes = Object.fromEntries(lists.map((k) => [k, plan[k].map((e) => Buffer.byteLength(JSON.stringify(e)) + 1)]));
  const totals = Object.fromEntries(lists.map((k) => [k, sizes[k].reduce((a, b) => a + b, 0)]));
  size = Buffer.byteLength(wrap());
  while (size > budget) {
    const largest = lists.reduce((a, b) => (totals[b] > totals[a] ? b : a));
    if (plan[largest].length === 0) break;
    plan[largest].pop();
    const dropped = sizes[largest].pop();
    totals[largest] -= dropped;
    size -= dropped;
    if (size <= budget) size = Buffer.byteLength(wrap()); // confirm exactly
  }
  return plan;
}
