// The execution policy model the Security view edits: field-error paths,
// the mode texts, the "what changed" summary of a policy save, and the
// policy a draft submits. Pure; no DOM.

import type { Policy, PolicyMode, Scope } from '../api/types';

/** Normalizes an error path to dotted form without the root:
 * "$.trusted[0].workspace" → "trusted.0.workspace", "$" → "",
 * "$[\"odd key\"]" → "odd key", "/trusted/0" → "trusted.0". */
export function normalizePath(path: string): string {
  let p = path.trim();
  if (p.startsWith('/')) return p.slice(1).split('/').filter(Boolean).join('.');
  if (p.startsWith('$')) p = p.slice(1);
  const parts: string[] = [];
  const re = /\.([^.[\]]+)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]|^([^.[\]]+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(p)) !== null) {
    if (m[1] !== undefined) parts.push(m[1]);
    else if (m[2] !== undefined) parts.push(m[2]);
    else if (m[3] !== undefined) parts.push(JSON.parse(`"${m[3]}"`) as string);
    else if (m[4] !== undefined) parts.push(m[4]);
  }
  return parts.join('.');
}

/** Groups field errors by normalized path (several messages per field). */
export function groupErrors<T extends { message: string }>(details: T[], pathOf: (d: T) => string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const d of details) {
    const k = normalizePath(pathOf(d));
    const list = out.get(k) ?? [];
    list.push(d.message);
    out.set(k, list);
  }
  return out;
}

export const MODE_ORDER: PolicyMode[] = ['ask', 'trusted_revisions', 'workflow', 'blocked'];

export const MODES: Record<PolicyMode, { label: string; line: string }> = {
  ask: {
    label: 'Ask every time',
    line: 'Every script run needs your approval in the consent dialog, once, for that exact invocation.',
  },
  trusted_revisions: {
    label: 'Trusted revisions',
    line: 'Runs matching a trusted revision, agent and workspace within its limits go ahead without asking; anything else asks you.',
  },
  workflow: {
    label: 'Workflow plans',
    line: 'An agent must first get a short plan (up to 16 exact steps) approved; each approved step runs once, anything off-plan is refused.',
  },
  blocked: {
    label: 'Blocked',
    line: 'Every script run is refused. Agents can still read skill instructions.',
  },
};

export interface PolicyChange {
  lines: string[];
  issued: number;
  kept: number;
  removed: number;
  drafts: number;
}

/** What a successful SetPolicy changed, from the policy before and the one
 * the server returned. Receipts are compared by id: a scope whose receipt
 * id is new was issued one, ids present before and after were kept, ids
 * that disappeared were revoked. */
export function policyChanges(before: Policy, after: Policy): PolicyChange {
  const lines: string[] = [];
  if (before.mode !== after.mode) lines.push(`Mode changed from ${MODES[before.mode]?.label ?? before.mode} to ${MODES[after.mode]?.label ?? after.mode}.`);
  if (before.safeMode !== after.safeMode) lines.push(after.safeMode ? 'Safe mode turned on: every script is refused.' : 'Safe mode turned off.');
  const beforeIds = new Set(before.trusted.map((s) => s.receiptId).filter((x): x is string => !!x));
  const afterIds = new Set(after.trusted.map((s) => s.receiptId).filter((x): x is string => !!x));
  const issued = [...afterIds].filter((id) => !beforeIds.has(id)).length;
  const kept = [...afterIds].filter((id) => beforeIds.has(id)).length;
  const removed = [...beforeIds].filter((id) => !afterIds.has(id)).length;
  const drafts = after.trusted.filter((s) => !s.receiptId).length;
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  if (issued) lines.push(`${plural(issued, 'receipt', 'receipts')} issued.`);
  if (kept) lines.push(`${plural(kept, 'receipt', 'receipts')} kept.`);
  if (removed) lines.push(`${plural(removed, 'receipt', 'receipts')} revoked.`);
  if (drafts) lines.push(`${plural(drafts, 'scope is', 'scopes are')} saved as ${drafts === 1 ? 'a draft' : 'drafts'} (not in force outside Trusted revisions mode).`);
  const scopeDelta = after.trusted.length - before.trusted.length;
  if (scopeDelta > 0) lines.push(`${plural(scopeDelta, 'scope', 'scopes')} added.`);
  if (scopeDelta < 0) lines.push(`${plural(-scopeDelta, 'scope', 'scopes')} removed.`);
  if (lines.length === 0) lines.push('Saved; nothing changed.');
  return { lines, issued, kept, removed, drafts };
}

/** The policy to submit: the whole draft, with receipt fields as loaded
 * (the server ignores submitted receipts and mints its own). */
export function policyForSave(draft: Policy): Policy {
  return {
    mode: draft.mode,
    safeMode: draft.safeMode,
    trusted: draft.trusted.map((s) => ({
      revision: s.revision.trim(),
      agentId: s.agentId,
      workspace: s.workspace.trim(),
      timeoutMsCeiling: s.timeoutMsCeiling,
      maxOutputBytesCeiling: s.maxOutputBytesCeiling,
      receiptId: s.receiptId,
      approvedAt: s.approvedAt,
    })),
  };
}

/** True when a scope's binding differs from the saved one it started as. */
export function scopeEdited(a: Scope, b: Scope): boolean {
  return (
    a.revision !== b.revision ||
    a.agentId !== b.agentId ||
    a.workspace !== b.workspace ||
    a.timeoutMsCeiling !== b.timeoutMsCeiling ||
    a.maxOutputBytesCeiling !== b.maxOutputBytesCeiling
  );
}

/** Lines of a textarea → a list (trimmed, blank lines dropped). */
export function linesToList(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}
