// The execution policy model the Security view edits: field-error paths,
// the mode texts, the "what changed" summary of a policy save, and the
// policy a draft submits. Pure; no DOM.

import type { Policy, PolicyMode, Scope } from '../api/types';

/** Normalizes an error path to dotted form without the root. Every
 * backend parser writes paths in one syntax (docs/formats/README.md): "$",
 * then ".name" (an identifier), "[3]" (an array index) or "[\"…\"]" (any
 * other name as a JSON string): "$.trusted[0].workspace" →
 * "trusted.0.workspace", "$" → "", "$[\"odd key\"]" → "odd key". A string
 * outside that syntax is returned as written, so it is never mistaken for a
 * field. */
export function normalizePath(path: string): string {
  if (!path.startsWith('$')) return path;
  const parts: string[] = [];
  const re = /\.([A-Za-z_][A-Za-z0-9_]*)|\[(0|[1-9][0-9]*)\]|\[("(?:[^"\\]|\\.)*")\]/y;
  let at = 1;
  while (at < path.length) {
    re.lastIndex = at;
    const m = re.exec(path);
    if (m === null) return path;
    if (m[3] !== undefined) {
      try {
        parts.push(JSON.parse(m[3]) as string);
      } catch {
        return path;
      }
    } else parts.push(m[1] ?? m[2]);
    at = re.lastIndex;
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

/** The ceilings' bounds, inclusive: a mirror of backend/policy (minTimeoutMs…
 * maxOutputBytes; TestFrontendMirrorsBounds keeps them equal). Used only to
 * hint while typing and to set the inputs' min/max; the server decides on
 * Save, and its answer (which carries the bounds) is what is shown. */
export const CEILING_BOUNDS = {
  timeoutMsCeiling: { min: 1000, max: 120000, unit: 'ms', label: 'Time ceiling' },
  maxOutputBytesCeiling: { min: 1, max: 262144, unit: 'bytes', label: 'Output ceiling' },
} as const;

export type CeilingField = keyof typeof CEILING_BOUNDS;

const SCOPE_FIELD_LABEL: Record<string, string> = {
  revision: 'Skill revision',
  agentId: 'Agent',
  workspace: 'Workspace',
  timeoutMsCeiling: CEILING_BOUNDS.timeoutMsCeiling.label,
  maxOutputBytesCeiling: CEILING_BOUNDS.maxOutputBytesCeiling.label,
  receiptId: 'Receipt',
  approvedAt: 'Approval time',
};

/** The human label of a policy error path:
 * "$.trusted[1].timeoutMsCeiling" → "Scope 2 · Time ceiling". A member the
 * form does not know is named as written. */
export function policyFieldLabel(path: string): string {
  const parts = normalizePath(path).split('.').filter((p) => p !== '');
  if (parts.length === 0) return 'Policy';
  if (parts[0] === 'mode') return 'Mode';
  if (parts[0] === 'safeMode') return 'Safe mode';
  if (parts[0] === 'trusted') {
    if (parts.length === 1) return 'Trusted revisions';
    const n = Number(parts[1]);
    const scope = Number.isInteger(n) ? `Scope ${n + 1}` : `Scope ${parts[1]}`;
    if (parts.length === 2) return scope;
    return `${scope} · ${SCOPE_FIELD_LABEL[parts[2]] ?? parts.slice(2).join('.')}`;
  }
  return parts.join('.');
}

const grouped = (n: number) => n.toLocaleString('en-US');

/** One server problem in words, with its field's label and, for a range,
 * the bound in the field's unit: "Scope 1 · Time ceiling: at least 1,000 ms".
 * The wording comes from the server's code, bounds and message; nothing is
 * decided here. */
export function describeProblem(p: { code: string; path: string; message: string; min?: number; max?: number }): { label: string; text: string } {
  const label = policyFieldLabel(p.path);
  const field = normalizePath(p.path).split('.').pop() ?? '';
  const unit = field in CEILING_BOUNDS ? CEILING_BOUNDS[field as CeilingField].unit : '';
  const u = unit ? ` ${unit}` : '';
  if (p.code === 'out_of_range' && p.min !== undefined && p.max !== undefined) {
    const low = /at least/.test(p.message);
    const high = /at most/.test(p.message);
    if (low) return { label, text: `at least ${grouped(p.min)}${u}` };
    if (high) return { label, text: `at most ${grouped(p.max)}${u}` };
    return { label, text: `${grouped(p.min)}–${grouped(p.max)}${u}` };
  }
  if (p.code === 'invalid_type' && unit) return { label, text: `a whole number of ${unit === 'ms' ? 'milliseconds' : 'bytes'}, ${grouped(CEILING_BOUNDS[field as CeilingField].min)}–${grouped(CEILING_BOUNDS[field as CeilingField].max)}${u}` };
  return { label, text: p.message };
}

/** A ceiling as typed, as the save sends it: a whole-number literal as a
 * number, anything else as the text itself, so the server reports it with
 * every other problem instead of the form stopping at it. */
export function ceilingValue(text: string): number | string {
  const t = text.trim();
  return /^-?\d+$/.test(t) && Number.isSafeInteger(Number(t)) ? Number(t) : t;
}

/** A hint while typing, mirroring the server's check of one ceiling (same
 * bounds, same order); null when the server would accept it. The server's
 * answer on Save replaces it. */
export function ceilingHint(field: CeilingField, text: string): string | null {
  const b = CEILING_BOUNDS[field];
  const v = ceilingValue(text);
  if (typeof v !== 'number') return `${b.label}: a whole number of ${b.unit === 'ms' ? 'milliseconds' : 'bytes'}`;
  if (v < b.min) return `${b.label}: at least ${grouped(b.min)} ${b.unit}`;
  if (v > b.max) return `${b.label}: at most ${grouped(b.max)} ${b.unit}`;
  return null;
}

/** A hint for a scope's revision, mirroring backend/policy's pattern
 * (sha256: and 64 lowercase hex digits); null when the server would accept it. */
export function revisionHint(text: string): string | null {
  if (text === '') return null; // nothing typed yet: the Save answer says it is required
  return /^sha256:[0-9a-f]{64}$/.test(text) ? null : 'Skill revision: sha256: followed by 64 lowercase hex digits';
}

/** A hint for a scope's workspace, mirroring backend/policy's check (an
 * absolute path equal to its filepath.Clean form: no empty, "." or ".."
 * segment, no trailing slash); null when the server would accept it. */
export function workspaceHint(text: string): string | null {
  if (text === '') return null;
  if (!text.startsWith('/')) return 'Workspace: an absolute path, starting with /';
  const clean = text === '/' || text.slice(1).split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..');
  return clean ? null : 'Workspace: a clean path (no //, /./, /../ or trailing /)';
}
